import { createHash } from 'node:crypto';
import type { DuoAccess } from '../auth/duo-access';

/** What `POST /api/v4/code_suggestions/connection_details` (GitLab 18.3+) tells IDEs for their telemetry. */
export type ConnectionDetails = {
  instance_id: string;
  instance_version: string;
  realm: 'self-managed';
  global_user_id: string;
  host_name: string;
  feature_enablement_type: string;
  saas_duo_pro_namespace_ids: number[];
};

export type ConnectionDetailsOptions = {
  userId: number;
  access: DuoAccess;
  /** The instance's public URL: its host is the host name, and the instance id is derived from it. */
  externalUrl: string;
  version: string;
};

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The instance id is a UUID derived from the public URL (stable across restarts, no stored state);
 * the user id is hashed with it, as GitLab's global user id is, so telemetry never sees the
 * plain id. Self-managed: no SaaS namespaces.
 */
export function connectionDetails(options: ConnectionDetailsOptions): ConnectionDetails {
  const hex = sha256(`duo-slice-instance:${options.externalUrl}`).toString('hex');
  const instanceId =
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}` +
    `${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  return {
    instance_id: instanceId,
    instance_version: options.version,
    realm: 'self-managed',
    global_user_id: sha256(`${instanceId}${options.userId}`).toString('base64'),
    host_name: new URL(options.externalUrl).hostname,
    // The add-on that enables code suggestions, the richer one first.
    feature_enablement_type: options.access.addOns.includes('duo_enterprise') ? 'duo_enterprise' : (options.access.addOns[0] ?? 'duo_pro'),
    saas_duo_pro_namespace_ids: [],
  };
}

/**
 * GitLab's response schemas (test/fixtures/gitlab-schemas, see its README) compiled with ajv, for the
 * GitLab stand-in to check each answer before it sends it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

const SCHEMA_DIR = path.join(__dirname, '..', 'fixtures', 'gitlab-schemas');
const BASE = 'https://gitlab-schemas.test/';

/** The schemas an answer is checked with, by their path under test/fixtures/gitlab-schemas. */
export type GitLabSchemaName =
  | 'duo-slice/user.json'
  | 'duo-slice/project.json'
  | 'duo-slice/projects.json'
  | 'duo-slice/member.json'
  | 'duo-slice/personal-access-token-self.json'
  | 'duo-slice/oauth-token-info.json'
  | 'duo-slice/error.json'
  | 'duo-slice/graphql-response.json'
  | 'duo-slice/oauth-token.json'
  | 'public_api/v4/members.json'
  | 'public_api/v4/projects.json'
  | 'public_api/v4/project_hook.json'
  | 'public_api/v4/project_hooks.json'
  | 'public_api/v4/merge_requests.json'
  | 'public_api/v4/pipelines.json'
  | 'public_api/v4/metadata.json';

export class GitLabSchemaViolation extends Error {
  constructor(
    readonly schema: string,
    readonly problems: string[],
  ) {
    super(`answer does not match ${schema}: ${problems.join('; ')}`);
    this.name = 'GitLabSchemaViolation';
  }
}

function schemaFiles(directory: string, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? schemaFiles(path.join(directory, entry.name), `${prefix}${entry.name}/`)
      : entry.name.endsWith('.json')
        ? [`${prefix}${entry.name}`]
        : [],
  );
}

/**
 * GitLab's older schemas name `date` and `uri` as types (a timestamp string, a URL string; GitLab's Ruby
 * matcher let them through) and once write `"string "`: read as JSON Schema means, on a copy, never in the files.
 */
function asJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) result[key] = asJsonSchema(value);
  if (typeof result.type === 'string' || Array.isArray(result.type)) {
    const types = (Array.isArray(result.type) ? result.type : [result.type]).map((type: string) => type.trim());
    const format = types.includes('date') ? 'date-time' : types.includes('uri') ? 'uri' : null;
    if (format) {
      result.type = [...new Set(types.map((type) => (type === 'date' || type === 'uri' ? 'string' : type)))];
      result.format = format;
    } else {
      result.type = Array.isArray(result.type) ? types : types[0];
    }
  }
  return result;
}

let compiled: Ajv | null = null;

function ajv(): Ajv {
  if (compiled) return compiled;
  // strict: false because GitLab's schemas carry keywords of their own (`optional`).
  const instance = new Ajv({ strict: false, allErrors: true });
  addFormats(instance);
  for (const file of schemaFiles(SCHEMA_DIR)) {
    const schema = asJsonSchema(JSON.parse(readFileSync(path.join(SCHEMA_DIR, file), 'utf8'))) as Record<string, unknown>;
    instance.addSchema({ ...schema, $id: BASE + file });
  }
  compiled = instance;
  return instance;
}

const validators = new Map<string, ValidateFunction>();

/** Throws GitLabSchemaViolation when `body` is not what the schema describes. */
export function assertMatchesGitLabSchema(schema: GitLabSchemaName, body: unknown): void {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv().getSchema(BASE + schema);
    if (!validate) throw new Error(`no schema ${schema} under test/fixtures/gitlab-schemas`);
    validators.set(schema, validate);
  }
  if (!validate(body)) {
    throw new GitLabSchemaViolation(
      schema,
      (validate.errors ?? []).map((error) => `${error.instancePath || '(body)'} ${error.message ?? 'is invalid'}`),
    );
  }
}

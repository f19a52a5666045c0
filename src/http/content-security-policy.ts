import type { Request } from 'express';

/** A Host header that is a host name or an IP literal with an optional port, nothing else. */
const PLAIN_HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The WebSocket sources a page of this instance may connect to: its own host (as the browser reached
 * it, and EXTERNAL_URL's), with ws: and wss: (TLS may end at a proxy in front). `ws: wss:` alone would
 * let a script on the page open a socket to any host; older browsers do not count ws: as 'self'.
 * A Host header that is not a plain host (it goes into a header) names nothing.
 */
export function webSocketSources(request: Request, externalUrl: string | undefined): string {
  const hosts = new Set<string>();
  const host = request.get('host');
  if (host && PLAIN_HOST.test(host)) hosts.add(host.toLowerCase());
  if (externalUrl) hosts.add(new URL(externalUrl).host.toLowerCase());
  return [...hosts].flatMap((each) => [`ws://${each}`, `wss://${each}`]).join(' ');
}

import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/** Which proxies' X-Forwarded-For is believed: a reverse proxy on the same host (Express' `trust proxy`). */
export const TRUSTED_PROXIES = 'loopback';

const trusted = proxyaddr.compile(TRUSTED_PROXIES);

/**
 * The client's address as Express' `request.ip` gives it, for the requests Express does not route
 * (WebSocket upgrades): behind a local reverse proxy the sockets' rate budgets and subscription
 * slots are then per client, as HTTP's are, not one for everyone behind the proxy.
 */
export function clientAddress(request: IncomingMessage): string | undefined {
  return request.socket.remoteAddress === undefined ? undefined : proxyaddr(request, trusted);
}

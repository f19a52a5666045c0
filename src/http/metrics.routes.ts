import { BlockList, isIP } from 'node:net';
import { Router } from 'express';
import { scrapeMetrics } from '../metrics/collect-instance';
import type { Services } from '../services';
import { sendError } from './http-errors';
import { GITLAB_VERSION } from '../instance';

/** The addresses allowed to scrape, from METRICS_ALLOWED_CIDRS. */
export function allowList(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [address = '', bits] = range.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/**
 * GET /-/metrics in Prometheus' text format, like GitLab's: only for addresses in
 * METRICS_ALLOWED_CIDRS (loopback by default); everyone else gets the same 404 as a missing page.
 * The client address is Express's `request.ip`: behind a proxy on loopback, the forwarded one.
 */
export function metricsRoutes(services: Services): Router {
  const router = Router();
  const allowed = allowList(services.config.metrics.allowedCidrs);
  router.get('/metrics', async (request, response, next) => {
    const address = request.ip ?? '';
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (!isIP(address) || !allowed.check(address, family)) {
      services.logger.info({ event: 'metrics_refused', remoteAddress: address }, 'metrics scrape refused');
      return sendError(request, response, 404, '404 Not Found');
    }
    try {
      const scrape = await scrapeMetrics({ services, version: GITLAB_VERSION });
      response.setHeader('Content-Type', scrape.contentType);
      response.setHeader('Cache-Control', 'no-store');
      response.send(scrape.body);
    } catch (error) {
      next(error);
    }
  });
  return router;
}

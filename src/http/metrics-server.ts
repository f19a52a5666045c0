import { createServer } from 'node:http';
import { TRUSTED_PROXIES } from './client-address';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Services } from '../services';
import { errorHandler } from './http-errors';
import { metricsRoutes } from './metrics.routes';
import { requestIdMiddleware } from './request-id.middleware';

export type MetricsServer = { url: string; close(): Promise<void> };

/**
 * A port of its own for `/-/metrics` and `/-/liveness` in a worker-only process (like GitLab's
 * Sidekiq exporter), whose chat, model, queue and indexing figures the API process never sees.
 */
export async function startMetricsServer(services: Services, options: { host: string; port: number }): Promise<MetricsServer> {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', TRUSTED_PROXIES);
  app.use(requestIdMiddleware());
  app.get('/-/liveness', (_request, response) => {
    response.json({ status: 'ok' });
  });
  app.use('/-', metricsRoutes(services));
  app.use((_request, response) => {
    response.status(404).json({ message: '404 Not Found' });
  });
  app.use(errorHandler(services.logger));
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

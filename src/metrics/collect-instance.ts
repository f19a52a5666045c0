import type { Services } from '../services';
import { countIndexesByState, readQueues } from './instance-status';
import { collectDatabasePools } from './database-pool';
import { collectSocketConnections } from './record';
import { metrics, registry } from './registry';

export type ScrapeOptions = {
  services: Pick<Services, 'prisma' | 'queues' | 'revision' | 'embedder' | 'config' | 'logger'>;
  /** The GitLab version the instance reports. */
  version: string;
};

/**
 * One scrape: reads what belongs to the whole instance (queue depths, workers, index states) from
 * Redis and the database at this moment, then renders this process's registry. A dependency
 * that does not answer leaves its gauges out of this scrape and counts a scrape error.
 */
export async function scrapeMetrics(options: ScrapeOptions): Promise<{ contentType: string; body: string }> {
  const { services } = options;
  metrics.buildInfo.reset();
  metrics.buildInfo.set({ version: options.version, revision: services.revision }, 1);
  metrics.embedderInfo.reset();
  metrics.embedderInfo.set({ provider: services.config.embeddings.provider, version: services.embedder.version }, 1);
  metrics.rerankerInfo.reset();
  metrics.rerankerInfo.set({ provider: services.config.rerank.provider, model: services.config.rerank.model ?? 'none' }, 1);
  metrics.llmInfo.reset();
  metrics.llmInfo.set({ provider: services.config.llm.provider, model: services.config.llm.model ?? 'none' }, 1);
  collectSocketConnections();
  collectDatabasePools();

  const { maintenance, chat, indexing } = services.queues;
  const [queues, indexes] = await Promise.allSettled([readQueues([maintenance, chat, indexing]), countIndexesByState(services.prisma)]);
  metrics.queueJobs.reset();
  metrics.queueWorkers.reset();
  if (queues.status === 'fulfilled') {
    for (const queue of queues.value) {
      for (const [state, count] of Object.entries(queue.jobs)) metrics.queueJobs.set({ queue: queue.name, state }, count);
      metrics.queueWorkers.set({ queue: queue.name }, queue.workers);
    }
  } else {
    metrics.scrapeErrors.inc({ source: 'redis' });
    services.logger.warn({ event: 'metrics_scrape_failed', source: 'redis', err: queues.reason }, 'metrics: queues could not be read');
  }
  metrics.codeIndexes.reset();
  if (indexes.status === 'fulfilled') {
    for (const [state, count] of Object.entries(indexes.value)) metrics.codeIndexes.set({ state }, count);
  } else {
    metrics.scrapeErrors.inc({ source: 'database' });
    services.logger.warn(
      { event: 'metrics_scrape_failed', source: 'database', err: indexes.reason },
      'metrics: code indexes could not be read',
    );
  }
  return { contentType: registry.contentType, body: await registry.metrics() };
}

import { AppError } from '../errors';
import { GITLAB_VERSION } from '../instance';
import { readInstanceSummary, type InstanceSummary } from '../metrics/instance-status';
import { createQueues } from '../queues';
import { Redis } from 'ioredis';
import { readRevision } from '../revision';
import type { CommandContext } from './run-command';

/** A command may be the first to use the database client in its process, which takes a moment on a busy machine. */
const STATUS_TIMEOUT_MS = 10_000;

const row = (name: string, value: string) => `${name.padEnd(11)}${value}`;

/** The summary as a few lines for a terminal. */
export function formatSummary(summary: InstanceSummary): string {
  const check = (result: { status: string; message?: string }) =>
    result.status === 'ok' ? 'ok' : `FAILED: ${result.message ?? 'no answer'}`;
  const lines = [
    `duo-slice ${summary.version} (revision ${summary.revision})`,
    row('database', `${check(summary.database)} (${summary.database.kind})`),
    row('redis', check(summary.redis)),
  ];
  if (summary.queues.length === 0) lines.push(row('queues', 'could not be read'));
  summary.queues.forEach((queue, index) => {
    const { waiting, active, delayed, failed } = queue.jobs;
    const workers = queue.workers === 0 ? 'NO WORKERS' : `${queue.workers} worker${queue.workers === 1 ? '' : 's'}`;
    lines.push(
      row(
        index === 0 ? 'queues' : '',
        `${queue.name.padEnd(12)} ${waiting} waiting, ${active} active, ${delayed} delayed, ${failed} failed; ${workers}`,
      ),
    );
  });
  lines.push(
    row(
      'indexes',
      summary.indexes
        ? Object.entries(summary.indexes)
            .map(([state, count]) => `${state} ${count}`)
            .join(', ')
        : 'could not be read',
    ),
  );
  lines.push(
    row('model', summary.model.provider === 'none' ? 'none configured (LLM_PROVIDER)' : `${summary.model.provider} ${summary.model.model}`),
  );
  lines.push(row('embedder', [summary.embedder.provider, summary.embedder.model].filter(Boolean).join(' ')));
  lines.push(
    row(
      'reranker',
      summary.reranker.provider === 'none'
        ? 'none configured (RERANK_PROVIDER)'
        : [summary.reranker.provider, summary.reranker.model].filter(Boolean).join(' '),
    ),
  );
  const saved = summary.gatekeeper.llmCallsSaved === null ? 'unknown' : String(summary.gatekeeper.llmCallsSaved);
  lines.push(row('gatekeeper', `${summary.gatekeeper.enabled ? 'on' : 'off'}; model calls saved: ${saved}`));
  return lines.join('\n');
}

/**
 * `npm run admin -- status`: the instance at a glance for people without Prometheus. Prints lines
 * (or one JSON line with --json); exits non-zero when Redis or the database does not answer.
 */
export async function instanceStatus(context: CommandContext, options: { json: boolean }): Promise<void> {
  const { config, database, logger } = context;
  // One attempt, no reconnecting: a Redis that does not answer is reported once, not logged on every retry.
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: STATUS_TIMEOUT_MS,
    lazyConnect: true,
  });
  redis.on('error', () => undefined);
  await redis.connect().catch(() => undefined);
  // BullMQ waits for a connection for ever: without one, the queues are not asked at all.
  const queues =
    redis.status === 'ready'
      ? createQueues({ connection: redis, prefix: config.redisPrefix, logger: logger.child({}, { level: 'silent' }) })
      : null;
  try {
    const summary = await readInstanceSummary({
      prisma: database.prisma,
      databaseKind: database.kind,
      redis,
      queues: queues ? [queues.maintenance, queues.chat, queues.indexing] : [],
      config,
      version: GITLAB_VERSION,
      revision: readRevision(),
      timeoutMs: STATUS_TIMEOUT_MS,
    });
    process.stdout.write(`${options.json ? JSON.stringify(summary) : formatSummary(summary)}\n`);
    const failed = [summary.database, summary.redis].some((check) => check.status !== 'ok');
    if (failed) throw new AppError({ code: 'INTERNAL', userMessage: 'a dependency did not answer (see above)' });
  } finally {
    await queues?.close().catch(() => undefined);
    redis.disconnect();
  }
}

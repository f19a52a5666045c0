import { configureLexicalCache } from './search/lexical-search';
import { KeywordIndexWarmUp } from './search/keyword-warm-up';
import { createAiActionLimiter, createCodeSuggestionsLimiter } from './auth/rate-limits';
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChatEventBus } from './chat/chat-events';
import { EventBus } from './events/event-bus';
import type { Config } from './config';
import { openDatabase, type Database } from './db/database';
import { seedDemo, type DemoSeed } from './demo/seed-demo';
import { createHttpApp } from './http/app';
import { createActionCableServer, type ActionCableServer } from './http/action-cable';
import { authenticateToken } from './auth/authenticate';
import { configureAuthCache } from './auth/auth-cache';
import { connectGitLab } from './gitlab/gitlab-connection';
import { tokenFromHeaders } from './auth/tokens';
import { createGraphQLContext } from './graphql/context';
import { depthLimitRule } from './graphql/depth-limit';
import { noMutationsRule } from './graphql/no-mutations';
import { formatError } from './graphql/plugins';
import { createGraphQLWsServer, type GraphQLWsServer } from './http/graphql-ws';
import { startMetricsServer, type MetricsServer } from './http/metrics-server';
import { createSocketGuard } from './http/socket-guard';
import { guardOperation } from './graphql/operation-guard';
import type { Viewer } from './auth/viewer';
import { GRAPHQL_PATH } from './http/http-errors';
import { isAppError } from './errors';
import { clientAddress } from './http/client-address';
import { buildGraphQLSchema } from './resolvers/schema';
import { createLlmProvider } from './llm/create-provider';
import { databaseAvailability, instrumentProvider, redisAvailability } from './metrics/record';
import { createEmbedder } from './llm/embedders/create-embedder';
import { createReranking } from './llm/rerankers/create-reranker';
import { CHUNKER_VERSION } from './indexing/chunk';
import { reindexStale } from './indexing/code-index.service';
import { ChunkPool, inProcessChunker } from './indexing/chunk-pool';
import { monitorEventLoop } from './event-loop-monitor';
import { SuggestionSessions } from './suggestions/sessions/sessions.service';
import { IntentThread } from './suggestions/intent-thread';
import { createPromptChecker } from './chat/prompt-checker';
import type { Logger } from './logger';
import { createQueues, scheduleMaintenance, type Queues } from './queues';
import { connectRedis, ensureRedis, REQUEST_REDIS_OPTIONS, type RedisSupervisor } from './redis';
import { readRevision } from './revision';
import { claimRedisPrefix, databaseIdentity, type PrefixClaim } from './redis-prefix-claim';
import type { Services } from './services';
import { startWorkers, type Workers } from './workers/start-workers';
import { observeDatabasePool } from './metrics/database-pool';

export type Role = 'all' | 'api' | 'worker';

/** Where GitLab's IDE clients open their ActionCable connection. */
export const CABLE_PATH = '/-/cable';

export type StartServiceOptions = {
  config: Config;
  logger: Logger;
  /** Which parts run in this process. Default: all. */
  role?: Role;
  /** Called when the service cannot go on (the embedded database's thread died); the error is logged already. */
  onFatal?: (error: Error) => void;
};

export type RunningService = {
  services: Services;
  database: Database;
  /** The API's base URL (http://host:port), when the API runs here. */
  url: string | null;
  /** The worker-only process's metrics URL (WORKER_METRICS_PORT), else null. */
  metricsUrl: string | null;
  /** Set when this start created the demo data on an empty embedded database. */
  demo: DemoSeed | null;
  /** Stops taking work, closes workers, drains HTTP, then closes the database and Redis. Safe to call twice. */
  close(): Promise<void>;
};

/** The composition root: connects Redis and the database, migrates, then starts the API and/or workers. */
export async function startService(options: StartServiceOptions): Promise<RunningService> {
  const { config, logger } = options;
  const role = options.role ?? 'all';
  // First, so a model directory that cannot be loaded stops the start before anything is opened.
  const embedder = await createEmbedder(config.embeddings);
  const redisSupervisor: RedisSupervisor = await ensureRedis({ url: config.redisUrl, dataDir: config.dataDir, logger });
  // Two connections: one whose commands wait for Redis however long (BullMQ's workers, whose blocking commands need
  // that, and the prefix claim), and the request path's, whose commands fail fast while Redis is down.
  const redis = connectRedis(config.redisUrl, logger, { maxRetriesPerRequest: null });
  const requestRedis = connectRedis(config.redisUrl, logger, { ...REQUEST_REDIS_OPTIONS, failFast: redisAvailability });
  redisAvailability.onChange(true);
  databaseAvailability.onChange(true);
  let database: Database | undefined;
  let prefixClaim: PrefixClaim;
  try {
    database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      logger,
      embeddedRole: 'owner',
      embeddedSharedBuffersMb: config.pgliteSharedBuffersMb,
      // Requests' statements; jobs (database.jobPrisma) have a pool of their own with a longer limit.
      // A worker process serves no requests: one pool, with the jobs' limit.
      requestTimeoutMs: role === 'worker' ? config.databaseJobTimeoutMs : config.databaseRequestTimeoutMs,
      jobTimeoutMs: role === 'api' ? undefined : config.databaseJobTimeoutMs,
      // PostgreSQL's; the embedded database is one session, whose pool keeps its own size.
      poolSize: config.databaseUrl ? config.databasePoolSize : undefined,
      onPool: observeDatabasePool,
      failFast: databaseAvailability,
      onFailure: options.onFatal,
    });
    const migrations = await database.migrate();
    logger.info({ event: 'migrations_checked', applied: migrations.applied, skipped: migrations.skipped.length }, 'database ready');
    // Before any queue or worker touches Redis: another database behind this prefix stops the start.
    prefixClaim = await claimRedisPrefix({
      redis,
      prefix: config.redisPrefix,
      databaseId: await databaseIdentity(database.prisma),
      logger,
    });
  } catch (error) {
    await database?.close();
    redis.disconnect();
    requestRedis.disconnect();
    await redisSupervisor.stop();
    throw error;
  }

  configureAuthCache(database.prisma, { ttlMs: config.authCacheMs });
  if (config.gitlab) {
    // Connected mode: identities, projects and access levels from GitLab, for requests and jobs alike.
    for (const prisma of new Set([database.prisma, database.jobPrisma]))
      connectGitLab(prisma, { config: config.gitlab, logger, cacheMs: config.authCacheMs });
    logger.info({ event: 'gitlab_connected', gitlabUrl: config.gitlab.url }, 'identities, projects and permissions come from GitLab');
  }
  configureLexicalCache(config.searchIndexCacheMb * 1024 * 1024);
  const queues: Queues = createQueues({ connection: requestRedis, prefix: config.redisPrefix, logger });
  const events = new EventBus({
    redis: requestRedis,
    createSubscriber: () => connectRedis(config.redisUrl, logger, { maxRetriesPerRequest: null }),
    logger,
  });
  const chatEvents = new ChatEventBus({ events, prefix: config.redisPrefix });
  const llm = instrumentProvider(createLlmProvider(config.llm));
  const intent = new IntentThread({ timeoutMs: config.intentTimeoutMs, logger });
  const codeSuggestionsLimiter = createCodeSuggestionsLimiter({
    redis: requestRedis,
    keyPrefix: config.redisPrefix,
    points: config.codeSuggestionsRateLimitPerMinute,
    logger,
  });
  const suggestionSessions = new SuggestionSessions({
    prisma: database.prisma,
    budget: codeSuggestionsLimiter,
    events,
    prefix: config.redisPrefix,
    llm,
    maxRetries: config.llm.maxRetries,
    detect: (input, userId) => intent.detect(input, userId),
    logger,
  });
  const chunkPool = role !== 'api' && config.indexing.threads > 0 ? new ChunkPool({ threads: config.indexing.threads, logger }) : null;
  const eventLoop = monitorEventLoop({ logger, warnMs: config.eventLoopWarnMs });
  const services: Services = {
    config,
    prisma: database.prisma,
    redis: requestRedis,
    logger,
    revision: readRevision(),
    externalUrl: config.externalUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
    queues,
    events,
    chatEvents,
    llm,
    embedder,
    reranking: createReranking(config.rerank, logger),
    chunker: chunkPool ?? inProcessChunker,
    gatekeeper: config.gatekeeper.enabled ? createPromptChecker(config) : null,
    aiActionLimiter: createAiActionLimiter({
      redis: requestRedis,
      keyPrefix: config.redisPrefix,
      points: config.aiActionRateLimit,
      logger,
    }),
    codeSuggestionsLimiter,
    intent,
    suggestionSessions,
  };
  let demo: DemoSeed | null = null;
  // Connected to GitLab, users and projects are GitLab's: no demo ones beside them.
  if (config.demoSeed && !config.gitlab && database.kind === 'embedded' && (await database.prisma.user.count()) === 0) {
    demo = await seedDemo(database.prisma);
  }

  let server: Server | null = null;
  let url: string | null = null;
  let workers: Workers | null = null;
  let stopHttp: (() => Promise<void>) | null = null;
  let sockets: GraphQLWsServer | null = null;
  let cable: ActionCableServer | null = null;
  let metricsServer: MetricsServer | null = null;
  if (role !== 'worker') {
    server = createServer();
    // Longer than clients' idle keep-alive (undici: 4 s, browsers more), so the server never closes a
    // connection just as a client sends on it (ECONNRESET), however late a busy event loop runs timers.
    server.keepAliveTimeout = 65_000;
    const { app, apollo } = await createHttpApp(services, server);
    server.on('request', app);
    const socketGuard = createSocketGuard(services);
    const schema = buildGraphQLSchema();
    sockets = createGraphQLWsServer(services, schema, socketGuard);
    const graphqlWs = sockets.wss;
    const actionCable = createActionCableServer<Viewer>({
      schema,
      // GitLab's cable connection belongs to the bearer token's user; without one it is rejected.
      authenticate: async (request) => {
        const token = tokenFromHeaders(request.headers);
        if (!token) return null;
        return authenticateToken(services.prisma, token).catch(async (error: unknown) => {
          // A wrong token spends its address's anonymous budget, as on HTTP (the cable has no 429: it stays unauthorized).
          if (isAppError(error) && error.code === 'UNAUTHENTICATED') await socketGuard.admit(null, clientAddress(request));
          throw error;
        });
      },
      createContext: (viewer) => createGraphQLContext(services, viewer, crypto.randomUUID()),
      logger,
      formatError,
      validationRules: [depthLimitRule(config.graphqlMaxDepth), noMutationsRule],
      maxMessageBytes: socketGuard.maxMessageBytes,
      maxTokens: socketGuard.maxTokens,
      // Every operation: the token still holds, the rate budget, the subscription slots, the same limits as HTTP.
      guard: {
        reauthIntervalMs: socketGuard.reauthIntervalMs,
        reauthenticate: async (_viewer, request) => {
          const token = tokenFromHeaders(request.headers);
          return token ? socketGuard.reauthenticate(token) : null;
        },
        admit: (viewer, request) => socketGuard.admit(viewer, clientAddress(request)),
        acquireSlot: (viewer, request) => socketGuard.acquireSlot(viewer, clientAddress(request)),
        releaseSlot: (slot) => socketGuard.releaseSlot(slot),
        checkOperation: (viewer, operation) => guardOperation({ schema, ...operation, viewer, limits: socketGuard.limits }),
      },
    });
    cable = actionCable;
    server.on('upgrade', (request, socket, head) => {
      const path = (request.url ?? '').split('?')[0];
      if (path === GRAPHQL_PATH) {
        graphqlWs.handleUpgrade(request, socket, head, (client) => graphqlWs.emit('connection', client, request));
        return;
      }
      if (path === CABLE_PATH) {
        actionCable.handleUpgrade(request, socket, head);
        return;
      }
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new Error(`${config.host}:${config.port} is already in use: stop what listens there, or set PORT (PORT=0 takes a free port)`)
            : error,
        ),
      );
      server!.listen(config.port, config.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${address.port}`;
    if (!config.externalUrl) services.externalUrl = url;
    stopHttp = () => apollo.stop();
    logger.info({ event: 'http_listening', url }, `listening on ${url}`);
  }
  // Processes that serve searches build a new snapshot's keyword index before its first question.
  let warmUp: KeywordIndexWarmUp | null = null;
  if (role !== 'worker' && config.searchIndexCacheMb > 0) {
    warmUp = new KeywordIndexWarmUp({ prisma: database.prisma, events, prefix: config.redisPrefix, logger });
    await warmUp.start();
  }
  if (role !== 'api') {
    await scheduleMaintenance(queues);
    // The jobs' pool: its statements may take up to DATABASE_JOB_TIMEOUT_MS.
    workers = await startWorkers({ ...services, prisma: database.jobPrisma }, redis);
    logger.info({ event: 'workers_started', queues: workers.workers.map((worker) => worker.name) }, 'workers started');
    const stale = await reindexStale({
      prisma: database.jobPrisma,
      queues,
      embedderVersion: embedder.version,
      chunkerVersion: CHUNKER_VERSION,
    });
    if (role === 'worker' && config.metrics.workerPort !== undefined) {
      metricsServer = await startMetricsServer(services, { host: config.host, port: config.metrics.workerPort });
      logger.info({ event: 'metrics_listening', url: metricsServer.url }, `metrics on ${metricsServer.url}/-/metrics`);
    }
    if (stale > 0)
      logger.info(
        { event: 'code_indexes_stale', count: stale, embedder: embedder.version },
        'rebuilding code indexes made with another embedder or chunker',
      );
  }

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const step = async (name: string, run: () => Promise<unknown> | undefined) => {
        logger.debug({ event: 'shutdown_step', step: name }, name);
        await run();
      };
      await step('workers', () => workers?.close());
      await step('keyword-warm-up', () => warmUp?.close());
      await step('chunk-threads', () => chunkPool?.close());
      await step('sockets', () => Promise.all([sockets?.close(), cable?.close()]));
      await step('http', () => Promise.all([stopHttp?.(), metricsServer?.close()]));
      await step('suggestion-sessions', async () => suggestionSessions.close());
      await step('intent-thread', () => intent.close());
      await step('queues', () => queues.close());
      await step('events', () => events.close());
      await step('redis-prefix-claim', () => prefixClaim.release());
      await step('database', () => database.close());
      await step('redis', () => Promise.all([redis, requestRedis].map((client) => client.quit().catch(() => client.disconnect()))));
      await step('redis-server', () => redisSupervisor.stop());
      eventLoop.stop();
      logger.info({ event: 'shutdown_complete' }, 'stopped');
    })();
    return closing;
  };
  return { services, database, url, metricsUrl: metricsServer?.url ?? null, demo, close };
}

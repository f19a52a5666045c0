import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric duo-slice exports, in one registry per process (GET /-/metrics serves it). Labels
 * hold only bounded values: route patterns, schema field names, queue names, states, codes and
 * configured names; never user input, project paths or users.
 */
export const registry = new Registry();

// Process figures (event-loop delay, heap, RSS, GC, handles) under their standard names.
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });

const FAST = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SLOW = [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];
const LONG = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const COUNTS = [0, 1, 10, 100, 1_000, 10_000, 100_000];
const BYTES = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

const counter = <Label extends string>(name: string, help: string, labelNames: readonly Label[] = []) =>
  new Counter<Label>({ name, help, labelNames, registers: [registry] });
const gauge = <Label extends string>(name: string, help: string, labelNames: readonly Label[] = []) =>
  new Gauge<Label>({ name, help, labelNames, registers: [registry] });
const histogram = <Label extends string>(name: string, help: string, buckets: number[], labelNames: readonly Label[] = []) =>
  new Histogram<Label>({ name, help, buckets, labelNames, registers: [registry] });

export const metrics = {
  // HTTP and GraphQL
  httpRequests: counter('duo_http_requests_total', 'HTTP requests by method, route pattern and status', ['method', 'route', 'status']),
  httpDuration: histogram('duo_http_request_duration_seconds', 'HTTP request latency by method, route pattern and status', FAST, [
    'method',
    'route',
    'status',
  ]),
  graphqlRequests: counter('duo_graphql_requests_total', 'GraphQL operations over HTTP by type, root field and outcome', [
    'operation_type',
    'operation',
    'outcome',
  ]),
  graphqlDuration: histogram('duo_graphql_request_duration_seconds', 'GraphQL operation latency over HTTP by type and root field', FAST, [
    'operation_type',
    'operation',
  ]),
  graphqlErrors: counter('duo_graphql_errors_total', 'GraphQL errors by root field and extensions.code', ['operation', 'code']),
  websocketConnections: gauge('duo_websocket_connections', 'Open WebSocket connections per transport', ['transport']),
  websocketSubscriptions: gauge('duo_websocket_subscriptions', 'Open subscriptions per WebSocket transport', ['transport']),

  // Queues: depth and workers are read from Redis at scrape time (the whole instance); the rest is this process's workers.
  queueJobs: gauge('duo_queue_jobs', 'Jobs in each queue by state (the whole instance, read from Redis at scrape)', ['queue', 'state']),
  queueWorkers: gauge('duo_queue_workers', 'Workers listening on each queue (the whole instance, read from Redis at scrape)', ['queue']),
  queueJobsProcessed: counter('duo_queue_jobs_processed_total', 'Jobs this process finished, by queue and status (completed, failed)', [
    'queue',
    'status',
  ]),
  queueJobDuration: histogram('duo_queue_job_duration_seconds', 'Time a job ran in this process, by queue and status', LONG, [
    'queue',
    'status',
  ]),
  queueJobWait: histogram('duo_queue_job_wait_seconds', 'Time a job waited from being queued (or its delay ending) to starting', LONG, [
    'queue',
  ]),
  queueJobsStalled: counter('duo_queue_jobs_stalled_total', 'Jobs whose worker stopped renewing the lock (it died or hung), by queue', [
    'queue',
  ]),

  // Chat
  chatFirstChunk: histogram(
    'duo_chat_first_chunk_seconds',
    'Time from the aiAction mutation to the first streamed chunk of the answer',
    SLOW,
  ),
  chatAnswer: histogram('duo_chat_answer_seconds', 'Time from the aiAction mutation to the final answer, by outcome', SLOW, ['outcome']),
  chatAnswers: counter(
    'duo_chat_answers_total',
    'Chat answers by outcome (answered, gatekeeper, no_model, codebase_unavailable, error, superseded) and GitLab error code',
    ['outcome', 'error_code'],
  ),
  gatekeeperVerdicts: counter('duo_chat_gatekeeper_verdicts_total', 'Gatekeeper verdicts on chat prompts by status', ['status']),
  gatekeeperCallsSaved: counter('duo_chat_gatekeeper_llm_calls_saved_total', 'Chat prompts the gatekeeper answered without a model call'),

  // Model providers
  llmDuration: histogram(
    'duo_llm_request_duration_seconds',
    'Model request latency (one attempt, to the end of the stream) by provider and outcome',
    SLOW,
    ['provider', 'outcome'],
  ),
  llmFirstToken: histogram('duo_llm_first_token_seconds', 'Time from a model request to its first text', SLOW, ['provider']),
  llmTokens: counter('duo_llm_tokens_total', 'Tokens the model reported, by provider and direction (input, output)', [
    'provider',
    'direction',
  ]),
  llmRetries: counter('duo_llm_retries_total', 'Model requests retried, by provider and failure kind', ['provider', 'kind']),

  // Code search's reranker (RERANK_PROVIDER)
  rerankRequests: counter(
    'duo_rerank_requests_total',
    'Rerankings of code search results by provider and outcome (ok; else the failure kind: timeout, http, connection, stream): ' +
      'a failed one leaves the search in its own order',
    ['provider', 'outcome'],
  ),
  rerankDuration: histogram('duo_rerank_duration_seconds', 'Time a reranking took, retries included, by provider and outcome', FAST, [
    'provider',
    'outcome',
  ]),

  // Indexing
  indexRuns: counter('duo_index_runs_total', 'Index runs by outcome (indexed, unchanged, dropped, failed)', ['outcome']),
  indexDuration: histogram('duo_index_run_duration_seconds', 'Index run duration by outcome', LONG, ['outcome']),
  indexFiles: histogram('duo_index_run_files', 'Files read per index run', COUNTS),
  indexChunks: histogram('duo_index_run_chunks_embedded', 'Chunks embedded per index run (the rest were stored already)', COUNTS),
  indexBytes: histogram('duo_index_run_bytes', 'Bytes read per index run', BYTES),
  keywordIndexBuilds: counter(
    'duo_search_keyword_index_builds_total',
    "Snapshots' keyword indexes this process made, by what asked (search, warm_up) and outcome (built, loaded from storage, failed)",
    ['trigger', 'outcome'],
  ),
  keywordIndexBuildDuration: histogram(
    'duo_search_keyword_index_build_seconds',
    "Time to get a snapshot's keyword index: built (its rows read and indexed) or loaded (its stored form read)",
    FAST,
    ['trigger', 'outcome'],
  ),
  codeIndexes: gauge('duo_code_indexes', 'Code indexes (project, ref) by state (read from the database at scrape)', ['state']),

  // The instance
  buildInfo: gauge('duo_build_info', 'Always 1: the version and revision running', ['version', 'revision']),
  embedderInfo: gauge('duo_embedder_info', 'Always 1: the embedder in use (indexes made with another one are rebuilt)', [
    'provider',
    'version',
  ]),
  rerankerInfo: gauge('duo_reranker_info', "Always 1: code search's reranker (provider none: no reranker)", ['provider', 'model']),
  llmInfo: gauge('duo_llm_info', 'Always 1: the chat model configured (provider none: no model)', ['provider', 'model']),
  dbPoolConnections: gauge(
    'duo_db_pool_connections',
    'PostgreSQL pool connections of this process by state (total, idle, in_use; waiting: queries waiting for one)',
    ['state'],
  ),
  databaseAnswering: gauge(
    'duo_database_answering',
    "1 while PostgreSQL answers this process's requests' pool in time; " +
      '0 from a statement or connection that ran out of time until a probe answers',
  ),
  databaseStatementsRefused: counter(
    'duo_database_statements_refused_total',
    "Connections asked of the requests' pool (each for a statement or a transaction) refused at once while PostgreSQL was not answering",
  ),
  redisAnswering: gauge(
    'duo_redis_answering',
    "1 while Redis answers this process's request connection; 0 from a command it left unanswered until a PING answers",
  ),
  redisCommandsRefused: counter(
    'duo_redis_commands_refused_total',
    'Commands the request connection failed at once, without waiting, while Redis was not answering',
  ),
  scrapeErrors: counter('duo_metrics_scrape_errors_total', 'Parts of a scrape that could not be read (database, redis)', ['source']),
};

/** Keeps a label value inside a known set; anything else becomes `other`. */
export function bounded(value: string | null | undefined, known: ReadonlySet<string>): string {
  if (!value) return 'none';
  return known.has(value) ? value : 'other';
}

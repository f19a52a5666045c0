import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_EMBEDDED_SHARED_BUFFERS_MB } from './db/embedded-settings';
import { PROJECT_ROOT } from './paths';

/** Chat context categories, in GitLab's order (lowercase internal values). */
export const CONTEXT_CATEGORIES = [
  'file',
  'snippet',
  'merge_request',
  'issue',
  'dependency',
  'local_git',
  'terminal',
  'user_rule',
  'repository',
  'directory',
] as const;
export type ContextCategory = (typeof CONTEXT_CATEGORIES)[number];

/**
 * Instance feature flags on by default: the two the language server checks before it gathers
 * context for code suggestions, which our completions endpoint accepts.
 */
export const DEFAULT_FEATURE_FLAGS = ['advanced_context_resolver', 'code_suggestions_context'] as const;

const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const positiveInt = z.coerce.number({ message: 'must be a number' }).int('must be a whole number').positive('must be positive');

const urlWithProtocol = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}`,
  );

const envSchema = z.object({
  PORT: z.coerce.number({ message: 'must be a number' }).int().min(0).max(65535, 'must be a port number (0-65535)').default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  EXTERNAL_URL: urlWithProtocol(['http:', 'https:'])
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  FEATURE_FLAGS: z
    .string()
    .default(DEFAULT_FEATURE_FLAGS.join(','))
    .transform((value, context) => {
      const names = value
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean);
      for (const name of names) {
        if (!/^[a-z0-9_]+$/.test(name))
          context.addIssue({ code: 'custom', message: `"${name}" is not a feature flag name (lowercase letters, digits and _)` });
      }
      return [...new Set(names)];
    }),
  DATABASE_URL: urlWithProtocol(['postgres:', 'postgresql:']).optional(),
  DATABASE_POOL_SIZE: positiveInt.max(1_000, 'must be at most 1000').default(10),
  DATA_DIR: z.string().min(1).default('.data'),
  REDIS_URL: urlWithProtocol(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().min(1).default('duo'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DEMO_SEED: booleanString.default(true),
  DUO_DISABLED_CONTEXT_CATEGORIES: z
    .string()
    .default('')
    .transform((value, context) => {
      const names = value
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean);
      for (const name of names) {
        if (!(CONTEXT_CATEGORIES as readonly string[]).includes(name)) {
          context.addIssue({ code: 'custom', message: `unknown category "${name}" (known: ${CONTEXT_CATEGORIES.join(', ')})` });
        }
      }
      return names as ContextCategory[];
    }),
  MAX_BODY_BYTES: positiveInt.default(4 * 1024 * 1024),
  RATE_LIMIT_PER_MINUTE: positiveInt.default(600),
  GRAPHQL_MAX_DEPTH: positiveInt.default(15),
  GRAPHQL_MAX_COMPLEXITY: positiveInt.default(250),
  GRAPHQL_MAX_TOKENS: positiveInt.default(5_000),
  MAX_JSON_DEPTH: positiveInt.max(1_000, 'must be at most 1000').default(32),
  WS_MAX_MESSAGE_BYTES: positiveInt.default(1024 * 1024),
  WS_MAX_SUBSCRIPTIONS_PER_USER: positiveInt.default(50),
  SOCKET_REAUTH_INTERVAL_MS: positiveInt.default(30_000),
  WEBHOOK_RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
  /** GitLab's `code_suggestions_api_rate_limit` application setting (17.2+): per user, per minute. */
  CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
  /** GitLab's `ai_action_api_rate_limit` application setting: per user, per 8 hours. */
  AI_ACTION_RATE_LIMIT: positiveInt.default(160),
  PGLITE_SHARED_BUFFERS_MB: positiveInt.min(1).max(4_096, 'must be at most 4096').default(DEFAULT_EMBEDDED_SHARED_BUFFERS_MB),
  LLM_PROVIDER: z.enum(['none', 'openai', 'anthropic'], { message: 'must be none, openai or anthropic' }).default('none'),
  LLM_BASE_URL: urlWithProtocol(['http:', 'https:']).optional(),
  LLM_MODEL: z.string().min(1).optional(),
  LLM_API_KEY: z.string().min(1).optional(),
  LLM_TIMEOUT_MS: positiveInt.default(60_000),
  LLM_MAX_RETRIES: z.coerce.number({ message: 'must be a number' }).int().min(0).max(10).default(2),
  JOB_LOCK_MS: positiveInt.default(30_000),
  EMBEDDINGS_PROVIDER: z.enum(['lexical', 'openai', 'onnx'], { message: 'must be lexical, openai or onnx' }).default('lexical'),
  EMBEDDINGS_BASE_URL: urlWithProtocol(['http:', 'https:']).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).optional(),
  EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  EMBEDDINGS_DIMENSIONS: positiveInt.max(16_000, 'must be at most 16000').optional(),
  EMBEDDINGS_MODEL_DIR: z.string().min(1).optional(),
  RERANK_PROVIDER: z.enum(['none', 'cohere', 'tei'], { message: 'must be none, cohere or tei' }).default('none'),
  RERANK_URL: urlWithProtocol(['http:', 'https:'])
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  RERANK_MODEL: z.string().min(1).optional(),
  RERANK_API_KEY: z.string().min(1).optional(),
  RERANK_TOP_N: positiveInt.min(2, 'must be at least 2').max(100, 'must be at most 100').default(30),
  RERANK_WEIGHT: z.coerce.number({ message: 'must be a number' }).gt(0, 'must be above 0').max(1, 'must be at most 1').default(0.5),
  RERANK_MAX_CHARS: positiveInt.min(100, 'must be at least 100').max(20_000, 'must be at most 20000').default(1_200),
  RERANK_TIMEOUT_MS: positiveInt.max(60_000, 'must be at most 60000').default(2_000),
  INDEX_DEBOUNCE_MS: z.coerce.number({ message: 'must be a number' }).int().min(0).default(3_000),
  INDEX_MAX_FILE_BYTES: positiveInt.default(1_000_000),
  INDEX_CONCURRENCY: positiveInt.max(16, 'must be at most 16').default(1),
  DUO_CHAT_DIR: z.string().min(1).optional(),
  INDEX_THREADS: z.coerce.number({ message: 'must be a number' }).int().min(0).max(16, 'must be at most 16').optional(),
  INDEX_TRANSACTION_CHUNKS: positiveInt.max(10_000, 'must be at most 10000').optional(),
  EVENT_LOOP_WARN_MS: positiveInt.default(200),
  INTENT_TIMEOUT_MS: positiveInt.max(60_000, 'must be at most 60000').default(1_000),
  CHAT_INDEX_WAIT_MS: z.coerce.number({ message: 'must be a number' }).int().min(0).max(300_000, 'must be at most 300000').default(30_000),
  WORKER_NICE: z.coerce
    .number({ message: 'must be a number' })
    .int('must be a whole number')
    .min(0)
    .max(19, 'must be at most 19')
    .default(10),
  DATABASE_REQUEST_TIMEOUT_MS: positiveInt.max(600_000, 'must be at most 600000').default(15_000),
  DATABASE_JOB_TIMEOUT_MS: positiveInt.max(3_600_000, 'must be at most 3600000').default(600_000),
  AUTH_CACHE_MS: z.coerce.number({ message: 'must be a number' }).int().min(0).max(60_000, 'must be at most 60000').default(3_000),
  SEARCH_INDEX_CACHE_MB: z.coerce.number({ message: 'must be a number' }).int().min(0).max(65_536, 'must be at most 65536').default(256),
  GATEKEEPER: booleanString.default(true),
  GATEKEEPER_CLEAR_THRESHOLD: z.coerce.number({ message: 'must be a number' }).min(0).max(1).optional(),
  GATEKEEPER_CONFIRM_THRESHOLD: z.coerce.number({ message: 'must be a number' }).min(0).max(1).optional(),
  WORKER_METRICS_PORT: z.coerce
    .number({ message: 'must be a number' })
    .int()
    .min(0)
    .max(65535, 'must be a port number (0-65535)')
    .optional(),
  GITLAB_URL: urlWithProtocol(['http:', 'https:'])
    .refine((value) => {
      const url = URL.canParse(value) ? new URL(value) : null;
      return !url || (!url.username && !url.password && !url.search && !url.hash);
    }, 'must be the instance URL alone: no user name, password, query or fragment (tokens go in GITLAB_SERVICE_TOKEN)')
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  GITLAB_SERVICE_TOKEN: z.string().min(1).optional(),
  GITLAB_TIMEOUT_MS: positiveInt.max(120_000, 'must be at most 120000').default(10_000),
  GITLAB_SYSTEM_HOOK_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  DUO_ACCESS: z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined) return undefined;
      const rule = parseDuoAccessRule(value);
      if (typeof rule === 'string') {
        context.addIssue({ code: 'custom', message: rule });
        return z.NEVER;
      }
      return rule;
    }),
  DUO_ADD_ON: z.enum(['duo_pro', 'duo_enterprise'], { message: 'must be duo_pro or duo_enterprise' }).default('duo_pro'),
  METRICS_ALLOWED_CIDRS: z
    .string()
    .default('127.0.0.0/8,::1/128')
    .transform((value, context) => {
      const ranges = value
        .split(',')
        .map((range) => range.trim())
        .filter(Boolean);
      for (const range of ranges) {
        if (!isCidr(range))
          context.addIssue({ code: 'custom', message: `"${range}" is not an address or CIDR range (e.g. 10.0.0.0/8, ::1/128)` });
      }
      return ranges;
    }),
});

/**
 * Who gets Duo when the service is connected to GitLab (DUO_ACCESS): everyone GitLab lets in, the
 * members of named GitLab groups (direct or inherited, any role), or named users.
 */
export type DuoAccessRule =
  | Readonly<{ kind: 'all' }>
  | Readonly<{ kind: 'groups'; groups: readonly string[] }>
  | Readonly<{ kind: 'users'; usernames: readonly string[] }>;

/** `all`, `groups:<full path>,...` or `users:<username>,...`; a problem's description when it is none of them. */
export function parseDuoAccessRule(value: string): DuoAccessRule | string {
  const trimmed = value.trim();
  if (trimmed === 'all') return Object.freeze({ kind: 'all' });
  const match = /^(groups|users):(.*)$/s.exec(trimmed);
  if (!match) return `"${trimmed}" is not all, groups:<group full path>,... or users:<username>,...`;
  const names = [
    ...new Set(
      match[2]
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0) return `${match[1]}: names no ${match[1] === 'groups' ? 'group' : 'user'}`;
  const pattern =
    match[1] === 'groups' ? /^[A-Za-z0-9_.][A-Za-z0-9_.-]*(\/[A-Za-z0-9_.][A-Za-z0-9_.-]*)*$/ : /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;
  const bad = names.find((name) => !pattern.test(name));
  if (bad) return `"${bad}" is not a GitLab ${match[1] === 'groups' ? 'group full path' : 'username'}`;
  return match[1] === 'groups'
    ? Object.freeze({ kind: 'groups', groups: Object.freeze(names) })
    : Object.freeze({ kind: 'users', usernames: Object.freeze(names) });
}

/** An IPv4 or IPv6 address with an optional prefix length. */
function isCidr(range: string): boolean {
  const [address = '', bits, ...rest] = range.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

export type Config = Readonly<{
  port: number;
  host: string;
  /** The URL users reach the service at (EXTERNAL_URL), without a trailing slash; undefined = the listening URL. */
  externalUrl: string | undefined;
  /** Instance feature flags that are on (FEATURE_FLAGS); `metadata.featureFlags` answers every other name with false. */
  featureFlags: readonly string[];
  databaseUrl: string | undefined;
  /** Connections each pool keeps to PostgreSQL (GitLab's `pool`); the embedded database is one session and keeps its own 4. */
  databasePoolSize: number;
  dataDir: string;
  redisUrl: string;
  redisPrefix: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  demoSeed: boolean;
  disabledContextCategories: readonly ContextCategory[];
  maxBodyBytes: number;
  rateLimitPerMinute: number;
  graphqlMaxDepth: number;
  graphqlMaxComplexity: number;
  /** Lexical tokens a GraphQL document may hold, checked while parsing (before validation can be slow). Default 5000. */
  graphqlMaxTokens: number;
  /** Deepest nesting of any JSON input (GraphQL variables and arguments, REST and webhook bodies). Default 32. */
  maxJsonDepth: number;
  /** Largest frame a graphql-ws or ActionCable client may send. Default 1 MiB. */
  wsMaxMessageBytes: number;
  /** Subscriptions one user (or one address, when anonymous) may hold open at once in one process, over all sockets. Default 50. */
  maxSubscriptionsPerUser: number;
  /** How often an open socket checks that its token is still valid (also checked on every operation). Default 30 s. */
  socketReauthIntervalMs: number;
  /** Push webhook calls per address per minute. Default 60. */
  webhookRateLimitPerMinute: number;
  /** Code suggestion requests per user per minute (GitLab's `code_suggestions_api_rate_limit`). Default 60. */
  codeSuggestionsRateLimitPerMinute: number;
  /** AI actions (aiAction, `glab duo ask`) per user per 8 hours (GitLab's `ai_action_api_rate_limit`). Default 160. */
  aiActionRateLimit: number;
  /** The embedded database's shared buffers in MiB (part of the process's memory). Default 32. */
  pgliteSharedBuffersMb: number;
  llm: LlmConfig;
  embeddings: EmbeddingsConfig;
  rerank: RerankConfig;
  indexing: Readonly<{
    /** How long an index job waits for more pushes to the same ref before it runs. Default 3 s. */
    debounceMs: number;
    /** Files over this many bytes are not indexed. Default 1,000,000. */
    maxFileBytes: number;
    /** Index jobs one worker process runs at once. Default 1. */
    concurrency: number;
    /** Worker threads that chunk and embed files; 0 does it on the main thread. Default 1. */
    threads: number;
    /**
     * New chunks written per transaction. Default 8 on the embedded database (one session: requests
     * wait for the transaction in progress), 256 on PostgreSQL.
     */
    transactionChunks: number;
  }>;
  /** The built chat page (`npm run build` writes it). Default `dist/web` in the checkout. */
  duoChatDir: string;
  /** An event-loop delay above this (ms, the worst in each 10 s) is logged as a warning. Default 200. */
  eventLoopWarnMs: number;
  /** How long a code suggestion's intent detection may take (ms) before the request is answered as a completion. Default 1,000. */
  intentTimeoutMs: number;
  /**
   * How long a chat answer with repository or directory context waits for the first index of its
   * ref (CHAT_INDEX_WAIT_MS, default 30 s; 0 answers at once without the code). A run estimated to
   * take longer is not waited for.
   */
  chatIndexWaitMs: number;
  /** The nice value a worker-only process (`--role=worker`) runs at, so the API beside it is served first; 0 keeps it. Default 10. */
  workerNice: number;
  /** How long a token's, seat's or membership's look-up is reused (ms); 0 turns the cache off. Default 3,000. */
  authCacheMs: number;
  /** MB of snapshots' keyword (BM25) indexes a process keeps for search; 0 builds one for every search. Default 256. */
  searchIndexCacheMb: number;
  /** A request's limit on each database statement and each wait for a connection. */
  databaseRequestTimeoutMs: number;
  /**
   * A job's limit on each database statement and each wait for a connection (a pool of its own): a hung database fails the
   * job, which is retried, instead of holding it while its lock renews. Default 600,000 (10 min: an index's HNSW build).
   */
  databaseJobTimeoutMs: number;
  /** How long a worker holds a job without renewing its lock before another worker takes it over. Default 30 s. */
  jobLockMs: number;
  gatekeeper: Readonly<{
    /** Check chat prompts before the model. Default true. */
    enabled: boolean;
    /** Confidence above which a prompt is CLEAR. Default: the gatekeeper's chosen operating point (src/gatekeeper/options.ts). */
    clearThreshold: number | undefined;
    /** Confidence below which a prompt NEEDS_CLARIFICATION; between the two it NEEDS_CONFIRMATION. Default: as above. */
    confirmThreshold: number | undefined;
  }>;
  /** The GitLab instance identities, projects and permissions come from; null = standalone (local users and tokens). */
  gitlab: GitLabConfig | null;
  metrics: Readonly<{
    /** Addresses and CIDR ranges GET /-/metrics answers; others get 404. Default loopback only. */
    allowedCidrs: readonly string[];
    /** A worker-only process (--role=worker) serves /-/metrics on this port of HOST; unset: none. */
    workerPort: number | undefined;
  }>;
}>;

/** Connected mode (docs/gitlab-connected.md). */
export type GitLabConfig = Readonly<{
  /** GITLAB_URL without a trailing slash: the only place the service connects to for GitLab. */
  url: string;
  /**
   * GITLAB_SERVICE_TOKEN: repository reads and hook registration, and group membership for DUO_ACCESS=groups:; never sent
   * for a caller's request.
   */
  serviceToken: string | undefined;
  /** How long one request to GitLab may take before GitLab counts as unavailable. Default 10 s. */
  timeoutMs: number;
  /** GITLAB_SYSTEM_HOOK_TOKEN: the secret token of GitLab's system hook; without it system hook events are refused (401). */
  systemHookToken: string | undefined;
  /** DUO_ACCESS. Default all. */
  duoAccess: DuoAccessRule;
  /** The add-on whose features a user with Duo gets (DUO_ADD_ON). Default duo_pro. */
  duoAddOn: 'duo_pro' | 'duo_enterprise';
}>;

/** The chat model provider; `provider: 'none'` means answers say that no model is configured. */
export type LlmConfig = Readonly<{
  provider: 'none' | 'openai' | 'anthropic';
  /** Default: https://api.openai.com/v1 or https://api.anthropic.com (without /v1). */
  baseUrl: string | undefined;
  model: string | undefined;
  apiKey: string | undefined;
  /** Longest silence allowed from the model: waiting for its headers, or between two bytes of the stream. Default 60 s. */
  timeoutMs: number;
  /** Retries of retryable failures (408, 409, 429, 5xx, connection) before any text arrived. Default 2. */
  maxRetries: number;
}>;

/** Which embedder turns chunks and questions into vectors. */
export type EmbeddingsConfig = Readonly<{
  /** Default lexical: no model needed. */
  provider: 'lexical' | 'openai' | 'onnx';
  /** OpenAI-compatible endpoint (openai). Default https://api.openai.com/v1. */
  baseUrl: string | undefined;
  model: string | undefined;
  apiKey: string | undefined;
  /** The model's vector size (openai, required) or the lexical embedder's (default 512). */
  dimensions: number | undefined;
  /** A local model directory (onnx). */
  modelDir: string | undefined;
}>;

/** The optional reranker of code search's best files (RERANK_PROVIDER); `provider: 'none'` (the default) reranks nothing. */
export type RerankConfig = Readonly<{
  /**
   * none (default); cohere: the `/rerank` API of Cohere, Jina, vLLM, llama.cpp's server and others
   * (`{model, query, documents, top_n}` → `{results: [{index, relevance_score}]}`); tei:
   * text-embeddings-inference's `/rerank` (`{query, texts}` → `[{index, score}]`).
   */
  provider: 'none' | 'cohere' | 'tei';
  /** The base URL `/rerank` is appended to (e.g. http://127.0.0.1:8000/v1, https://api.cohere.com/v2), without a trailing slash. */
  url: string | undefined;
  /** Sent as `model` (cohere, required there); TEI serves one model and takes none. */
  model: string | undefined;
  /** Sent as a bearer token. */
  apiKey: string | undefined;
  /** The best files (after file ranking) the reranker reorders. Default 30. */
  topN: number;
  /** The reranker's weight in the rank fusion with the search's own order: 1 = its order alone, 0.5 (default) = equal. */
  weight: number;
  /** Longest document sent per file (its path and best snippet), in characters. Default 1,200. */
  maxChars: number;
  /** The whole reranking's limit (every request and retry); past it the search keeps its own order. Default 2,000 ms. */
  timeoutMs: number;
}>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Chunk threads when INDEX_THREADS is not set. On PostgreSQL two (at most the cores): the database's
 * share of a run is small while small projects stay out of the HNSW graph, so tree-sitter on one
 * thread was a run's critical path (rxjs: 1.6–1.7 MB/s on one, 2.0–2.4 MB/s on two;
 * docs/performance.md). On the embedded database one: PGlite's own thread needs the other core.
 */
export function defaultIndexThreads(postgres: boolean): number {
  return postgres ? Math.min(2, availableParallelism()) : 1;
}

/** Parses the environment once; blank values count as unset. Throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') cleaned[key] = value.trim();
  }
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const values = parsed.data;
  const { GATEKEEPER_CONFIRM_THRESHOLD: confirm, GATEKEEPER_CLEAR_THRESHOLD: clear } = values;
  // Either may be left to the gatekeeper's default; the gatekeeper checks that pair when it loads.
  if (confirm !== undefined && clear !== undefined && confirm > clear) {
    throw new ConfigError(['GATEKEEPER_CONFIRM_THRESHOLD: must not be above GATEKEEPER_CLEAR_THRESHOLD']);
  }
  if (values.LLM_PROVIDER !== 'none' && !values.LLM_MODEL) {
    throw new ConfigError([`LLM_MODEL: must be set when LLM_PROVIDER is ${values.LLM_PROVIDER}`]);
  }
  if (values.EMBEDDINGS_PROVIDER === 'openai' && (!values.EMBEDDINGS_MODEL || !values.EMBEDDINGS_DIMENSIONS)) {
    throw new ConfigError(['EMBEDDINGS_MODEL and EMBEDDINGS_DIMENSIONS: must be set when EMBEDDINGS_PROVIDER is openai']);
  }
  if (values.EMBEDDINGS_PROVIDER === 'onnx' && !values.EMBEDDINGS_MODEL_DIR) {
    throw new ConfigError(['EMBEDDINGS_MODEL_DIR: must be set when EMBEDDINGS_PROVIDER is onnx']);
  }
  if (values.RERANK_PROVIDER !== 'none' && !values.RERANK_URL) {
    throw new ConfigError([`RERANK_URL: must be set when RERANK_PROVIDER is ${values.RERANK_PROVIDER}`]);
  }
  if (values.RERANK_PROVIDER === 'cohere' && !values.RERANK_MODEL) {
    throw new ConfigError(['RERANK_MODEL: must be set when RERANK_PROVIDER is cohere']);
  }
  if (!values.GITLAB_URL) {
    const stray = (['GITLAB_SERVICE_TOKEN', 'GITLAB_SYSTEM_HOOK_TOKEN', 'DUO_ACCESS'] as const).filter(
      (name) => cleaned[name] !== undefined,
    );
    if (stray.length > 0) throw new ConfigError(stray.map((name) => `${name}: only applies with GITLAB_URL (connected mode)`));
  }
  if (values.DUO_ACCESS?.kind === 'groups' && !values.GITLAB_SERVICE_TOKEN) {
    throw new ConfigError(['DUO_ACCESS: groups: needs GITLAB_SERVICE_TOKEN (group membership is read with it)']);
  }
  const gitlab: GitLabConfig | null = values.GITLAB_URL
    ? Object.freeze({
        url: values.GITLAB_URL,
        serviceToken: values.GITLAB_SERVICE_TOKEN,
        timeoutMs: values.GITLAB_TIMEOUT_MS,
        systemHookToken: values.GITLAB_SYSTEM_HOOK_TOKEN,
        duoAccess: values.DUO_ACCESS ?? Object.freeze({ kind: 'all' as const }),
        duoAddOn: values.DUO_ADD_ON,
      })
    : null;
  return Object.freeze({
    gitlab,
    port: values.PORT,
    host: values.HOST,
    externalUrl: values.EXTERNAL_URL,
    featureFlags: Object.freeze([...values.FEATURE_FLAGS]),
    databaseUrl: values.DATABASE_URL,
    databasePoolSize: values.DATABASE_POOL_SIZE,
    dataDir: path.resolve(values.DATA_DIR),
    redisUrl: values.REDIS_URL,
    redisPrefix: values.REDIS_PREFIX,
    logLevel: values.LOG_LEVEL,
    demoSeed: values.DEMO_SEED,
    disabledContextCategories: Object.freeze([...values.DUO_DISABLED_CONTEXT_CATEGORIES]),
    maxBodyBytes: values.MAX_BODY_BYTES,
    rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
    graphqlMaxDepth: values.GRAPHQL_MAX_DEPTH,
    graphqlMaxComplexity: values.GRAPHQL_MAX_COMPLEXITY,
    graphqlMaxTokens: values.GRAPHQL_MAX_TOKENS,
    maxJsonDepth: values.MAX_JSON_DEPTH,
    wsMaxMessageBytes: values.WS_MAX_MESSAGE_BYTES,
    maxSubscriptionsPerUser: values.WS_MAX_SUBSCRIPTIONS_PER_USER,
    socketReauthIntervalMs: values.SOCKET_REAUTH_INTERVAL_MS,
    webhookRateLimitPerMinute: values.WEBHOOK_RATE_LIMIT_PER_MINUTE,
    codeSuggestionsRateLimitPerMinute: values.CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE,
    aiActionRateLimit: values.AI_ACTION_RATE_LIMIT,
    pgliteSharedBuffersMb: values.PGLITE_SHARED_BUFFERS_MB,
    jobLockMs: values.JOB_LOCK_MS,
    duoChatDir: path.resolve(values.DUO_CHAT_DIR ?? path.join(PROJECT_ROOT, 'dist', 'web')),
    gatekeeper: Object.freeze({
      enabled: values.GATEKEEPER,
      clearThreshold: values.GATEKEEPER_CLEAR_THRESHOLD,
      confirmThreshold: values.GATEKEEPER_CONFIRM_THRESHOLD,
    }),
    embeddings: Object.freeze({
      provider: values.EMBEDDINGS_PROVIDER,
      baseUrl: values.EMBEDDINGS_BASE_URL,
      model: values.EMBEDDINGS_MODEL,
      apiKey: values.EMBEDDINGS_API_KEY,
      dimensions: values.EMBEDDINGS_DIMENSIONS,
      modelDir: values.EMBEDDINGS_MODEL_DIR ? path.resolve(values.EMBEDDINGS_MODEL_DIR) : undefined,
    }),
    rerank: Object.freeze({
      provider: values.RERANK_PROVIDER,
      url: values.RERANK_URL,
      model: values.RERANK_MODEL,
      apiKey: values.RERANK_API_KEY,
      topN: values.RERANK_TOP_N,
      weight: values.RERANK_WEIGHT,
      maxChars: values.RERANK_MAX_CHARS,
      timeoutMs: values.RERANK_TIMEOUT_MS,
    }),
    metrics: Object.freeze({ allowedCidrs: Object.freeze([...values.METRICS_ALLOWED_CIDRS]), workerPort: values.WORKER_METRICS_PORT }),
    indexing: Object.freeze({
      debounceMs: values.INDEX_DEBOUNCE_MS,
      maxFileBytes: values.INDEX_MAX_FILE_BYTES,
      concurrency: values.INDEX_CONCURRENCY,
      threads: values.INDEX_THREADS ?? defaultIndexThreads(Boolean(values.DATABASE_URL)),
      transactionChunks: values.INDEX_TRANSACTION_CHUNKS ?? (values.DATABASE_URL ? 256 : 8),
    }),
    eventLoopWarnMs: values.EVENT_LOOP_WARN_MS,
    intentTimeoutMs: values.INTENT_TIMEOUT_MS,
    chatIndexWaitMs: values.CHAT_INDEX_WAIT_MS,
    workerNice: values.WORKER_NICE,
    authCacheMs: values.AUTH_CACHE_MS,
    searchIndexCacheMb: values.SEARCH_INDEX_CACHE_MB,
    databaseRequestTimeoutMs: values.DATABASE_REQUEST_TIMEOUT_MS,
    databaseJobTimeoutMs: values.DATABASE_JOB_TIMEOUT_MS,
    llm: Object.freeze({
      provider: values.LLM_PROVIDER,
      baseUrl: values.LLM_BASE_URL,
      model: values.LLM_MODEL,
      apiKey: values.LLM_API_KEY,
      timeoutMs: values.LLM_TIMEOUT_MS,
      maxRetries: values.LLM_MAX_RETRIES,
    }),
  });
}

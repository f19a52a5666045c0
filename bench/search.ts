/**
 * Codebase search latency at about 10k and about 100k chunks, the query plans PostgreSQL picks,
 * and the time from a chat message with repository context to the model being called.
 * Prints figures (percentiles over many questions); it never passes or fails on time.
 *
 *   node -r @swc-node/register bench/search.ts [questions=200] [chunks=100000] [chatMessages=30]
 *
 * Needs PostgreSQL with pgvector (TEST_DATABASE_URL, default postgres@127.0.0.1:5432) and Redis
 * (TEST_REDIS_URL, default 127.0.0.1:6379), like the tests. Everything it makes (a database
 * duo_bench_<random>, Redis keys under its own prefix, a data folder) is removed at the end.
 *
 * BENCH_SEARCH_KEEP=<name> keeps the built data for later runs instead: the database
 * duo_bench_keep_<name> and the data folder duo-bench-keep-<name> under the system temp folder
 * stay. A later run with the same name and `chunks` finds them and measures size 2 only (no
 * indexing, no copying, no size 1; its chat too unless chatMessages is 0), after the service's
 * migrations ran on that database as on any start. A kept database built from other packages or
 * another `chunks` is dropped and built again. Remove it with
 * `psql -c 'DROP DATABASE duo_bench_keep_<name>'` and the folder by hand.
 *
 * 1. Data: a few npm packages are fetched (`npm pack`, cached under the system temp folder) and
 *    committed together as one monorepo (packages/<name>/...), which the real indexer
 *    (indexRepository, lexical embedder, tree-sitter chunks) indexes into one project: the first
 *    size. The second size copies that snapshot in SQL until it has about `chunks` chunks: each
 *    copy lives under mirror-<n>/, with new blob and chunk ids, the same code and words (plus
 *    "mirror <n>" from its path), and the vector moved by small uniform noise (about 0.97 cosine
 *    to the original) and renormalised, so copies are near neighbours, not exact duplicates. The
 *    HNSW index is dropped for the copy and rebuilt with its own definition (faster than 90k
 *    single inserts); then VACUUM ANALYZE, the state autovacuum would leave (it also merges GIN's
 *    pending list, which a plain ANALYZE does not).
 * 2. Questions: generated from symbol names in the indexed code, half identifiers ("switchMap",
 *    "where is Subscriber.next defined"), half prose ("how does retry when work?").
 * 3. At each size, after WARM_UP other questions asked both ways untimed: codebaseSearch through
 *    GraphQL over HTTP (the real service, role api) and searchCode in this process, one question
 *    at a time, each question both ways back to back with the first way alternating (so neither
 *    way is timed on a warmer process, buffers or machine than the other); then searchCode with
 *    and without the snapshot's whole-project mark (what a search gets once a second branch is
 *    indexed), alternated; then GraphQL 4 at a time; searchCode's parts timed apart; the plans
 *    (EXPLAIN, no settings forced) of vectorRanking as searchCode runs it (with the ranked chunks'
 *    occurrences) for every question, tallied. The keyword side is BM25 over the snapshot's
 *    in-memory index (src/search/lexical-index.ts): the first search of a snapshot builds it, and
 *    its build time is printed apart.
 * 4. Chat, at each size: the real service with role all, the model an OpenAI-compatible stub in
 *    this process that records when each POST /v1/chat/completions arrives and streams "ok" at
 *    once; aiAction with a REPOSITORY item, one message at a time: arrival at the model minus
 *    mutation sent. The first message that reaches the model must carry indexed code, or the
 *    figure is skipped; messages the gatekeeper answers without the model are counted apart.
 *
 * Other work on the machine moves these figures: the load average is printed beside them.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { findAnswer } from '../src/chat/messages.service';
import { defaultIndexThreads, loadConfig } from '../src/config';
import type { PrismaClient, Project } from '../src/db/prisma';
import { materializeNpmPackage } from '../src/evaluation/npm-source';
import { ChunkPool } from '../src/indexing/chunk-pool';
import { indexRepository, type IndexRepositoryOptions, type IndexRunResult } from '../src/indexing/index-repository';
import { createLogger } from '../src/logger';
import { addMember, assignSeat, buyAddOn, createGroup, createProject } from '../src/namespaces/namespaces.service';
import { indexReadiness, type IndexReadiness } from '../src/search/index-readiness';
import { configureLexicalCache, lexicalIndexOf, rankLexically } from '../src/search/lexical-search';
import { searchCode, vectorRanking, vectorRankingWithOccurrences, type SearchTimings } from '../src/search/search-code';
import { LexicalEmbedder } from '../src/llm/embedders/lexical.embedder';
import { buildFleet, symbolOf, type Fleet, type FleetShape } from './lib/fleet-data';
import { queryTerms } from '../src/search/text-query';
import { startService, type Role, type RunningService } from '../src/start-service';
import { PROJECT_ROOT } from '../src/paths';
import { CODE_INDEX_TABLES, refreshTableStatistics } from '../src/db/table-statistics';
import { createToken, createUser } from '../src/users/users.service';
import { createRandom } from '../src/random';
import { deleteRedisKeys } from '../test/helpers/test-service';
import { cpuMs, median, percentile, reportFigures, runBench } from './lib/figures';

const QUESTIONS = Number(process.argv[2] ?? 200);
/** The service's default SEARCH_INDEX_CACHE_MB. */
const SEARCH_INDEX_CACHE_BYTES = 256 * 1024 * 1024;
const LARGE_CHUNKS = Number(process.argv[3] ?? 100_000);
const CHAT_MESSAGES = Number(process.argv[4] ?? 30);
const SPECS = ['rxjs@7.8.1', 'typescript@5.6.3', '@types/node@22.7.5', 'lodash@4.17.21'];
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONCURRENCY = 4;
/**
 * Questions asked both ways, untimed, before anything is timed (others than the timed ones): a
 * started service's GraphQL path (Express, Apollo, graphql-js, Prisma) spends about twice its
 * steady CPU per request for its first ~100 requests while V8 compiles it, much more than searchCode
 * alone, which it also runs.
 */
const WARM_UP = 100;
const HITS = 10;
const CANDIDATES = 50;
const VECTOR_INDEX = 'code_chunks_embedding_512_idx';
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
  GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
};

type Question = { text: string; kind: 'identifier' | 'prose'; path: string };
type Questions = { timed: Question[]; warmUp: Question[] };
type ReadyScope = Extract<IndexReadiness, { status: 'ready' }>['scope'];
type Fixture = { running: RunningService; token: string; project: Project; scope: ReadyScope; databaseUrl: string };

const ms = (value: number) => `${value.toFixed(1).padStart(6)} ms`;
const spread = (values: readonly number[]) =>
  `p50 ${ms(percentile(values, 50))}   p95 ${ms(percentile(values, 95))}   p99 ${ms(percentile(values, 99))}`;
const git = (repository: string, ...args: string[]) =>
  execFileSync('git', ['-C', repository, '-c', 'commit.gpgsign=false', '-c', 'core.hooksPath=/dev/null', ...args], {
    encoding: 'utf8',
    env: GIT_ENV,
    maxBuffer: 256 * 2 ** 20,
  }).trim();

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** The packages committed side by side as one repository, kept for later runs (the commit message names them). */
async function materializeMonorepo(): Promise<{ repository: string; files: number; megabytes: number }> {
  const cache = path.join(os.tmpdir(), 'duo-bench-npm');
  const repository = path.join(cache, 'search-monorepo');
  const message = `monorepo ${SPECS.join(' ')}`;
  const reusable = existsSync(path.join(repository, '.git')) && git(repository, 'log', '-1', '--format=%B').trim() === message;
  if (!reusable) {
    rmSync(repository, { recursive: true, force: true });
    for (const spec of SPECS) {
      const source = await materializeNpmPackage({ spec, directory: path.join(cache, spec.replace(/[^\w.-]+/g, '_')) });
      const target = path.join(
        repository,
        'packages',
        spec
          .replace(/@[^@/]*$/, '')
          .replace(/^@/, '')
          .replace('/', '-'),
      );
      mkdirSync(target, { recursive: true });
      const archive = execFileSync('git', ['-C', source.repository, 'archive', 'HEAD'], { maxBuffer: 512 * 2 ** 20 });
      execFileSync('tar', ['-x', '-C', target], { input: archive });
    }
    git(repository, 'init', '-q', '-b', 'main');
    git(repository, 'add', '-A', '--force');
    git(repository, 'commit', '-q', '-m', message);
  }
  const sizes = git(repository, 'ls-tree', '-r', '-l', 'HEAD')
    .split('\n')
    .map((line) => Number(line.split('\t')[0].split(/\s+/)[3]) || 0);
  return { repository, files: sizes.length, megabytes: sizes.reduce((sum, size) => sum + size, 0) / 1e6 };
}

function serviceConfig(options: { databaseUrl: string; dataDir: string; redisPrefix: string; llmUrl?: string }) {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: options.databaseUrl,
    DATA_DIR: options.dataDir,
    REDIS_URL,
    REDIS_PREFIX: options.redisPrefix,
    LOG_LEVEL: 'warn',
    DEMO_SEED: 'false',
    RATE_LIMIT_PER_MINUTE: '10000000',
    AI_ACTION_RATE_LIMIT: '100000000',
    ...(options.llmUrl && { LLM_PROVIDER: 'openai', LLM_BASE_URL: options.llmUrl, LLM_MODEL: 'stub', LLM_MAX_RETRIES: '0' }),
  });
}

async function start(options: {
  databaseUrl: string;
  dataDir: string;
  redisPrefix: string;
  role: Role;
  llmUrl?: string;
}): Promise<RunningService> {
  const config = serviceConfig(options);
  return startService({ config, logger: createLogger(config.logLevel), role: options.role });
}

/** A developer with a Duo Enterprise seat, a member of the project. */
async function seedProject(prisma: PrismaClient, repository: string): Promise<{ token: string; project: Project }> {
  const group = await createGroup(prisma, { path: 'bench', plan: 'ultimate' });
  const user = await createUser(prisma, { username: 'bench-developer' });
  await buyAddOn(prisma, { groupPath: group.fullPath, addOn: 'duo_enterprise', seats: 1 });
  await assignSeat(prisma, { groupPath: group.fullPath, addOn: 'duo_enterprise', username: user.username });
  const { token } = await createToken(prisma, { username: user.username });
  const { project } = await createProject(prisma, { fullPath: 'bench/monorepo', repository });
  await addMember(prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
  return { token, project };
}

/**
 * indexRepository in batches of 50 files, run again when a run fails: a batch's transaction can
 * outlast Prisma's 5 s on a busy machine (HNSW inserts), and a new run reuses the stored batches.
 * Files are chunked in worker threads as the service's indexing worker does (without a pool this
 * process's own thread chunked them, and held its event loop for up to a second at a time).
 */
async function indexWithRetries(options: IndexRepositoryOptions): Promise<{ result: IndexRunResult; failures: string[] }> {
  const failures: string[] = [];
  const chunker = new ChunkPool({ threads: defaultIndexThreads(true) });
  try {
    for (;;) {
      try {
        return { result: await indexRepository({ batchFiles: 50, chunker, ...options }), failures };
      } catch (error) {
        failures.push(
          String((error as Error).message)
            .replace(/\s+/g, ' ')
            .trim()
            .slice(-160),
        );
        if (failures.length === 5) throw error;
      }
    }
  } finally {
    await chunker.close();
  }
}

async function vacuumAnalyze(url: string): Promise<void> {
  await withClient(url, async (client) => {
    for (const table of [
      'code_chunks',
      'code_chunk_vectors',
      'code_blobs',
      'code_blob_chunks',
      'code_index_files',
      'code_index_snapshots',
      'code_indexes',
    ])
      await client.query(`VACUUM ANALYZE ${table}`);
  });
}

async function describeData(url: string, snapshotId: bigint): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<Record<'files' | 'chunks' | 'occurrences' | 'heap' | 'hnsw', string>>(
      `SELECT (SELECT count(*) FROM code_index_files WHERE snapshot_id = $1) AS files,
              (SELECT count(*) FROM code_chunks) AS chunks,
              (SELECT count(*) FROM code_index_files f JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND
              b.variant = f.variant WHERE f.snapshot_id = $1) AS occurrences,
              pg_size_pretty(pg_table_size('code_chunks')) AS heap,
              pg_size_pretty(pg_relation_size('${VECTOR_INDEX}')) AS hnsw`,
      [snapshotId.toString()],
    );
    const row = rows[0];
    return (
      `${row.files} files, ${row.chunks} chunks (${row.occurrences} occurrences in files); code_chunks ${row.heap}, HNSW ` + `${row.hnsw}`
    );
  });
}

/**
 * Copies the snapshot's files, chunk placements and chunks `copies` times under mirror-<n>/, with
 * new ids, the vectors moved by noise and renormalised, and the HNSW index rebuilt afterwards.
 * Every copied chunk occurs in the snapshot's copied files, so the snapshot still holds every
 * chunk of the project (covers_project, which the index run set, stays true).
 */
async function replicate(options: {
  url: string;
  projectId: number;
  snapshotId: bigint;
  copies: number;
}): Promise<{ seconds: number; rebuildSeconds: number }> {
  return withClient(options.url, async (client) => {
    const started = performance.now();
    const parameters = [options.projectId, options.snapshotId.toString(), options.copies];
    const { rows } = await client.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE indexname = $1', [VECTOR_INDEX]);
    const definition = rows[0]?.indexdef;
    if (!definition) throw new Error(`${VECTOR_INDEX} is missing`);
    // The copies are of code_chunks.embedding: the project must be in the HNSW graph (VECTOR_GRAPH_MIN_CHUNKS), as its size puts it.
    const graph = await client.query<{ vector_graph: boolean }>('SELECT vector_graph FROM projects WHERE id = $1', [options.projectId]);
    if (!graph.rows[0]?.vector_graph) throw new Error('the indexed project is not in the HNSW graph: its copies would have no vectors');
    await client.query('BEGIN');
    await client.query(`DROP INDEX ${VECTOR_INDEX}`);
    // Uniform noise of ±0.02 a dimension is about 0.26 in length against a unit vector: cosine ≈ 0.97.
    await client.query(
      `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
       SELECT c.project_id, c.id || '-' || k, c.embedder_version, c.dims,
              l2_normalize((SELECT array_agg(x + (random()::real - 0.5) * 0.04 ORDER BY i) FROM unnest(c.embedding::real[]) WITH ORDINALITY
              AS u(x, i))::vector),
              c.content, c.search_text || to_tsvector('simple', 'mirror ' || k)
         FROM code_chunks c, generate_series(1, $2::int) k WHERE c.project_id = $1`,
      [options.projectId, options.copies],
    );
    // In the order the foreign keys ask: chunks, blobs, their rows, manifest lines.
    await client.query(
      `INSERT INTO code_blobs (project_id, blob, variant)
       SELECT DISTINCT f.project_id, f.blob || '-' || k, f.variant
         FROM code_index_files f, generate_series(1, $2::int) k WHERE f.project_id = $1`,
      [options.projectId, options.copies],
    );
    await client.query(
      `INSERT INTO code_blob_chunks (project_id, blob, variant, seq, chunk_id, start_line, end_line, kind, symbol, language)
       SELECT b.project_id, b.blob || '-' || k, b.variant, b.seq, b.chunk_id || '-' || k, b.start_line, b.end_line, b.kind, b.symbol,
       b.language
         FROM code_blob_chunks b, generate_series(1, $2::int) k
        WHERE b.project_id = $1 AND EXISTS (SELECT 1 FROM code_index_files f WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant =
        b.variant)`,
      [options.projectId, options.copies],
    );
    await client.query(
      `INSERT INTO code_index_files (snapshot_id, path, blob, variant, project_id)
       SELECT f.snapshot_id, 'mirror-' || k || '/' || f.path, f.blob || '-' || k, f.variant, f.project_id
         FROM code_index_files f, generate_series(1, $3::int) k WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint`,
      parameters,
    );
    await client.query('COMMIT');
    const rebuilding = performance.now();
    await client.query("SET maintenance_work_mem = '2GB'");
    await client.query(definition);
    const done = performance.now();
    return { seconds: (done - started) / 1000, rebuildSeconds: (done - rebuilding) / 1000 };
  });
}

const words = (identifier: string) =>
  identifier
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_$]+/g, ' ')
    .trim()
    .toLowerCase();

const TEMPLATES: Array<{
  kind: Question['kind'];
  make: (symbol: { name: string; qualified: string; owner: string; pkg: string }) => string;
}> = [
  { kind: 'identifier', make: ({ name }) => name },
  { kind: 'prose', make: ({ name }) => `how does ${words(name)} work?` },
  { kind: 'identifier', make: ({ qualified }) => `where is ${qualified} defined` },
  { kind: 'prose', make: ({ name, pkg }) => `explain the ${words(name)} logic in ${pkg}` },
  { kind: 'identifier', make: ({ qualified }) => `what does ${qualified} return` },
  { kind: 'prose', make: ({ name }) => `how do I ${words(name)}?` },
  { kind: 'identifier', make: ({ name }) => `${name} usage example` },
  { kind: 'prose', make: ({ name, owner }) => `what happens when ${owner ? `the ${words(owner)} ` : ''}calls ${words(name)}` },
  { kind: 'identifier', make: ({ qualified }) => `show me the implementation of ${qualified}` },
  { kind: 'prose', make: ({ name }) => `why would ${words(name)} throw an error` },
];

/**
 * Questions about randomly chosen named functions, methods and classes of the indexed packages
 * (not their copies): `timed` ones, and WARM_UP others for the warm-up.
 */
async function makeQuestions(url: string, snapshotId: bigint): Promise<Questions> {
  const symbols = await withClient(url, async (client) => {
    const { rows } = await client.query<{ symbol: string; path: string }>(
      `SELECT DISTINCT ON (b.symbol) b.symbol, f.path FROM code_index_files f
         JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
        WHERE f.snapshot_id = $1 AND f.path NOT LIKE 'mirror-%' AND b.kind IN ('function', 'method', 'class') AND
        b.symbol ~ '^[A-Za-z_$][A-Za-z0-9_$.]*$' AND length(b.symbol) >= 4
        ORDER BY b.symbol, f.path`,
      [snapshotId.toString()],
    );
    return rows;
  });
  const random = createRandom(20261122);
  // A symbol named only by common words ("every") gives a question the service refuses as having nothing to search for.
  const shuffled = symbols
    .filter(({ symbol }) => queryTerms(symbol.split('.').at(-1)!).length > 0)
    .map((symbol) => ({ symbol, key: random() }))
    .sort((a, b) => a.key - b.key)
    .map(({ symbol }) => symbol);
  const questions = shuffled.slice(0, QUESTIONS + WARM_UP).map(({ symbol, path: file }, index): Question => {
    const parts = symbol.split('.');
    const template = TEMPLATES[index % TEMPLATES.length];
    const name = parts.at(-1)!;
    const text = template.make({
      name,
      qualified: symbol,
      owner: parts.length > 1 ? parts.at(-2)! : '',
      pkg: file.split('/')[1] ?? 'the repository',
    });
    return { text, kind: template.kind, path: file };
  });
  return { timed: questions.slice(0, QUESTIONS), warmUp: questions.slice(QUESTIONS) };
}

const SEARCH = `query($project: ID!, $query: String!, $first: Int!) {
  codebaseSearch(projectPath: $project, query: $query, first: $first) { path startLine endLine score content }
}`;

async function searchOverHttp(fixture: Fixture, question: string): Promise<Array<{ path: string }>> {
  const response = await fetch(`${fixture.running.url}/api/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${fixture.token}` },
    body: JSON.stringify({ query: SEARCH, variables: { project: fixture.project.fullPath, query: question, first: HITS } }),
  });
  const body = (await response.json()) as { data?: { codebaseSearch: Array<{ path: string }> | null }; errors?: unknown };
  if (body.errors || !body.data?.codebaseSearch)
    throw new Error(`codebaseSearch failed for ${JSON.stringify(question)}: ${JSON.stringify(body.errors)}`);
  return body.data.codebaseSearch;
}

const searchInProcess = (fixture: Fixture, question: string) =>
  searchCode({ ...fixture.running.services, scope: fixture.scope, query: question, limit: HITS, candidates: CANDIDATES });

/** Every warm-up question asked both ways, untimed (see WARM_UP). */
async function warmUp(fixture: Fixture, questions: Question[]): Promise<void> {
  for (const question of questions) {
    await searchOverHttp(fixture, question.text);
    await searchInProcess(fixture, question.text);
  }
}

/**
 * codebaseSearch over HTTP and searchCode in this process, one question at a time: each question
 * both ways back to back, which way goes first alternating, so each way meets a question first
 * (PostgreSQL's buffers without its pages) for half the questions and both see the same moments of
 * the machine. Returns both p95s and each question's searchCode time, ms.
 */
async function measureSequential(
  fixture: Fixture,
  questions: Question[],
): Promise<{ http: number; inProcess: number; searchCodeMs: number[] }> {
  const http: number[] = [];
  const inProcess: number[] = [];
  const cpu = { http: 0, inProcess: 0 };
  const byKind: Record<Question['kind'], number[]> = { identifier: [], prose: [] };
  let found = 0;
  let empty = 0;
  for (const [index, question] of questions.entries()) {
    const overHttp = async () => {
      const [started, startedCpu] = [performance.now(), cpuMs()];
      const hits = await searchOverHttp(fixture, question.text);
      const elapsed = performance.now() - started;
      cpu.http += cpuMs() - startedCpu;
      http.push(elapsed);
      byKind[question.kind].push(elapsed);
      if (hits.some((hit) => hit.path === question.path || hit.path.endsWith(`/${question.path}`))) found += 1;
      if (!hits.length) empty += 1;
    };
    const here = async () => {
      const [started, startedCpu] = [performance.now(), cpuMs()];
      await searchInProcess(fixture, question.text);
      inProcess.push(performance.now() - started);
      cpu.inProcess += cpuMs() - startedCpu;
    };
    for (const way of index % 2 === 0 ? [overHttp, here] : [here, overHttp]) await way();
  }
  const perQuestion = (total: number) => `${(total / questions.length).toFixed(1)} ms`;
  console.log(
    `  ${questions.length} questions one at a time after ${WARM_UP} others untimed, each both ways back to back, which goes first ` +
      `alternating; CPU is this process's (the service's and, over HTTP, the client's)`,
  );
  console.log(`  codebaseSearch over HTTP (GraphQL, first: ${HITS}, content included)`);
  console.log(
    `    one at a time          ${spread(http)}   ` +
      `${(questions.length / (http.reduce((a, b) => a + b, 0) / 1000)).toFixed(0)} q/s, CPU ${perQuestion(cpu.http)} a question`,
  );
  console.log(`      identifier questions ${spread(byKind.identifier)}   (${byKind.identifier.length})`);
  console.log(`      prose questions      ${spread(byKind.prose)}   (${byKind.prose.length})`);
  console.log(`    the symbol's file among the hits: ${found}/${questions.length}; no hits: ${empty}`);
  console.log(`  searchCode in this process (same pool as the service)`);
  console.log(`    searchCode, hybrid     ${spread(inProcess)}   CPU ${perQuestion(cpu.inProcess)} a question`);
  return { http: percentile(http, 95), inProcess: percentile(inProcess, 95), searchCodeMs: inProcess };
}

/**
 * searchCode where the snapshot's mark of holding every chunk of the project does not apply (a
 * second branch indexed, a run storing chunks: coversProject false, so every full-text match is
 * checked against the snapshot), beside the same question with the mark as the service reads it,
 * which first alternating; and how many questions get the same answer both ways.
 */
async function measureUnmarked(fixture: Fixture, questions: Question[]): Promise<void> {
  if (!fixture.scope.coversProject) {
    console.log('  (the snapshot is not marked as holding every chunk of the project: every search above checked each match)');
    return;
  }
  const marked: number[] = [];
  const unmarked: number[] = [];
  let same = 0;
  for (const [index, question] of questions.entries()) {
    const answers: string[] = [];
    for (const scope of index % 2 === 0
      ? [fixture.scope, { ...fixture.scope, coversProject: false }]
      : [{ ...fixture.scope, coversProject: false }, fixture.scope]) {
      const started = performance.now();
      const result = await searchCode({ ...fixture.running.services, scope, query: question.text, limit: HITS, candidates: CANDIDATES });
      (scope.coversProject ? marked : unmarked).push(performance.now() - started);
      answers.push(JSON.stringify(result));
    }
    if (answers[0] === answers[1]) same += 1;
  }
  console.log(`  searchCode with and without the snapshot's mark (each question both ways, which first alternating)`);
  console.log(`    marked (as above)      ${spread(marked)}`);
  console.log(`    not marked             ${spread(unmarked)}   (a second branch indexed, a run storing chunks)`);
  console.log(`    the same answer both ways: ${same}/${questions.length}`);
}

/** codebaseSearch over HTTP, CONCURRENCY at a time. */
async function measureConcurrent(fixture: Fixture, questions: Question[]): Promise<void> {
  const concurrent: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < questions.length) {
        const question = questions[next++];
        const begun = performance.now();
        await searchOverHttp(fixture, question.text);
        concurrent.push(performance.now() - begun);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(`  codebaseSearch over HTTP, ${CONCURRENCY} at a time`);
  console.log(`    ${CONCURRENCY} at a time            ${spread(concurrent)}   ${(questions.length / seconds).toFixed(0)} q/s`);
}

/** searchCode's parts, each alone, after the timed passes; the remainder is against each question's searchCode time there. */
async function measureParts(fixture: Fixture, questions: Question[], searchCodeMs: number[]): Promise<void> {
  const { prisma, embedder } = fixture.running.services;
  const parts = { embed: [] as number[], vector: [] as number[], text: [] as number[], rest: [] as number[] };
  for (const [index, question] of questions.entries()) {
    let started = performance.now();
    const [vector] = await embedder.embed([question.text]);
    const embed = performance.now() - started;
    started = performance.now();
    await vectorRanking(prisma, fixture.scope, vector, CANDIDATES);
    const vectorMs = performance.now() - started;
    started = performance.now();
    rankLexically(await lexicalIndexOf(prisma, fixture.scope), {
      question: question.text,
      directory: '',
      excluded: () => false,
      limit: CANDIDATES,
      files: CANDIDATES,
    });
    const textMs = performance.now() - started;
    parts.embed.push(embed);
    parts.vector.push(vectorMs);
    parts.text.push(textMs);
    parts.rest.push(Math.max(0, searchCodeMs[index] - Math.max(embed + vectorMs, textMs)));
  }
  console.log(`  searchCode's parts, each alone, afterwards (the questions' pages are in the buffers by now)`);
  console.log(`    embed question         ${spread(parts.embed)}`);
  console.log(`    vectorRanking (${CANDIDATES})     ${spread(parts.vector)}`);
  console.log(`    keyword BM25 (${CANDIDATES}, kept index) ${spread(parts.text)}`);
  console.log(`    remainder: fusion, hydration, grouping ≈ searchCode − max(embed + vector, text)   ${spread(parts.rest)}`);
}

type PlanRow = { 'QUERY PLAN': string };
// The scans of tables and indexes (a CTE Scan only reads back what one of them found).
const planLines = (rows: PlanRow[]) =>
  rows.map((row) => row['QUERY PLAN']).filter((line) => /Scan|Index/.test(line) && !/CTE Scan/.test(line));
const shapeOf = (lines: string[]) =>
  lines
    .filter((line) => /Scan/.test(line))
    .map((line) =>
      line
        .replace(/\s+\(cost=[^)]*\)/, '')
        .replace(/^\s*->\s*/, '')
        .trim(),
    )
    .join(' | ') || '(no query: every word of the question is a stop word)';
const dedent = (lines: string[]) => {
  const indent = Math.min(...lines.map((line) => /^\s*/.exec(line)![0].length));
  return lines.map((line) => line.slice(indent));
};

async function explainPlans(fixture: Fixture, questions: Question[]): Promise<void> {
  const { prisma, embedder } = fixture.running.services;
  const tally = new Map<string, number>();
  const samples: Array<{ label: string; lines: string[] }> = [];
  let hnsw = 0;
  for (const [index, question] of questions.entries()) {
    const [vector] = await embedder.embed([question.text]);
    const vectorPlan = planLines(
      (await vectorRankingWithOccurrences(prisma, fixture.scope, vector, CANDIDATES, { explain: true })) as unknown as PlanRow[],
    );
    if (vectorPlan.some((line) => line.includes(VECTOR_INDEX))) hnsw += 1;
    tally.set(shapeOf(vectorPlan), (tally.get(shapeOf(vectorPlan)) ?? 0) + 1);
    if (index < 2) samples.push({ label: `vectorRanking, ${JSON.stringify(question.text)}`, lines: vectorPlan });
  }
  console.log(`  plans as the planner picks them (EXPLAIN, nothing forced), ${questions.length} questions`);
  console.log(`    vectorRanking uses the HNSW index (${VECTOR_INDEX}) in ${hnsw}/${questions.length}`);
  for (const [shape, count] of [...tally.entries()].sort((a, b) => b[1] - a[1]))
    console.log(`    vector plan ×${String(count).padEnd(4)} ${shape}`);
  for (const sample of samples) {
    console.log(`    ${sample.label}:`);
    for (const line of dedent(sample.lines)) console.log(`      ${line.length > 190 ? `${line.slice(0, 190)}…` : line}`);
  }
}

const load = () =>
  `load average ${os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`;

async function measureSize(fixture: Fixture, questions: Questions): Promise<{ http: number; inProcess: number }> {
  console.log(`  (${load()} before, on ${os.cpus().length} cores)`);
  const building = performance.now();
  const keywordIndex = await lexicalIndexOf(fixture.running.services.prisma, fixture.scope);
  console.log(
    `  keyword index of the snapshot (${keywordIndex.size.documents} chunk documents, ${keywordIndex.size.lexemes} words, ` +
      `${(keywordIndex.weight / 1e6).toFixed(1)} MB) built in ${(performance.now() - building).toFixed(0)} ms`,
  );
  await requireVectorHits(fixture, questions.warmUp[0].text);
  await warmUp(fixture, questions.warmUp);
  const { http, inProcess, searchCodeMs } = await measureSequential(fixture, questions.timed);
  await measureUnmarked(fixture, questions.timed);
  await measureConcurrent(fixture, questions.timed);
  await measureParts(fixture, questions.timed, searchCodeMs);
  await explainPlans(fixture, questions.timed);
  return { http, inProcess };
}

/** A hybrid figure with an empty vector list would time the text ranking alone: refuse to measure it. */
async function requireVectorHits(fixture: Fixture, question: string): Promise<void> {
  const { prisma, embedder } = fixture.running.services;
  const [vector] = await embedder.embed([question]);
  const rows = await vectorRanking(prisma, fixture.scope, vector, CANDIDATES);
  if (rows.length < CANDIDATES)
    throw new Error(
      `vectorRanking found ${rows.length} of ${CANDIDATES} chunks (scope vectorGraph ${fixture.scope.vectorGraph}): the figures would ` +
        'time the text ranking alone',
    );
}

/** The figure of the issue for bench/all.ts, from the large size. */
function reportLarge(p95: { http: number; inProcess: number }): void {
  reportFigures([
    {
      figure: `codebaseSearch p95 at ${Math.round(LARGE_CHUNKS / 1000)}k chunks, GraphQL / in-process`,
      target: '40 / 25 ms',
      result: `${p95.http.toFixed(1)} / ${p95.inProcess.toFixed(1)} ms`,
      met: p95.http < 40 && p95.inProcess < 25,
    },
  ]);
}

type StubModel = { url: string; arrivals: Array<{ at: number; body: string }>; close(): Promise<void> };

/** An OpenAI-compatible model that notes when each request arrives and streams "ok" at once. */
async function startStubModel(): Promise<StubModel> {
  const arrivals: StubModel['arrivals'] = [];
  const server = http.createServer((request, response) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404).end();
        return;
      }
      arrivals.push({ at, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.write('data: {"choices":[{"delta":{"content":"ok"}}]}\n\n');
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, arrivals, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const CHAT = `mutation($input: AiActionInput!) { aiAction(input: $input) { requestId errors } }`;

async function sendChat(options: { running: RunningService; token: string; project: Project; content: string }): Promise<string> {
  const input = {
    chat: { content: options.content, additionalContext: [{ category: 'REPOSITORY', id: options.project.fullPath, content: '' }] },
  };
  const response = await fetch(`${options.running.url}/api/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
    body: JSON.stringify({ query: CHAT, variables: { input } }),
  });
  const body = (await response.json()) as { data?: { aiAction: { requestId: string; errors: string[] } | null }; errors?: unknown };
  const action = body.data?.aiAction;
  if (body.errors || !action?.requestId || action.errors.length) throw new Error(`aiAction failed: ${JSON.stringify(body)}`);
  return action.requestId;
}

type ChatOutcome = { kind: 'model'; latency: number; prompt: string } | { kind: 'answered'; content: string } | { kind: 'timeout' };

/** Waits until the model is called for this message, or the answer is stored without it. */
async function awaitModel(options: {
  prisma: PrismaClient;
  stub: StubModel;
  requestId: string;
  sentAt: number;
  arrivalsBefore: number;
}): Promise<ChatOutcome> {
  const deadline = performance.now() + 30_000;
  let lastCheck = 0;
  while (performance.now() < deadline) {
    const arrival = options.stub.arrivals[options.arrivalsBefore];
    if (arrival) return { kind: 'model', latency: arrival.at - options.sentAt, prompt: arrival.body };
    if (performance.now() - lastCheck > 100) {
      lastCheck = performance.now();
      const answer = await findAnswer(options.prisma, options.requestId);
      if (answer && !options.stub.arrivals[options.arrivalsBefore]) return { kind: 'answered', content: answer.content };
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return { kind: 'timeout' };
}

async function waitForAnswer(prisma: PrismaClient, requestId: string): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline && !(await findAnswer(prisma, requestId))) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function measureChat(options: {
  databaseUrl: string;
  dataDir: string;
  project: Project;
  token: string;
  questions: Question[];
}): Promise<void> {
  if (CHAT_MESSAGES <= 0) {
    console.log('    skipped (chatMessages 0)');
    return;
  }
  const stub = await startStubModel();
  const redisPrefix = `duobench:${randomBytes(5).toString('hex')}`;
  const running = await start({ databaseUrl: options.databaseUrl, dataDir: options.dataDir, redisPrefix, role: 'all', llmUrl: stub.url });
  try {
    console.log(`  (${load()} before)`);
    const prisma = running.services.prisma;
    const prose = options.questions.filter((question) => question.kind === 'prose');
    let next = 0;
    const withoutModel = new Map<string, number>();
    const ask = async () => {
      const arrivalsBefore = stub.arrivals.length;
      const sentAt = performance.now();
      const requestId = await sendChat({
        running,
        token: options.token,
        project: options.project,
        content: prose[next++ % prose.length].text,
      });
      const outcome = await awaitModel({ prisma, stub, requestId, sentAt, arrivalsBefore });
      await waitForAnswer(prisma, requestId);
      if (outcome.kind === 'answered') {
        const gist = outcome.content.replace(/\s+/g, ' ').slice(0, 70);
        withoutModel.set(gist, (withoutModel.get(gist) ?? 0) + 1);
      }
      return outcome;
    };
    // The check: the first message the model gets must carry indexed code (paths under packages/).
    let check: ChatOutcome = { kind: 'timeout' };
    for (let attempt = 0; attempt < 10; attempt += 1) {
      check = await ask();
      if (check.kind !== 'answered') break;
    }
    if (check.kind !== 'model' || !check.prompt.includes('packages/')) {
      const why =
        check.kind === 'model'
          ? 'the model was called but its prompt holds no indexed code'
          : check.kind === 'answered'
            ? 'every message was answered without the model'
            : 'no model call and no answer within 30 s';
      console.log(`  skipped: aiAction with a REPOSITORY item does not put searched code into the prompt (${why})`);
      return;
    }
    await ask();
    const latencies: number[] = [];
    let sent = 0;
    const answeredBefore = [...withoutModel.values()].reduce((sum, count) => sum + count, 0);
    while (latencies.length < CHAT_MESSAGES && sent < CHAT_MESSAGES * 3) {
      const outcome = await ask();
      sent += 1;
      if (outcome.kind === 'model') latencies.push(outcome.latency);
    }
    const answered = [...withoutModel.values()].reduce((sum, count) => sum + count, 0) - answeredBefore;
    console.log(
      `  aiAction (REPOSITORY item) sent → model request arrives; role all, one message at a time after 2 untimed that reached the model`,
    );
    console.log(
      `    ${spread(latencies)}   (${latencies.length} messages reached the model; ${answered} more of the ${sent} sent were answered ` +
        `without it)`,
    );
    for (const [gist, count] of withoutModel) console.log(`    answered without the model ×${count}: "${gist}…"`);
  } finally {
    await running.close();
    await stub.close();
    await deleteRedisKeys(redisPrefix);
  }
}

const KEEP = process.env.BENCH_SEARCH_KEEP?.trim() || null;
if (KEEP !== null && !/^[a-z0-9_]{1,30}$/.test(KEEP)) throw new Error('BENCH_SEARCH_KEEP: 1 to 30 of a-z, 0-9 and _');
/** What a kept database was built from: reused only when it matches this run. */
const KEPT_FROM = JSON.stringify({ specs: SPECS, chunks: LARGE_CHUNKS });

type Kept = { token: string; projectId: number };

/** The kept database's build, when it holds a finished one made from the same packages and size. */
async function keptBuild(name: string): Promise<Kept | null> {
  const exists = await withClient(ADMIN_URL, (client) => client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
  if (!exists.rowCount) return null;
  const rows = await withClient(databaseUrl(name), async (client) => {
    const table = await client.query<{ name: string | null }>("SELECT to_regclass('bench_keep')::text AS name");
    if (!table.rows[0].name) return [];
    return (await client.query<{ token: string; project_id: number; built_from: string }>('SELECT * FROM bench_keep')).rows;
  });
  const row = rows[0];
  return row && row.built_from === KEPT_FROM ? { token: row.token, projectId: row.project_id } : null;
}

async function markKept(url: string, kept: Kept): Promise<void> {
  await withClient(url, async (client) => {
    await client.query('CREATE TABLE bench_keep (token text NOT NULL, project_id int NOT NULL, built_from text NOT NULL)');
    await client.query('INSERT INTO bench_keep VALUES ($1, $2, $3)', [kept.token, kept.projectId, KEPT_FROM]);
  });
}

/** A run on a kept database: size 2 as it was left, then its chat unless chatMessages is 0. */
async function measureKept(options: { url: string; dataDir: string; redisPrefix: string; kept: Kept; benchStarted: number }) {
  const running = await start({ databaseUrl: options.url, dataDir: options.dataDir, redisPrefix: options.redisPrefix, role: 'api' });
  let closed = false;
  try {
    const { prisma, embedder, queues } = running.services;
    const project = await prisma.project.findUniqueOrThrow({ where: { id: options.kept.projectId } });
    const readiness = await indexReadiness({ prisma, queues, project, startIndexing: false });
    if (readiness.status !== 'ready') throw new Error(`kept index not ready: ${readiness.message}`);
    const status = execFileSync('git', ['-C', PROJECT_ROOT, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim();
    console.log(
      `duo-slice codebase search on the kept database ${KEEP} (BENCH_SEARCH_KEEP), ${os.cpus().length} cores, node ` +
        `${process.version}, embedder ${embedder.version}, revision ${git(PROJECT_ROOT, 'rev-parse', '--short', 'HEAD')}` +
        `${status ? ' with uncommitted changes to src' : ''}`,
    );
    const questions = await makeQuestions(options.url, readiness.scope.snapshotId);
    console.log(`\nsize 2 (kept): ${await describeData(options.url, readiness.scope.snapshotId)}`);
    const fixture: Fixture = { running, token: options.kept.token, project, scope: readiness.scope, databaseUrl: options.url };
    const large = await measureSize(fixture, questions);
    await running.close();
    closed = true;
    if (CHAT_MESSAGES > 0) {
      console.log('  chat with repository context (role all, the api service stopped)');
      await measureChat({
        databaseUrl: options.url,
        dataDir: options.dataDir,
        project,
        token: options.kept.token,
        questions: questions.timed,
      });
    }
    console.log(`\n${load()}; bench ran ${((performance.now() - options.benchStarted) / 1000).toFixed(0)} s`);
    reportLarge(large);
  } finally {
    if (!closed) await running.close();
  }
}

async function main(): Promise<void> {
  const benchStarted = performance.now();
  const name = KEEP ? `duo_bench_keep_${KEEP}` : `duo_bench_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  const redisPrefix = `duobench:${randomBytes(5).toString('hex')}`;
  const keptDir = KEEP ? path.join(os.tmpdir(), `duo-bench-keep-${KEEP}`) : null;
  const kept = KEEP ? await keptBuild(name) : null;
  if (kept && keptDir && existsSync(keptDir)) {
    try {
      await measureKept({ url, dataDir: keptDir, redisPrefix, kept, benchStarted });
    } finally {
      await deleteRedisKeys(redisPrefix);
    }
    return;
  }
  const monorepo = await materializeMonorepo();
  if (KEEP) await withClient(ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  await withClient(ADMIN_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  if (keptDir) rmSync(keptDir, { recursive: true, force: true });
  if (keptDir) mkdirSync(keptDir, { recursive: true });
  const dataDir = keptDir ?? mkdtempSync(path.join(os.tmpdir(), 'duo-bench-'));
  let running: RunningService | null = null;
  try {
    running = await start({ databaseUrl: url, dataDir, redisPrefix, role: 'api' });
    const { prisma, embedder, logger, queues } = running.services;
    const { token, project } = await seedProject(prisma, monorepo.repository);
    const version = (
      await withClient(url, (client) =>
        client.query<{ version: string }>(
          "SELECT current_setting('server_version') AS version, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector",
        ),
      )
    ).rows[0] as unknown as { version: string; vector: string };
    console.log(
      `duo-slice codebase search, ${os.cpus().length} cores, node ${process.version}, PostgreSQL ${version.version}, pgvector ` +
        `${version.vector}, embedder ${embedder.version}`,
    );
    const status = execFileSync('git', ['-C', PROJECT_ROOT, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' });
    const dirty = status
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    console.log(
      `revision ${git(PROJECT_ROOT, 'rev-parse', '--short', 'HEAD')}` +
        `${dirty.length ? `, with uncommitted changes to ${dirty.join(', ')}` : ''}`,
    );
    console.log(
      `data: ${SPECS.join(', ')} committed as one monorepo (${monorepo.files} files, ${monorepo.megabytes.toFixed(1)} MB), indexed by ` +
        `indexRepository (tree-sitter chunks, lexical embedder)`,
    );

    let started = performance.now();
    const { result, failures } = await indexWithRetries({ prisma, embedder, logger, dataDir, projectId: project.id, ref: 'main' });
    if (result.outcome !== 'indexed') throw new Error(`indexing did not index: ${JSON.stringify(result)}`);
    console.log(
      `  indexed in ${((performance.now() - started) / 1000).toFixed(1)} ` +
        `s${failures.length ? `, after ${failures.length} failed run(s): ${failures.join('; ')}` : ''}`,
    );
    // Read again: the run moved the project into the HNSW graph (projects.vector_graph), and a scope
    // taken from the row read before it would send vectorRanking to the empty inline table.
    const indexed = await prisma.project.findUniqueOrThrow({ where: { id: project.id } });
    const readiness = await indexReadiness({ prisma, queues, project: indexed, startIndexing: false });
    if (readiness.status !== 'ready') throw new Error(`index not ready: ${readiness.message}`);
    const fixture: Fixture = { running, token, project: indexed, scope: readiness.scope, databaseUrl: url };
    await vacuumAnalyze(url);
    const questions = await makeQuestions(url, readiness.scope.snapshotId);
    console.log(
      `  ${questions.timed.length} questions from symbol names (and ${questions.warmUp.length} for the warm-up), e.g. ${questions.timed
        .slice(0, 6)
        .map((question) => JSON.stringify(question.text))
        .join(', ')}`,
    );

    console.log(`\nsize 1: ${await describeData(url, readiness.scope.snapshotId)}`);
    await measureSize(fixture, questions);
    console.log('  chat with repository context (the service with role all beside this one, same database)');
    await measureChat({ databaseUrl: url, dataDir, project, token, questions: questions.timed });

    const realChunks = Number(
      (await withClient(url, (client) => client.query<{ count: string }>('SELECT count(*) AS count FROM code_chunks'))).rows[0].count,
    );
    const copies = Math.max(1, Math.round(LARGE_CHUNKS / realChunks) - 1);
    started = performance.now();
    const copied = await replicate({ url, projectId: project.id, snapshotId: readiness.scope.snapshotId, copies });
    await vacuumAnalyze(url);
    // The copies went into the same snapshot, which the service never does (a snapshot never changes): its kept keyword index is stale.
    configureLexicalCache(SEARCH_INDEX_CACHE_BYTES);
    console.log(
      `\nsize 2: the real snapshot plus ${copies} noisy copies made in SQL (mirror-<n>/…, vectors ≈0.97 cosine to the originals)`,
    );
    console.log(
      `  copied in ${copied.seconds.toFixed(1)} s (HNSW rebuild ${copied.rebuildSeconds.toFixed(1)} s), VACUUM ANALYZE, ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s in all`,
    );
    console.log(`  ${await describeData(url, readiness.scope.snapshotId)}`);
    console.log(
      "  (copies share their text: the text ranking's 50 candidates are about 5 chunks × 10 copies, so hit rates here say little)",
    );
    if (KEEP) await markKept(url, { token, projectId: project.id });
    const large = await measureSize(fixture, questions);

    await running.close();
    running = null;
    console.log('  chat with repository context (role all, the api service stopped)');
    await measureChat({ databaseUrl: url, dataDir, project, token, questions: questions.timed });
    console.log(`\n${load()}; bench ran ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`);
    if (KEEP) console.log(`kept for later runs (BENCH_SEARCH_KEEP=${KEEP}): database ${name}, data folder ${dataDir}`);
    reportLarge(large);
  } finally {
    await running?.close();
    await deleteRedisKeys(redisPrefix);
    if (!KEEP) {
      rmSync(dataDir, { recursive: true, force: true });
      await withClient(ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    }
  }
}

// --- A company's instance: many projects (`fleet`), or one large project on the embedded database (`embedded`) ---

type FleetArgs = { mode: 'fleet' | 'embedded'; shape: FleetShape; questions: number; runs: number };

function fleetArgs(): FleetArgs | null {
  const mode = process.argv[2];
  if (mode !== 'fleet' && mode !== 'embedded') return null;
  const numbers = process.argv.slice(3).map(Number);
  const shape =
    mode === 'fleet'
      ? { projects: numbers[0] || 1000, chunksPerProject: numbers[1] || 1000 }
      : { projects: 1, chunksPerProject: numbers[0] || 25_000 };
  const rest = mode === 'fleet' ? numbers.slice(2) : numbers.slice(1);
  return { mode, shape, questions: rest[0] || 200, runs: rest[1] || 3 };
}

/**
 * BENCH_FLEET_KEYWORD=rebuild: each run starts without stored keyword indexes (a search that builds one
 * still stores it, for later questions about the same project), to measure how search did before they were stored.
 */
const REBUILD_KEYWORD_INDEXES = process.env.BENCH_FLEET_KEYWORD === 'rebuild';

/**
 * Untimed questions before each run's timed ones, BENCH_FLEET_WARM_UP (V8 compiles the path; the keyword cache fills as a
 * running service's would).
 */
const FLEET_WARM_UP = Number(process.env.BENCH_FLEET_WARM_UP ?? 100);

type FleetQuestion = { projectId: number; fullPath: string; text: string; path: string };

async function fleetQuestions(prisma: PrismaClient, fleet: Fleet, count: number, seed: number): Promise<FleetQuestion[]> {
  const random = createRandom(seed);
  const questions: FleetQuestion[] = [];
  for (let index = 0; index < count; index += 1) {
    const project = fleet.projects[Math.floor(random() * fleet.projects.length)];
    const { symbol, path: file } = await symbolOf(prisma, project.id, random);
    const parts = symbol.split('.');
    const text = TEMPLATES[index % TEMPLATES.length].make({
      name: parts.at(-1)!,
      qualified: symbol,
      owner: parts.length > 1 ? parts.at(-2)! : '',
      pkg: file.split('/')[1] ?? 'the repository',
    });
    questions.push({ projectId: project.id, fullPath: project.fullPath, text, path: file });
  }
  return questions;
}

async function scopeOf(running: RunningService, projectId: number): Promise<ReadyScope> {
  const { prisma, queues } = running.services;
  const project = await prisma.project.findUniqueOrThrow({ where: { id: projectId } });
  const readiness = await indexReadiness({ prisma, queues, project, startIndexing: false });
  if (readiness.status !== 'ready') throw new Error(`project ${projectId} is not ready: ${readiness.message}`);
  return readiness.scope;
}

/**
 * `fleet`: `projects` projects of `chunksPerProject` chunks each on PostgreSQL, in the database
 * duo_bench_fleet_<projects>x<chunks> (BENCH_FLEET_DB), kept for later runs: a run finds the built
 * projects and builds only the missing ones. `embedded`: one project of `chunks` chunks on the
 * embedded database (PGlite) in the folder duo-bench-embedded-<chunks> under the system temp folder
 * (BENCH_FLEET_DIR), kept likewise. Then `runs` runs, each on a newly started service (role api,
 * SEARCH_INDEX_CACHE_MB as configured, default 256): FLEET_WARM_UP untimed questions, then
 * `questions` timed ones, each about a random project: searchCode in this process with its two
 * rankings timed apart (vector: embed + statement; keyword: the snapshot's index, built when the
 * process does not keep it, + BM25), then as many questions over GraphQL (HTTP). Last, EXPLAIN
 * ANALYZE of the vector statement for one project.
 */
async function fleetMain(args: FleetArgs): Promise<void> {
  const benchStarted = performance.now();
  const { shape } = args;
  const redisPrefix = `duobench:${randomBytes(5).toString('hex')}`;
  const embedded = args.mode === 'embedded';
  const name = process.env.BENCH_FLEET_DB?.trim() || `duo_bench_fleet_${shape.projects}x${shape.chunksPerProject}`;
  if (!/^[a-z0-9_]{1,60}$/.test(name)) throw new Error('BENCH_FLEET_DB: 1 to 60 of a-z, 0-9 and _');
  const dataDir = embedded
    ? process.env.BENCH_FLEET_DIR?.trim() || path.join(os.tmpdir(), `duo-bench-embedded-${shape.chunksPerProject}`)
    : mkdtempSync(path.join(os.tmpdir(), 'duo-bench-'));
  const url = databaseUrl(name);
  if (!embedded) {
    const exists = await withClient(ADMIN_URL, (client) => client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
    if (!exists.rowCount) await withClient(ADMIN_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  }
  mkdirSync(dataDir, { recursive: true });
  // The build's statements (a thousand chunks a batch, the embedded database's promotion to the graph) outlast a request's limit.
  const startFleet = (build = false) => {
    const config = loadConfig({
      ...(build ? { DATABASE_REQUEST_TIMEOUT_MS: '600000' } : {}),
      PORT: '0',
      HOST: '127.0.0.1',
      ...(embedded ? {} : { DATABASE_URL: url }),
      DATA_DIR: dataDir,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      LOG_LEVEL: 'warn',
      DEMO_SEED: 'false',
      RATE_LIMIT_PER_MINUTE: '10000000',
      ...(process.env.SEARCH_INDEX_CACHE_MB ? { SEARCH_INDEX_CACHE_MB: process.env.SEARCH_INDEX_CACHE_MB } : {}),
    });
    return startService({ config, logger: createLogger(config.logLevel), role: 'api' });
  };
  try {
    let running = await startFleet(true);
    const { embedder } = running.services;
    if (!(embedder instanceof LexicalEmbedder)) throw new Error('the fleet is built with the lexical embedder (the default)');
    console.log(
      `duo-slice codebase search, ${args.mode}: ${shape.projects} project(s) × ${shape.chunksPerProject} chunks, ` +
        `${os.cpus().length} cores, node ${process.version}, embedder ${embedder.version}, revision ` +
        `${git(PROJECT_ROOT, 'rev-parse', '--short', 'HEAD')}; ${embedded ? `data folder ${dataDir}` : `database ${name}`}`,
    );
    console.log(`  (${load()} before the build)`);
    const fleet = await buildFleet({
      prisma: running.services.prisma,
      embedder,
      shape,
      log: (line) => console.log(line),
      // The embedded database is one session: shorter statements, as its index runs write (INDEX_TRANSACTION_CHUNKS).
      batchChunks: embedded ? 200 : 1000,
    });
    const totals = await running.services.prisma.$queryRawUnsafe<Array<{ chunks: bigint; files: bigint; vectors: bigint }>>(
      `SELECT (SELECT count(*) FROM code_chunks) AS chunks, (SELECT count(*) FROM code_index_files) AS files,
              (SELECT count(*) FROM code_chunk_vectors) AS vectors`,
    );
    console.log(
      `  ${fleet.built ? `built ${fleet.built} project(s) in ${fleet.seconds.toFixed(0)} s` : 'all projects were built already'}: ` +
        `${totals[0].chunks} chunks (${totals[0].vectors} vectors inline, the rest in the HNSW graph), ${totals[0].files} files; ${load()}`,
    );
    // The statistics a service keeps: after each index run the worker has the code tables analyzed (or autovacuum
    // does). Without them the planner took a project's 1,000 inline vectors for 135,000 and sent a
    // parallel plan with JIT compilation to each search (200-300 ms instead of a few).
    if (fleet.built && !embedded) await vacuumAnalyze(url);
    const analyzed = await refreshTableStatistics(running.services.prisma, { tables: [...CODE_INDEX_TABLES] });
    if (analyzed.length) console.log(`  analyzed ${analyzed.join(', ')} (statistics missing or stale)`);
    await running.close();
    const perRun: Array<Record<'total' | 'vector' | 'keyword' | 'http', number[]> & { built: number }> = [];
    for (let run = 0; run < args.runs; run += 1) {
      running = await startFleet();
      // As before keyword indexes were stored: every index this process does not hold is built from the chunks.
      if (REBUILD_KEYWORD_INDEXES) await running.services.prisma.$executeRawUnsafe('DELETE FROM code_snapshot_keyword_indexes');
      const { prisma } = running.services;
      const scopes = new Map<number, ReadyScope>();
      const scope = async (projectId: number) => {
        let found = scopes.get(projectId);
        if (!found) scopes.set(projectId, (found = await scopeOf(running, projectId)));
        return found;
      };
      const all = await fleetQuestions(prisma, fleet, FLEET_WARM_UP + 2 * args.questions, 4242 + run);
      const ask = async (question: FleetQuestion, timings?: SearchTimings) =>
        searchCode({
          ...running.services,
          scope: await scope(question.projectId),
          query: question.text,
          limit: HITS,
          candidates: CANDIDATES,
          timings,
        });
      for (const question of all.slice(0, FLEET_WARM_UP)) await ask(question);
      const figures = { total: [] as number[], vector: [] as number[], keyword: [] as number[], http: [] as number[], built: 0 };
      let found = 0;
      const cpuBefore = cpuMs();
      for (const question of all.slice(FLEET_WARM_UP, FLEET_WARM_UP + args.questions)) {
        await scope(question.projectId);
        const timings: SearchTimings = {};
        const started = performance.now();
        const result = await ask(question, timings);
        figures.total.push(performance.now() - started);
        figures.vector.push(timings.vectorMs ?? Number.NaN);
        figures.keyword.push(timings.keywordMs ?? Number.NaN);
        if (timings.keywordIndexBuilt) figures.built += 1;
        if (result.files.some((file) => file.path === question.path)) found += 1;
      }
      const cpuPerSearch = (cpuMs() - cpuBefore) / args.questions;
      const fixture = { running, token: fleet.token } as Fixture;
      for (const question of all.slice(FLEET_WARM_UP + args.questions)) {
        const started = performance.now();
        await searchOverHttp({ ...fixture, project: { fullPath: question.fullPath } as Project }, question.text);
        figures.http.push(performance.now() - started);
      }
      perRun.push(figures);
      console.log(
        `\n  run ${run + 1}: ${args.questions} questions about random projects after ${FLEET_WARM_UP} untimed; ` +
          `${figures.built} built the project's keyword index (not kept by this process); the symbol's file among the hits ` +
          `${found}/${args.questions}; ${load()}`,
      );
      console.log(`    searchCode, in-process  ${spread(figures.total)}   this process's CPU ${cpuPerSearch.toFixed(1)} ms a search`);
      console.log(`      vector (embed + SQL)  ${spread(figures.vector)}`);
      console.log(`      keyword (index + BM25)${spread(figures.keyword)}`);
      console.log(`    codebaseSearch, GraphQL ${spread(figures.http)}   (other random questions)`);
      if (run === args.runs - 1) {
        const question = all[FLEET_WARM_UP];
        const [vector] = await running.services.embedder.embed([question.text]);
        const plan = (await vectorRankingWithOccurrences(prisma, await scope(question.projectId), vector, CANDIDATES, {
          explain: 'analyze',
        })) as unknown as PlanRow[];
        console.log(`\n  EXPLAIN ANALYZE of the vector statement for project ${question.fullPath}:`);
        for (const row of plan) console.log(`    ${row['QUERY PLAN']}`);
      }
      await running.close();
    }
    const over = (key: 'total' | 'vector' | 'keyword' | 'http', p: number) => median(perRun.map((figures) => percentile(figures[key], p)));
    const benchSeconds = ((performance.now() - benchStarted) / 1000).toFixed(0);
    console.log(`\nmedian over ${args.runs} runs of each run's p50 / p95 (${load()}; bench ran ${benchSeconds} s):`);
    for (const key of ['total', 'vector', 'keyword', 'http'] as const)
      console.log(`  ${key.padEnd(8)} p50 ${ms(over(key, 50))}   p95 ${ms(over(key, 95))}`);
    const target = embedded ? 100 : 50;
    const shapeName = embedded
      ? `embedded, ${shape.chunksPerProject} chunks`
      : `${shape.projects} projects × ${shape.chunksPerProject} chunks`;
    reportFigures([
      {
        figure: `codebaseSearch p95, ${shapeName}, in-process / GraphQL`,
        target: `${target} ms`,
        result: `${over('total', 95).toFixed(1)} / ${over('http', 95).toFixed(1)} ms`,
        met: over('total', 95) < target && over('http', 95) < target,
      },
    ]);
  } finally {
    await deleteRedisKeys(redisPrefix);
    if (!embedded) rmSync(dataDir, { recursive: true, force: true });
  }
}

const fleetMode = fleetArgs();
runBench(fleetMode ? () => fleetMain(fleetMode) : main);

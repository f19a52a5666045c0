import { NPM_REGISTRY_REACHABLE } from '../helpers/network';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { runCli } from '../helpers/run-cli';
import { startStubRerankerServer } from '../helpers/stub-reranker-server';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';

// `npm run eval:retrieval` as someone measuring search runs it: a real git repository, a real
// database, the default lexical embedder; the temporary projects are gone afterwards, also when
// the run fails.
const FILES: Record<string, string> = {
  'src/pool.ts': `/** Hands out idle connections and queues callers when every connection is busy. */
export class ConnectionPool {
  private readonly idle: Connection[] = [];
  private readonly waiting: Array<(connection: Connection) => void> = [];

  acquireConnection(callback: (connection: Connection) => void): void {
    const connection = this.idle.pop();
    if (connection) callback(connection);
    else this.waiting.push(callback);
  }

  releaseConnection(connection: Connection): void {
    const next = this.waiting.shift();
    if (next) next(connection);
    else this.idle.push(connection);
  }
}

type Connection = { id: number };
`,
  'src/packet-parser.ts': `/** Reads MySQL wire packets: a three byte length and a sequence number, then the payload. */
export function parseLengthEncodedInteger(buffer: Buffer, offset: number): number {
  const first = buffer[offset]!;
  if (first < 0xfb) return first;
  if (first === 0xfc) return buffer.readUInt16LE(offset + 1);
  if (first === 0xfd) return buffer.readUIntLE(offset + 1, 3);
  return Number(buffer.readBigUInt64LE(offset + 1));
}

export function packetSequenceNumber(header: Buffer): number {
  return header[3]!;
}
`,
  'src/query-timeout.ts': `/** Fails a query that runs longer than its timeout with a PROTOCOL_SEQUENCE_TIMEOUT error. */
export function startQueryTimer(timeoutMs: number, onTimeout: (error: Error) => void): NodeJS.Timeout {
  return setTimeout(() => {
    const error = Object.assign(new Error(\`Query inactivity timeout after \${timeoutMs} ms\`), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' });
    onTimeout(error);
  }, timeoutMs);
}
`,
  'docs/pool.md': `# The connection pool

The pool hands out an idle connection when it has one. When every connection is busy, callers wait in
a queue until a connection is released.
`,
  'scripts/retry.py': `import time


def retry_with_backoff(operation, attempts=3, base_delay=0.5):
    """Calls operation until it succeeds, doubling the backoff delay after each failure."""
    for attempt in range(attempts):
        try:
            return operation()
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(base_delay * 2 ** attempt)
`,
};

const QUESTIONS = [
  {
    q: 'How does the pool hand out an idle connection, and what happens to callers when every connection is busy?',
    files: ['src/pool.ts'],
  },
  { q: 'How are length encoded integers decoded from a packet?', files: ['src/packet-parser.ts'] },
  { q: 'What error does a query get when its timeout expires?', files: ['src/query-timeout.ts'] },
  { q: 'How long is the backoff delay between retries?', files: ['scripts/retry.py'] },
];

const MODES = ['vector', 'text', 'hybrid'];
const STRATEGIES = ['tree-sitter', 'lines', 'whole-file'];

describe('npm run eval:retrieval', () => {
  let database: TestDatabase;
  let dataDir: string;
  let workDir: string;
  let setsFile: string;
  let badSetsFile: string;
  let repo: GitRepo;
  let questionsFile: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-eval-cli-'));
    workDir = mkdtempSync(path.join(os.tmpdir(), 'duo-eval-cli-work-'));
    writeFileSync(
      path.join(workDir, 'ms.jsonl'),
      `${JSON.stringify({ q: 'How are milliseconds turned into a short string like 2d?', files: ['index.js'] })}\n`,
    );
    setsFile = path.join(workDir, 'sets.json');
    writeFileSync(
      setsFile,
      JSON.stringify([{ name: 'ms', language: 'JavaScript', role: 'tuning', npm: 'ms@2.1.3', questions: 'ms.jsonl' }]),
    );
    badSetsFile = path.join(workDir, 'bad-sets.json');
    writeFileSync(badSetsFile, JSON.stringify([{ name: 'ms', language: 'JavaScript', role: 'tuning', questions: 'ms.jsonl' }]));
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir };
    repo = createGitRepo(FILES);
    questionsFile = path.join(workDir, 'questions.jsonl');
    writeFileSync(questionsFile, `${QUESTIONS.map((question) => JSON.stringify(question)).join('\n')}\n`);
  });
  afterAll(async () => {
    await database.drop();
    repo.destroy();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  });

  const evaluate = (args: string[], extraEnv: Record<string, string> = {}) => runCli('eval-retrieval', args, { ...env, ...extraEnv });

  /** What the evaluation left in the database: it should leave nothing. */
  async function leftovers(): Promise<{ groups: number; projects: number; chunks: number; indexes: number }> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT (SELECT count(*) FROM groups WHERE path LIKE 'eval-retrieval-%')::int AS groups, (SELECT count(*) FROM projects)::int AS
        projects,
                (SELECT count(*) FROM code_chunks)::int AS chunks, (SELECT count(*) FROM code_indexes)::int AS indexes`,
      );
      return rows[0];
    } finally {
      await client.end();
    }
  }

  it(
    'indexes once per strategy, asks every question in every mode, prints the table and the index sizes, writes --json and removes its ' +
      'projects',
    async () => {
      const jsonFile = path.join(workDir, 'out.json');
      const result = await evaluate(['--repo', repo.path, '--questions', questionsFile, '--json', jsonFile]);
      expect(result.stderr).not.toMatch(/error|warning/i);
      expect(result.code).toBe(0);

      const lines = result.stdout.split('\n');
      expect(lines[0]).toBe(`Retrieval on ${repo.path} at ${repo.head().slice(0, 12)}: 4 questions, embedder lexical-v2-512`);
      expect(lines[2]).toMatch(/^strategy +mode +R@1 +R@5 +R@10 +MRR +p50 ms +p95 ms$/);
      // The keyword baseline (BM25 over whole files) first, then every strategy and mode.
      const rows = lines.slice(4, 14).map((line) => line.split(/ {2,}/));
      expect(rows.map((row) => [row[0], row[1]])).toEqual([
        ['files', 'bm25'],
        ...STRATEGIES.flatMap((strategy) => MODES.map((mode) => [strategy, mode])),
      ]);
      for (const row of rows) expect(row.slice(2, 6)).toEqual(row.slice(2, 6).map(() => expect.stringMatching(/^[01]\.\d{3}$/)));
      expect(lines[15]).toMatch(/^strategy +files +chunks +stored +index time +keyword index$/);
      expect(lines.slice(17, 20).map((line) => line.split(/ {2,}/)[0])).toEqual(STRATEGIES);
      expect(lines[19]).toMatch(/^whole-file +5 +5 +\d+\.\d\d MB +\d+\.\d s +\d+\.\d s$/);
      expect(result.stderr).toContain('tree-sitter vector: 100%, 4/4 questions');
      expect(result.stderr).toContain('removing the temporary projects of eval-retrieval-');

      const json = JSON.parse(readFileSync(jsonFile, 'utf8'));
      expect(json.source).toMatchObject({ repository: repo.path, ref: 'HEAD', commit: repo.head(), npm: null });
      expect(json.embedder).toBe('lexical-v2-512');
      expect(json.questions).toEqual(QUESTIONS);
      expect(json.indexes).toEqual(
        STRATEGIES.map((strategy) => ({
          strategy,
          files: 5,
          chunks: expect.any(Number),
          stored_bytes: expect.any(Number),
          duration_ms: expect.any(Number),
          keyword_index_ms: expect.any(Number),
        })),
      );
      expect(json.results).toHaveLength(10);
      expect(json.results[0]).toMatchObject({ strategy: 'files', mode: 'bm25' });
      for (const run of json.results) {
        expect(run.ranks).toHaveLength(4);
        expect(run.answers).toHaveLength(4);
        // Five files and words shared with every question: each right file is somewhere in the answer.
        expect(run.recall_at_10).toBe(1);
        // The figures are the ranks' own scores.
        const ranks = run.ranks as number[];
        expect(run.recall_at_1).toBe(ranks.filter((rank) => rank === 1).length / 4);
        expect(run.mrr).toBeCloseTo(ranks.reduce((sum, rank) => sum + 1 / rank, 0) / 4, 4);
        run.answers.forEach((answer: string[], index: number) => expect(answer[ranks[index] - 1]).toBe(QUESTIONS[index].files[0]));
      }
      // Exact identifiers in the question: full text puts the right file first.
      const text = json.results.find((run: { strategy: string; mode: string }) => run.strategy === 'tree-sitter' && run.mode === 'text');
      expect(text.ranks[1]).toBe(1);

      expect(await leftovers()).toEqual({ groups: 0, projects: 0, chunks: 0, indexes: 0 });
    },
  );

  it('runs only the strategies and modes asked for', async () => {
    const result = await evaluate([
      '--repo',
      repo.path,
      '--questions',
      questionsFile,
      '--strategy',
      'whole-file',
      '--mode',
      'text',
      '--mode',
      'vector',
    ]);
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\n').filter((line) => /^whole-file +(text|vector|hybrid) /.test(line));
    expect(rows.map((line) => line.split(/ +/)[1])).toEqual(['vector', 'text']);
    expect(result.stdout).not.toMatch(/^tree-sitter|^lines/m);
    expect(await leftovers()).toMatchObject({ groups: 0, projects: 0 });
  });

  it('uses the configured reranker in every search, says so, and counts the questions it failed on', async () => {
    const stub = await startStubRerankerServer();
    try {
      const jsonFile = path.join(workDir, 'reranked.json');
      const rerank = { RERANK_PROVIDER: 'cohere', RERANK_URL: `${stub.url}/v1`, RERANK_MODEL: 'stub-reranker', RERANK_TOP_N: '5' };
      const args = ['--repo', repo.path, '--questions', questionsFile, '--strategy', 'whole-file', '--mode', 'hybrid'];
      const result = await evaluate([...args, '--json', jsonFile], rerank);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('reranker cohere stub-reranker: the best 5 files, weight 0.5, 1200 characters per file');
      expect(result.stdout).not.toContain('the reranker failed');
      // Every question reached the reranker, with at most RERANK_TOP_N files.
      expect(stub.requests.map((request) => request.body.query)).toEqual(QUESTIONS.map((question) => question.q));
      expect(stub.requests.every((request) => request.body.documents!.length >= 2 && request.body.documents!.length <= 5)).toBe(true);
      const json = JSON.parse(readFileSync(jsonFile, 'utf8')) as {
        reranker: unknown;
        results: Array<{ mode: string; rerank_failures?: number }>;
      };
      expect(json.reranker).toEqual({ provider: 'cohere', model: 'stub-reranker', candidates: 5, weight: 0.5, max_chars: 1200 });
      expect(json.results.find((run) => run.mode === 'hybrid')).toMatchObject({ rerank_failures: 0 });

      // A reranker that refuses every request: the questions are scored in the search's own order, and counted.
      stub.reset();
      stub.script(...QUESTIONS.map(() => ({ kind: 'status' as const, status: 400 })));
      const failing = await evaluate(args, rerank);
      expect(failing.code).toBe(0);
      expect(failing.stdout).toContain(`the reranker failed on ${QUESTIONS.length} of ${QUESTIONS.length} questions in whole-file hybrid`);
      expect(failing.stderr).toContain('"event":"code_search_rerank_failed"');
      expect(await leftovers()).toMatchObject({ groups: 0, projects: 0 });
    } finally {
      await stub.close();
    }
  });

  it('scores --neutral files as neither right nor wrong and keeps --exclude files out of the index', async () => {
    const neutralFile = path.join(workDir, 'neutral.json');
    const neutral = await evaluate([
      '--repo',
      repo.path,
      '--questions',
      questionsFile,
      '--strategy',
      'lines',
      '--mode',
      'vector',
      '--neutral',
      '*.md',
      '--json',
      neutralFile,
    ]);
    expect(neutral.code).toBe(0);
    expect(neutral.stdout.split('\n')[0]).toMatch(/, \*\.md scored as neutral$/);
    const scored = JSON.parse(readFileSync(neutralFile, 'utf8'));
    expect(scored.neutral).toEqual(['*.md']);
    expect(scored.indexes[0].files).toBe(5);
    expect(scored.results[0].answers.flat()).not.toContain('docs/pool.md');
    expect(scored.results[0].answers.flat()).toContain('src/pool.ts');

    const excludedFile = path.join(workDir, 'excluded.json');
    const excluded = await evaluate([
      '--repo',
      repo.path,
      '--questions',
      questionsFile,
      '--strategy',
      'lines',
      '--mode',
      'vector',
      '--exclude',
      'docs/',
      '--json',
      excludedFile,
    ]);
    expect(excluded.code).toBe(0);
    expect(excluded.stdout.split('\n')[0]).toMatch(/, excluding docs\/$/);
    const json = JSON.parse(readFileSync(excludedFile, 'utf8'));
    expect(json.indexes[0].files).toBe(4);
    expect(json.results[0].answers.flat()).not.toContain('docs/pool.md');
    expect(await leftovers()).toMatchObject({ groups: 0, projects: 0 });
  });

  // A list of sets (data/retrieval-eval/sets.json's format): each source made into a repository, one table of all.
  (NPM_REGISTRY_REACHABLE ? it : it.skip)(
    'evaluates every set of a list in one table, each with its baseline (needs the npm registry)',
    async () => {
      const result = await evaluate(['--sets', setsFile, '--strategy', 'whole-file', '--mode', 'text', '--mode', 'hybrid']);
      expect(result.code).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines[0]).toBe('Retrieval on 1 question sets, embedder lexical-v2-512; search time per question in ms');
      expect(lines[2]).toMatch(/^set +strategy +mode +R@1 +R@5 +R@10 +MRR +p50 ms +p95 ms$/);
      expect(lines.slice(4, 7).map((line) => line.split(/ {2,}/).slice(0, 3))).toEqual([
        ['ms', 'files', 'bm25'],
        ['ms', 'whole-file', 'text'],
        ['ms', 'whole-file', 'hybrid'],
      ]);
      expect(lines[8]).toMatch(/^set +strategy +files +chunks +stored +index time +keyword index$/);
      expect(result.stderr).toContain('ms (JavaScript, tuning):');
      expect(await leftovers()).toMatchObject({ groups: 0, projects: 0 });
    },
    120_000,
  );

  // A set whose source is a local repository (the training corpus's sets.json), with two query vocabularies compared on one index.
  it('evaluates a set of a local repository, one row per mode and vocabulary', async () => {
    const localSets = path.join(workDir, 'local-sets.json');
    writeFileSync(
      localSets,
      JSON.stringify([
        { name: 'local', language: 'TypeScript', role: 'held-out', repo: path.relative(workDir, repo.path), questions: 'questions.jsonl' },
      ]),
    );
    const result = await evaluate([
      '--sets',
      localSets,
      '--strategy',
      'whole-file',
      '--mode',
      'text',
      '--vocabulary',
      'hand',
      '--vocabulary',
      'none',
    ]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.slice(4, 7).map((line) => line.split(/ {2,}/).slice(0, 3))).toEqual([
      ['local', 'files', 'bm25'],
      ['local', 'whole-file', 'text hand'],
      ['local', 'whole-file', 'text none'],
    ]);
    expect(result.stderr).toContain('local (TypeScript, held-out):');
    expect(await leftovers()).toMatchObject({ groups: 0, projects: 0 });
  }, 120_000);

  it('removes its projects when indexing fails midway, and exits 1 with the reason', async () => {
    // An OpenAI-compatible embeddings endpoint that refuses every request with the real error format.
    const server = http.createServer((_request, response) => {
      response
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'the model is not loaded', type: 'invalid_request_error' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await evaluate(['--repo', repo.path, '--questions', questionsFile], {
        EMBEDDINGS_PROVIDER: 'openai',
        EMBEDDINGS_BASE_URL: `http://127.0.0.1:${port}/v1`,
        EMBEDDINGS_MODEL: 'stub-embedder',
        EMBEDDINGS_DIMENSIONS: '8',
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('removing the temporary projects of eval-retrieval-');
      expect(result.stderr).toMatch(/^error: /m);
      expect(result.stdout).toBe('');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await leftovers()).toEqual({ groups: 0, projects: 0, chunks: 0, indexes: 0 });
  });

  it('refuses a bad questions file before touching the database, naming the line', async () => {
    const bad = path.join(workDir, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify(QUESTIONS[0])}\n\n{"q": "Where is the pool?", "files": "src/pool.ts"}\n`);
    const result = await evaluate(['--repo', repo.path, '--questions', bad]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: ${bad} line 3: "files" must be a non-empty array of paths\n`);
    expect(result.stdout).toBe('');
  });

  it.each([
    [
      'no source',
      () => ['--questions', questionsFile],
      2,
      /give exactly one of --repo, --npm and --sets[\s\S]*Usage: npm run eval:retrieval/,
    ],
    [
      'both sources',
      () => ['--repo', repo.path, '--npm', 'ms@2.1.3', '--questions', questionsFile],
      2,
      /give exactly one of --repo, --npm and --sets/,
    ],
    ['questions beside --sets', () => ['--sets', setsFile, '--questions', questionsFile], 2, /--questions goes with --repo or --npm/],
    [
      '--set without --sets',
      () => ['--repo', repo.path, '--questions', questionsFile, '--set', 'ms'],
      2,
      /--set and --role go with --sets/,
    ],
    ['an unknown set', () => ['--sets', setsFile, '--set', 'nope'], 2, /--set nope: .* has no such set \(it has ms\)/],
    ['an unknown role', () => ['--sets', setsFile, '--role', 'favourite'], 2, /--role must be tuning or held-out/],
    ['a set list naming no source', () => ['--sets', badSetsFile], 2, /0: needs exactly one of "npm", "debian" and "repo"/],
    [
      'an unknown vocabulary',
      () => ['--repo', repo.path, '--questions', questionsFile, '--vocabulary', 'thesaurus'],
      2,
      /--vocabulary must be one of hand, learned, hand\+learned, none \(got "thesaurus"\)/,
    ],
    ['no questions', () => ['--repo', repo.path], 2, /--questions is required/],
    [
      'an unknown strategy',
      () => ['--repo', repo.path, '--questions', questionsFile, '--strategy', 'ast'],
      2,
      /--strategy must be one of tree-sitter, lines, whole-file \(got "ast"\)/,
    ],
    [
      'a missing questions file',
      () => ['--repo', repo.path, '--questions', path.join(workDir, 'nope.jsonl')],
      2,
      /cannot read the questions file .*nope\.jsonl: ENOENT/,
    ],
    ['a directory that is not a git repository', () => ['--repo', workDir, '--questions', questionsFile], 1, /is not a git repository/],
    [
      'a ref the repository does not have',
      () => ['--repo', repo.path, '--questions', questionsFile, '--ref', 'no-such-branch'],
      1,
      /has no branch, tag or commit "no-such-branch"/,
    ],
  ])('refuses %s with a clear message and a non-zero exit', async (_name, args, code, message) => {
    const result = await evaluate(args());
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });
});

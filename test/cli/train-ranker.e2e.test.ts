import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { FEATURE_NAMES, parseRankerModel } from '../../src/search/file-features';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { runCli } from '../helpers/run-cli';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';

// `npm run train:ranker` as someone training the file ranker runs it: a corpus manifest naming git
// repositories and their questions, a real database, the default lexical embedder.
const PACKAGE_A: Record<string, string> = {
  'lib/pool.js':
    'function acquireConnection(pool) {\n  return pool.idle.pop() || pool.waiting.push(1);\n}\nmodule.exports = { acquireConnection };\n',
  'lib/retry.js':
    'function retryWithBackoff(operation, attempts) {\n  for (let attempt = 0; attempt < attempts; attempt++) operation();\n}\n',
  'lib/parser.js': 'function parsePacketHeader(buffer) {\n  return { length: buffer.readUIntLE(0, 3), sequence: buffer[3] };\n}\n',
};
const PACKAGE_B: Record<string, string> = {
  'src/cache.py': 'def evict_least_recently_used(cache, limit):\n    while len(cache) > limit:\n        cache.popitem(last=False)\n',
  'src/config.py': 'def load_settings_file(path):\n    with open(path) as handle:\n        return handle.read()\n',
};

describe('npm run train:ranker', () => {
  let database: TestDatabase;
  let workDir: string;
  let repos: GitRepo[];
  let manifest: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    workDir = mkdtempSync(path.join(os.tmpdir(), 'duo-train-ranker-'));
    repos = [createGitRepo(PACKAGE_A), createGitRepo(PACKAGE_B)];
    const questions = [
      [
        { q: 'How does the pool acquire a connection?', files: ['lib/pool.js'] },
        { q: 'How is an operation retried with backoff?', files: ['lib/retry.js'] },
        { q: 'How is a packet header parsed?', files: ['lib/parser.js'] },
      ],
      [
        { q: 'How is the least recently used entry evicted from the cache?', files: ['src/cache.py'] },
        { q: 'How is the settings file loaded?', files: ['src/config.py'] },
      ],
    ];
    questions.forEach((list, index) =>
      writeFileSync(path.join(workDir, `q${index}.jsonl`), list.map((question) => JSON.stringify(question)).join('\n')),
    );
    manifest = path.join(workDir, 'manifest.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        packages: [
          { name: 'a', language: 'JavaScript', repository: repos[0].path, questions: 'q0.jsonl', split: 'train' },
          { name: 'b', language: 'Python', repository: repos[1].path, questions: 'q1.jsonl', split: 'validation' },
        ],
      }),
    );
  });
  afterAll(async () => {
    await database.drop();
    for (const repo of repos) repo.destroy();
    rmSync(workDir, { recursive: true, force: true });
  });

  const train = (args: string[]) =>
    runCli('train-ranker', ['--corpus', manifest, '--features', path.join(workDir, 'features'), ...args], {
      DATABASE_URL: database.url,
      DATA_DIR: path.join(workDir, 'data'),
      REDIS_PREFIX: `train-ranker-${process.pid}:`,
    });

  it('indexes each package into a kept project, collects every question’s candidates, trains and writes the model', async () => {
    const out = path.join(workDir, 'model.json');
    const result = await train(['--out', out]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\n').map((line) => line.split(/ {2,}/));
    expect(rows[0]).toEqual(['examples', 'ranking', 'questions', 'in candidates', 'R@1', 'R@5', 'MRR']);
    expect(rows.slice(2, 6).map((row) => row.slice(0, 3))).toEqual([
      ['train', 'hand', '3'],
      ['train', 'learned', '3'],
      ['validation', 'hand', '2'],
      ['validation', 'learned', '2'],
    ]);
    const model = parseRankerModel(readFileSync(out, 'utf8'));
    expect(model.features).toEqual(FEATURE_NAMES);

    // The examples are kept per package, one line a question with a label and features per candidate.
    const kept = readdirSync(path.join(workDir, 'features'));
    expect(kept.sort()).toEqual([expect.stringMatching(/^corpus-a\./), expect.stringMatching(/^corpus-b\./)]);
    const examples = readFileSync(
      path.join(
        workDir,
        'features',
        kept.find((name) => name.startsWith('corpus-a'))!,
      ),
      'utf8',
    )
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(examples).toHaveLength(3);
    for (const example of examples) {
      expect(example.candidates.some((candidate: { relevant: boolean }) => candidate.relevant)).toBe(true);
      for (const candidate of example.candidates) expect(candidate.features).toHaveLength(FEATURE_NAMES.length);
    }

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows: projects } = await client.query(`SELECT full_path FROM projects ORDER BY full_path`);
      expect(projects.map((row) => row.full_path)).toEqual(['ranker-training/corpus-a', 'ranker-training/corpus-b']);
    } finally {
      await client.end();
    }
  });

  it('reports without writing a model on --dry-run, and refuses a manifest that is not one', async () => {
    const out = path.join(workDir, 'dry.json');
    const dry = await train(['--out', out, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(existsSync(out)).toBe(false);

    writeFileSync(manifest, JSON.stringify({ packages: [{ name: 'a', split: 'sometimes' }] }));
    const bad = await train(['--dry-run']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/manifest/);
  });
});

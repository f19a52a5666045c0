import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatDuration, ProgressBar } from '../../src/progress-bar';
import type { Database } from '../../src/db/database';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { unique } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { runCli } from '../helpers/run-cli';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../helpers/test-database';

// `npm run index` as an operator runs it: a process on a real repository and database, progress
// and a summary on stderr, one JSON line on stdout, a clear error and a non-zero exit otherwise.
describe('npm run index', () => {
  let database: TestDatabase;
  let db: Database;
  let dataDir: string;
  let repo: GitRepo;
  let projectPath: string;
  let bareProjectPath: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-index-cli-'));
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir };
    db = await openTestDatabase(database, { dataDir, poolSize: 1 });
    repo = createGitRepo({
      ...SAMPLE_FILES,
      'package-lock.json': '{"lockfileVersion": 3}\n',
      'docs/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]),
    });
    const group = await createGroup(db.prisma, { path: unique('group'), plan: 'ultimate' });
    projectPath = (await createProject(db.prisma, { fullPath: `${group.fullPath}/${unique('repo')}`, repository: repo.path })).project
      .fullPath;
    bareProjectPath = (await createProject(db.prisma, { fullPath: `${group.fullPath}/${unique('empty')}` })).project.fullPath;
  });
  afterAll(async () => {
    await db.close();
    await database.drop();
    repo.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const index = (...args: string[]) => runCli('index-repository', args, env);
  const answer = (stdout: string) => {
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]);
  };

  it('indexes the default branch in full, with progress lines and a summary on stderr and the figures as JSON on stdout', async () => {
    const result = await index('--project', projectPath);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const json = answer(result.stdout);
    expect(json).toEqual({
      project: projectPath,
      ref: 'main',
      outcome: 'indexed',
      mode: 'full',
      commit_sha: repo.head(),
      files: 4,
      chunks: expect.any(Number),
      chunks_embedded: json.chunks,
      files_read: 4,
      skipped: { lockfile: 1, binary: 1 },
      bytes_read: Object.values(SAMPLE_FILES).reduce((sum, content) => sum + Buffer.byteLength(content), 0),
      duration_ms: expect.any(Number),
    });
    expect(json.chunks).toBeGreaterThanOrEqual(4);
    // Not a terminal: whole lines, no cursor movement.
    expect(result.stderr).not.toContain('\r');
    expect(result.stderr).toContain(`${projectPath}@main: reading the repository…`);
    expect(result.stderr).toContain('full index: 0%, 0/4 files, 0 chunks');
    expect(result.stderr).toMatch(new RegExp(`full index: 100%, 4/4 files, ${json.chunks} chunks, \\d+ files/s\\n`));
    expect(result.stderr).toContain(`Indexed ${projectPath}@main\n`);
    for (const row of [
      /mode +full\n/,
      new RegExp(`commit +${repo.head()}\\n`),
      /files +4\n/,
      new RegExp(`chunks +${json.chunks}\\n`),
      new RegExp(`newly embedded +${json.chunks}\\n`),
      /files read +4\n/,
      /skipped +(lockfile 1, binary 1|binary 1, lockfile 1)\n/,
      /read +0\.00 MB\n/,
      /duration +\d+\.\d s\n/,
    ]) {
      expect(result.stderr).toMatch(row);
    }
    const codeIndex = await db.prisma.codeIndex.findFirstOrThrow({ where: { project: { fullPath: projectPath }, ref: 'main' } });
    expect(codeIndex).toMatchObject({ state: 'ready', commitSha: repo.head(), filesIndexed: 4, chunkCount: json.chunks });
  });

  it('says a rerun on the same commit is unchanged, reading and embedding nothing', async () => {
    const result = await index('--project', projectPath, '--ref', 'main');
    expect(result.code).toBe(0);
    expect(answer(result.stdout)).toMatchObject({
      outcome: 'unchanged',
      mode: null,
      commit_sha: repo.head(),
      files: 4,
      files_read: 0,
      chunks_embedded: 0,
      bytes_read: 0,
    });
    expect(result.stderr).toContain(`${projectPath}@main is up to date`);
    expect(result.stderr).toMatch(/mode +unchanged/);
  });

  it('indexes a new commit incrementally, reading only the changed file', async () => {
    repo.write('src/retry.py', `${SAMPLE_FILES['src/retry.py']}\n\ndef jitter():\n    return 0.1\n`);
    const commit = repo.commit('add jitter');
    const result = await index('--project', projectPath);
    expect(result.code).toBe(0);
    expect(answer(result.stdout)).toMatchObject({ outcome: 'indexed', mode: 'incremental', commit_sha: commit, files: 4, files_read: 1 });
    expect(result.stderr).toContain('incremental index: 100%, 1/1 files');
  });

  it('rebuilds in full with --force, reusing the chunks it already embedded', async () => {
    const result = await index('--project', projectPath, '--force');
    expect(result.code).toBe(0);
    const json = answer(result.stdout);
    expect(json).toMatchObject({ outcome: 'indexed', mode: 'full', commit_sha: repo.head(), files: 4, chunks_embedded: 0 });
    expect(result.stderr).toMatch(/mode +full\n/);
  });

  it.each([
    ['an unknown project', () => ['--project', 'nobody/nothing'], 1, /error: Project nobody\/nothing not found/],
    ['a project without a repository', () => ['--project', bareProjectPath], 1, /has no repository configured/],
    [
      'a branch that does not exist',
      () => ['--project', projectPath, '--ref', 'no-such-branch'],
      1,
      /The branch "no-such-branch" does not exist/,
    ],
    ['no --project', () => [], 2, /--project is required[\s\S]*Usage: npm run index/],
    ['an unknown flag', () => ['--project', 'a/b', '--branch', 'main'], 2, /Unknown option '--branch'/],
  ])('refuses %s with a clear message and a non-zero exit', async (_name, args, code, message) => {
    const result = await index(...args());
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });
});

describe('ProgressBar', () => {
  const terminal = () => {
    const writes: string[] = [];
    return { writes, stream: { isTTY: true, columns: 100, write: (text: string) => writes.push(text) } };
  };

  it('redraws one terminal line in place with counts, rate and time left, at most every redrawMs', () => {
    const { writes, stream } = terminal();
    let now = 0;
    const bar = new ProgressBar({ stream, unit: 'files', now: () => now });
    bar.update({ label: 'full index', done: 0, total: 400, detail: '0 chunks' });
    now = 2000;
    bar.update({ label: 'full index', done: 100, total: 400, detail: '1,234 chunks' });
    now = 2050;
    bar.update({ label: 'full index', done: 110, total: 400, detail: '1,300 chunks' });
    now = 4000;
    bar.update({ label: 'full index', done: 400, total: 400, detail: '5,000 chunks' });
    bar.clear();
    expect(writes).toEqual([
      '\r\x1b[2Kfull index  [░░░░░░░░░░░░░░░░░░░░░░░░]   0%  0/400 files  0 chunks',
      '\r\x1b[2Kfull index  [██████░░░░░░░░░░░░░░░░░░]  25%  100/400 files  1,234 chunks  50 files/s  ~6 s left',
      '\r\x1b[2Kfull index  [████████████████████████] 100%  400/400 files  5,000 chunks  100 files/s',
      '\r\x1b[2K',
    ]);
  });

  it('cuts the line to the terminal width', () => {
    const { writes, stream } = terminal();
    stream.columns = 30;
    new ProgressBar({ stream, unit: 'files', now: () => 0 }).update({ done: 1, total: 2, detail: 'a long detail that does not fit' });
    expect(writes[0]).toBe(`\r\x1b[2K${'[████████████░░░░░░░░░░░░]  50%'.slice(0, 28)}…`);
  });

  it('prints whole lines elsewhere: the first, one per interval, and the last, never the same counts twice', () => {
    const lines: string[] = [];
    let now = 0;
    const bar = new ProgressBar({
      stream: { write: (text: string) => lines.push(text) },
      unit: 'files',
      lineIntervalMs: 5000,
      now: () => now,
    });
    bar.status('reading…');
    for (const [time, done] of [
      [0, 0],
      [1000, 10],
      [6000, 60],
      [7000, 70],
      [9000, 100],
      [9500, 100],
    ] as const) {
      now = time;
      bar.update({ done, total: 100 });
    }
    expect(lines).toEqual([
      'reading…\n',
      '0%, 0/100 files\n',
      '60%, 60/100 files, 10 files/s, ~4 s left\n',
      '100%, 100/100 files, 11 files/s\n',
    ]);
  });

  it.each([
    [400, '0 s'],
    [42_000, '42 s'],
    [185_000, '3 min 05 s'],
    [3_720_000, '1 h 02 min'],
  ])('formats %d ms as %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildCorpusPackage, normalizeText } from '../../../src/search/training/build-corpus';
import { describeWithNpmRegistry } from '../../helpers/network';

// Real npm pack, tree-sitter, tar and git: ms@2.1.3's index.js documents its functions with JSDoc.
describeWithNpmRegistry('buildCorpusPackage (needs the npm registry)', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'duo-corpus-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const build = (outDir: string) =>
    buildCorpusPackage({
      entry: { name: 'ms', language: 'JavaScript', npm: 'ms@2.1.3' },
      outDir,
      cacheDir: path.join(root, 'cache'),
      minFiles: 1,
      minPairs: 1,
    });

  it('writes questions from doc comments and a repository where those comments are blank lines', async () => {
    const result = await build(path.join(root, 'out'));
    if (result.status !== 'ok') throw new Error(`skipped: ${result.reason}`);

    const questions = readFileSync(result.questions, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { q: string; files: string[] });
    expect(questions.map((question) => question.q)).toContain('Parse the given str and return milliseconds.');
    expect(questions.every((question) => question.files.length === 1 && question.files[0] === 'index.js')).toBe(true);
    expect(result.pairs).toBe(questions.length);

    const git = (...args: string[]) => execFileSync('git', ['-C', result.repository, ...args], { encoding: 'utf8' });
    expect(git('status', '--porcelain')).toBe('');
    const stripped = git('show', 'HEAD:index.js');
    const original = readFileSync(path.join(root, 'cache', 'ms', 'index.js'), 'utf8');
    // Same lines, the comments blank: what search reads never holds the question.
    expect(stripped.split('\n')).toHaveLength(original.split('\n').length);
    expect(stripped).toContain('function parse(str) {');
    for (const question of questions) expect(normalizeText(stripped)).not.toContain(normalizeText(question.q));
    expect(normalizeText(original)).toContain(normalizeText('Parse the given `str` and return milliseconds.'));

    const mined = readFileSync(result.mined, 'utf8').trim().split('\n');
    expect(mined.length).toBeGreaterThanOrEqual(questions.length);
    expect(JSON.parse(mined[0])).toMatchObject({ path: 'index.js', identifiers: expect.any(Array) });
  }, 120_000);

  it('gives the same commit and questions on a second build', async () => {
    const first = await build(path.join(root, 'one'));
    const second = await build(path.join(root, 'two'));
    if (first.status !== 'ok' || second.status !== 'ok') throw new Error('skipped');
    expect(second.commit).toBe(first.commit);
    expect(readFileSync(second.questions, 'utf8')).toBe(readFileSync(first.questions, 'utf8'));
  }, 120_000);
});

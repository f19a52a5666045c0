import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chunkLines } from '../../src/indexing/chunk-lines';
import { CHUNKER_VERSION, chunkFile, chunkId } from '../../src/indexing/chunk-file';
import type { Chunk } from '../../src/indexing/chunk-file';

const FIXTURES = path.join(__dirname, 'fixtures');
// A TypeScript fixture ends in .txt so that tsc, which checks test/**/*.ts, leaves it alone.
const read = (name: string) => readFileSync(path.join(FIXTURES, name === 'user-service.ts' ? `${name}.txt` : name), 'utf8');

// Each fixture with its language and, at a 400-character budget, some qualified symbols it must yield.
const FIXTURE_TABLE: Array<{ file: string; language: string | null; symbols: string[] }> = [
  {
    file: 'user-service.ts',
    language: 'typescript',
    symbols: ['UserService', 'UserService.findById', 'UserService.rename', 'decodeCursor', 'isBot'],
  },
  { file: 'project-list.tsx', language: 'typescript', symbols: ['compareProjects', 'ProjectRow', 'ProjectList'] },
  { file: 'rate_limiter.py', language: 'python', symbols: ['Bucket.refill', 'RateLimiter.allow', 'RateLimiter.capacity', 'parse_limit'] },
  { file: 'store.go', language: 'go', symbols: ['Store', 'New', 'Store.Get', 'Store.evictExpired'] },
  {
    file: 'OrderService.java',
    language: 'java',
    symbols: ['OrderService', 'OrderService.pay', 'OrderService.find', 'OrderService.OutOfStockException'],
  },
  {
    file: 'invoice.rb',
    language: 'ruby',
    symbols: ['Billing.Invoice', 'Billing.Invoice.add_line', 'Billing.Invoice.to_h', 'Billing.InvalidTransition'],
  },
  {
    file: 'config.rs',
    language: 'rust',
    symbols: ['ConfigError.fmt', 'Config.apply_env', 'Config.validate', 'tests.rejects_zero_workers'],
  },
  {
    file: 'NotificationDispatcher.cs',
    language: 'csharp',
    symbols: ['NotificationDispatcher.DispatchAsync', 'NotificationDispatcher.Preview', 'ISentLog'],
  },
  { file: 'PostRepository.php', language: 'php', symbols: ['PostRepository.find', 'PostRepository.save', 'slugify'] },
  {
    file: 'SessionManager.kt',
    language: 'kotlin',
    symbols: ['Session', 'InMemorySessionStore.removeForUser', 'SessionManager.check', 'SessionManager.newId'],
  },
  { file: 'indexing-guide.md', language: 'markdown', symbols: [] },
];

/** The chunks as reviewable text: one header line per chunk, then its content. */
const render = (chunks: Chunk[]) =>
  chunks
    .map(
      (chunk) =>
        `--- ${chunk.startLine}-${chunk.endLine} ${chunk.kind} ${chunk.symbol ?? '-'} (${chunk.content.length} chars)\n${chunk.content}`,
    )
    .join('\n');

const isLineWindows = (chunks: Chunk[]) => chunks.every((chunk) => chunk.kind === 'lines');

/** Every property a chunking of `content` must have, whatever the file. */
function expectWellFormed(content: string, chunks: Chunk[], maxChars: number) {
  const lines = content.split('\n').map((line) => line.replace(/\r$/, ''));
  const covered = new Set<number>();
  chunks.forEach((chunk, index) => {
    expect(chunk.startLine).toBeGreaterThanOrEqual(1);
    expect(chunk.endLine).toBeGreaterThanOrEqual(chunk.startLine);
    expect(chunk.content).toBe(lines.slice(chunk.startLine - 1, chunk.endLine).join('\n'));
    if (chunk.startLine !== chunk.endLine) expect(chunk.content.length).toBeLessThanOrEqual(maxChars);
    expect(chunk.content.split('\n')[0].trim()).not.toBe('');
    expect(chunk.content.split('\n').pop()!.trim()).not.toBe('');
    for (let line = chunk.startLine; line <= chunk.endLine; line += 1) covered.add(line);
    const previous = chunks[index - 1];
    if (!previous) return;
    if (isLineWindows(chunks)) {
      expect(chunk.startLine).toBeGreaterThan(previous.startLine);
      expect(chunk.endLine).toBeGreaterThan(previous.endLine);
      expect(chunk.startLine).toBeLessThanOrEqual(previous.endLine + 1);
    } else expect(chunk.startLine).toBeGreaterThan(previous.endLine);
  });
  const uncovered = lines.map((line, index) => index + 1).filter((line) => lines[line - 1].trim() !== '' && !covered.has(line));
  expect(uncovered).toEqual([]);
}

describe('chunkFile snapshots', () => {
  it.each(FIXTURE_TABLE.map((row) => row.file))('%s', async (file) => {
    const chunks = await chunkFile({ path: `src/${file}`, content: read(file) });
    expect(render(chunks)).toMatchSnapshot();
  });
});

describe.each([1_500, 400])('chunkFile properties at a budget of %i characters', (maxChars) => {
  it.each(FIXTURE_TABLE)('$file', async ({ file, language, symbols }) => {
    const content = read(file);
    const chunks = await chunkFile({ path: `src/${file}`, content }, { maxChars });
    expect(chunks.length).toBeGreaterThan(0);
    expectWellFormed(content, chunks, maxChars);
    for (const chunk of chunks) {
      expect(chunk.path).toBe(`src/${file}`);
      expect(chunk.language).toBe(language);
    }
    expect(isLineWindows(chunks)).toBe(language === 'markdown');
    // A method always names its class; a function at the top level never has a dot, except in a namespace.
    for (const chunk of chunks.filter((candidate) => candidate.kind === 'method')) expect(chunk.symbol).toMatch(/^[\w$]+(\.[\w$!?]+)+$/);
    if (maxChars === 400) expect(chunks.map((chunk) => chunk.symbol)).toEqual(expect.arrayContaining(symbols));
    expect(await chunkFile({ path: `src/${file}`, content }, { maxChars })).toEqual(chunks);
  });
});

describe('chunkFile on code', () => {
  it('keeps a class that fits whole, and splits one that does not into header, methods and closing line', async () => {
    const content = read('user-service.ts');
    const whole = await chunkFile({ path: 'user-service.ts', content }, { maxChars: 5_000 });
    expect(whole.filter((chunk) => chunk.kind === 'class').map((chunk) => chunk.symbol)).toEqual(['UserService']);

    const split = await chunkFile({ path: 'user-service.ts', content }, { maxChars: 1_500 });
    const header = split.find((chunk) => chunk.kind === 'class')!;
    expect(header).toMatchObject({ symbol: 'UserService', startLine: 20 });
    expect(header.content).toContain('private readonly cache');
    expect(split.filter((chunk) => chunk.kind === 'method').map((chunk) => chunk.symbol)).toContain('UserService.findMany');
  });

  it('cuts a function longer than the budget into windows that keep its name', async () => {
    const chunks = await chunkFile({ path: 'project-list.tsx', content: read('project-list.tsx') });
    const pieces = chunks.filter((chunk) => chunk.symbol === 'ProjectList');
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((chunk) => chunk.kind === 'function')).toBe(true);
  });

  it('merges imports, constants and small functions into module chunks', async () => {
    const chunks = await chunkFile({ path: 'store.go', content: read('store.go') });
    expect(chunks[0]).toMatchObject({ kind: 'module', symbol: null, startLine: 1 });
    expect(chunks[0].content).toContain('import (');
    expect(chunks[0].content).toContain('func New(');
  });

  it.each([
    [
      'app.js',
      'export class Cart {\n  add(item) {\n    this.items.push(item);\n  }\n}\n\nexport const total = (cart) => cart.items.length;\n',
      ['Cart.add', 'total'],
      'javascript',
    ],
    [
      'Button.jsx',
      'export function Button({ label }) {\n  return <button className="btn">{label}</button>;\n}\n',
      ['Button'],
      'javascript',
    ],
    [
      'list.c',
      '#include <stdlib.h>\n\nstruct node {\n  int value;\n  struct node *next;\n};\n\nstruct node *push(struct node *head, int value) ' +
        '{\n  struct node *n = malloc(sizeof *n);\n  n->value = value;\n  n->next = head;\n  return n;\n}\n',
      ['node', 'push'],
      'c',
    ],
    [
      'shape.cpp',
      'namespace geo {\nclass Circle {\n public:\n  double area() const { return 3.14159 * r * r; }\n  double r;\n};\n}\n\ndouble ' +
        'geo::scale(double x) {\n  return x * 2;\n}\n',
      ['geo.Circle.area', 'geo.scale'],
      'cpp',
    ],
  ])('names declarations in %s', async (file, content, symbols, language) => {
    // A tiny budget forces every container apart, so the qualified names show.
    const chunks = await chunkFile({ path: file, content }, { maxChars: 60 });
    expectWellFormed(content, chunks, 60);
    expect(chunks.map((chunk) => chunk.symbol)).toEqual(expect.arrayContaining(symbols));
    expect(chunks.every((chunk) => chunk.language === language)).toBe(true);
  });

  it('returns no chunks for an empty or blank file', async () => {
    expect(await chunkFile({ path: 'empty.ts', content: '' })).toEqual([]);
    expect(await chunkFile({ path: 'blank.md', content: '\n\n  \n' })).toEqual([]);
  });

  it('keeps a single line longer than the budget whole, in a chunk of its own', async () => {
    const long = `export const DATA = [${Array.from({ length: 400 }, (_, index) => index).join(', ')}];`;
    const content = `import { x } from './x';\n\n${long}\n\nexport function f() {\n  return x;\n}\n`;
    const chunks = await chunkFile({ path: 'data.ts', content }, { maxChars: 200 });
    expectWellFormed(content, chunks, 200);
    expect(chunks.find((chunk) => chunk.content === long)).toBeDefined();
  });
});

describe('chunkFile on a file whose parse outruns its budget', () => {
  // Kotlin's grammar parses a run of `<a,b>` in quadratic time: these 60 KB take about 14 s.
  const runaway = { path: 'src/Runaway.kt', content: `fun f() {\n  F${'<a,b>'.repeat(12_000)}()\n}\n` };

  it('chunks it by lines, and parses the next file of the same grammar as before', async () => {
    const session = { path: 'src/SessionManager.kt', content: read('SessionManager.kt') };
    const before = await chunkFile(session);
    expect(await chunkFile(runaway, { parseBudgetMs: 100 })).toEqual(chunkLines(runaway));
    // The parser was reset after giving up: it does not resume the runaway parse on the next file.
    expect(await chunkFile(session)).toEqual(before);
    expect(before.some((chunk) => chunk.symbol !== null)).toBe(true);
  });
});

describe('chunkFile on other text', () => {
  it('overlaps line windows by up to overlapLines lines', async () => {
    const content = Array.from({ length: 60 }, (_, index) => `line ${index + 1}: ${'x'.repeat(30)}`).join('\n');
    const chunks = await chunkFile({ path: 'notes.txt', content }, { maxChars: 400, overlapLines: 2 });
    expectWellFormed(content, chunks, 400);
    expect(chunks[0]).toMatchObject({ language: null, kind: 'lines', symbol: null, startLine: 1 });
    for (let index = 1; index < chunks.length; index += 1) expect(chunks[index].startLine).toBe(chunks[index - 1].endLine - 1);
  });

  it.each([
    ['deploy.yml', 'yaml'],
    ['schema.sql', 'sql'],
    ['run.sh', 'shell'],
    ['Dockerfile', 'dockerfile'],
  ])('windows %s as %s', async (file, language) => {
    const chunks = await chunkFile({ path: file, content: 'a: 1\nb: 2\n' });
    expect(chunks).toEqual([{ path: file, language, kind: 'lines', symbol: null, startLine: 1, endLine: 2, content: 'a: 1\nb: 2' }]);
  });
});

describe('chunkId', () => {
  const chunk = { content: 'export function f() {\n  return 1;\n}' };

  it('is the sha256 of the chunker version, the embedder version and the content', () => {
    const expected = createHash('sha256').update(`${CHUNKER_VERSION}\0text-embedding-3-small\0${chunk.content}`).digest('hex');
    expect(chunkId(chunk, { embedderVersion: 'text-embedding-3-small' })).toBe(expected);
    expect(CHUNKER_VERSION).toMatch(/\S/);
  });

  it('is stable, and changes with the content or the embedder version', () => {
    const id = chunkId(chunk, { embedderVersion: 'e1' });
    expect(chunkId({ ...chunk }, { embedderVersion: 'e1' })).toBe(id);
    expect(chunkId({ content: `${chunk.content} ` }, { embedderVersion: 'e1' })).not.toBe(id);
    expect(chunkId(chunk, { embedderVersion: 'e2' })).not.toBe(id);
    // The separator keeps the two versions from running into the content.
    expect(chunkId({ content: `x${chunk.content}` }, { embedderVersion: 'e' })).not.toBe(chunkId(chunk, { embedderVersion: 'ex' }));
  });

  it.each(FIXTURE_TABLE.map((row) => row.file))(
    'is the same for every chunk of %s on a second run, and differs between chunks',
    async (file) => {
      const ids = async () =>
        (await chunkFile({ path: file, content: read(file) })).map((chunk) => chunkId(chunk, { embedderVersion: 'e1' }));
      const first = await ids();
      expect(await ids()).toEqual(first);
      expect(new Set(first).size).toBe(first.length);
    },
  );
});

// Speed is measured by bench/chunk.ts, not here (timed tests are flaky on shared machines).
describe('chunkFile on 1 MB files', () => {
  it.each(['user-service.ts', 'rate_limiter.py', 'indexing-guide.md'])('chunks 1 MB of %s into well-formed chunks', async (file) => {
    const fixture = read(file);
    const content = fixture.repeat(Math.ceil(1_000_000 / fixture.length));
    const chunks = await chunkFile({ path: file, content });
    expectWellFormed(content, chunks, 1_500);
  });
});

import { createFileFilter, type SkipReason } from '../../src/indexing/file-filter';

describe('file filter', () => {
  const filter = createFileFilter({
    maxBytes: 1000,
    exclusions: ['secrets/', '*.env', '!keep.env'],
    gitattributes: [
      '# ours',
      'generated/** linguist-generated',
      'lib/external/** linguist-vendored',
      'lib/external/ours.js -linguist-vendored',
      'proto/*.ts linguist-generated=true',
    ].join('\n'),
  });

  it.each<[string, number, SkipReason | null]>([
    ['src/app.ts', 500, null],
    ['src/app.ts', 1001, 'too_large'],
    ['secrets/key.txt', 10, 'excluded'],
    ['config/prod.env', 10, 'excluded'],
    ['config/keep.env', 10, null],
    ['node_modules/left-pad/index.js', 10, 'vendored'],
    ['app/vendor/jquery.js', 10, 'vendored'],
    ['lib/external/lib.js', 10, 'vendored'],
    ['lib/external/ours.js', 10, null],
    ['generated/api/client.ts', 10, 'generated'],
    ['proto/messages.ts', 10, 'generated'],
    ['web/app.min.js', 10, 'generated'],
    ['api/service.pb.go', 10, 'generated'],
    ['package-lock.json', 10, 'lockfile'],
    ['rust/Cargo.lock', 10, 'lockfile'],
    ['assets/logo.png', 10, 'binary'],
    ['../escape.ts', 10, 'excluded'],
    ['src/../../escape.ts', 10, 'excluded'],
    ['src//../escape.ts', 10, 'excluded'],
    ['src/.../dots.ts', 10, null],
    ['/src/rooted.ts', 10, null],
    ['assets/LOGO.PNG', 10, 'binary'],
    ['assets/archive.tar.gz', 10, 'binary'],
    ['src/png', 10, null],
    ['src/ends-with-a-dot.', 10, null],
    ['xnode_modules/not-vendored.js', 10, null],
  ])('%s (%d bytes): %s', (path, size, reason) => {
    expect(filter.byPath(path, size)).toBe(reason);
  });

  it.each<[string, Buffer, SkipReason | null]>([
    ['ordinary code', Buffer.from('export function add(a: number, b: number) {\n  return a + b;\n}\n'), null],
    ['a NUL byte', Buffer.from([0x89, 0x50, 0x00, 0x47]), 'binary'],
    ['one very long line', Buffer.from(`var a=${'1,'.repeat(800)}2;`), 'minified'],
    ['mostly punctuation', Buffer.from(`${'{}[](),;:.=+-*/<>!?&|^%~'.repeat(20)}\n`.repeat(3)), 'minified'],
    ['an empty file', Buffer.from(''), null],
    ['only whitespace, some of it beyond ASCII', Buffer.from(' \n\t\u00a0\u2028\ufeff\u3000'), null],
    ['a longest line of 1,000 characters after short ones', Buffer.from(`${'a\n'.repeat(5)}${'x'.repeat(1000)}\nb`), null],
    ['a longest line of 1,001 characters after short ones', Buffer.from(`${'a\n'.repeat(5)}${'x'.repeat(1001)}\nb`), 'minified'],
    ['a last line of 1,001 characters', Buffer.from(`a\n${'x'.repeat(1001)}`), 'minified'],
    ['lines of 301 characters on average', Buffer.from(`${'y'.repeat(301)}\n`.repeat(4).slice(0, -1)), 'minified'],
    ['lines of 300 characters on average, counting the empty last one', Buffer.from(`${'y'.repeat(450)}\n`), null],
    ['a line of 900 two-byte characters (1,800 bytes) among short ones', Buffer.from(`${'é'.repeat(900)}\n${'a\n'.repeat(10)}`), null],
  ])('content with %s', (_name, content, reason) => {
    expect(filter.byContent(content)).toBe(reason);
    // The caller's decoded text, when it has it, gives the same answer.
    expect(filter.byContent(content, content.toString('utf8'))).toBe(reason);
  });

  it('indexes everything ordinary with no options', () => {
    const plain = createFileFilter();
    expect(plain.byPath('README.md', 50_000)).toBeNull();
    expect(plain.byPath('big.sql', 2_000_000)).toBe('too_large');
    expect(plain.byPath('secrets/key.txt', 10)).toBeNull();
    expect(createFileFilter({ exclusions: ['  ', ''] }).byPath('secrets/key.txt', 10)).toBeNull();
    expect(createFileFilter({ exclusions: ['  ', 'secrets/'] }).byPath('secrets/key.txt', 10)).toBe('excluded');
  });
});

import { LexicalIndex, parseTsvectorText, pathWords, type LexicalRow, type QueryGroup } from '../../src/search/lexical-index';
import { queryGroups, rankLexically, rankWithinFiles } from '../../src/search/lexical-search';
import { createRandom } from '../../src/random';

/** A chunk row whose document is `words` (each word's count as its number of positions). */
function row(path: string, words: string[], extra: Partial<LexicalRow> = {}): LexicalRow {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  let position = 0;
  const terms = [...counts]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([word, count]) => `'${word}':${Array.from({ length: count }, () => ++position).join(',')}`)
    .join(' ');
  return {
    path,
    blob: `blob-${path}`,
    role: null,
    chunkId: `${path}#${words.join('-')}`,
    startLine: 1,
    endLine: 5,
    symbol: null,
    language: null,
    terms,
    ...extra,
  };
}

/** Okapi BM25 written out plainly, over documents as word lists: what the index must give exactly. */
function bruteForce(documents: string[][], groups: QueryGroup[], k1: number, b: number): number[] {
  const average = documents.reduce((sum, words) => sum + words.length, 0) / documents.length;
  const matches = (word: string, form: QueryGroup['forms'][number]) => (form.prefix ? word.startsWith(form.lexeme) : word === form.lexeme);
  const scores = documents.map(() => 0);
  for (const group of groups) {
    const frequency = documents.map((words) =>
      words.reduce((sum, word) => sum + group.forms.filter((form) => matches(word, form)).reduce((s, form) => s + form.weight, 0), 0),
    );
    const df = frequency.filter((tf) => tf > 0).length;
    if (!df) continue;
    const idf = Math.log(1 + (documents.length - df + 0.5) / (df + 0.5));
    documents.forEach((words, id) => {
      const tf = frequency[id];
      if (tf > 0) scores[id] += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * words.length) / average));
    });
  }
  return scores;
}

describe('parseTsvectorText', () => {
  it.each([
    [
      "'parse':1,4 'connection':2",
      [
        ['parse', 2],
        ['connection', 1],
      ],
    ],
    [
      "'a':1 'b':2,3,4",
      [
        ['a', 1],
        ['b', 3],
      ],
    ],
    [
      "'it''s':1 'plain'",
      [
        ["it's", 1],
        ['plain', 1],
      ],
    ],
    ['', []],
  ])('reads %s', (text, expected) => {
    const read: Array<[string, number]> = [];
    parseTsvectorText(text, (lexeme, count) => read.push([lexeme, count]));
    expect(read).toEqual(expected);
  });
});

describe('LexicalIndex', () => {
  const random = createRandom(7);
  const vocabulary = ['parse', 'parser', 'parsed', 'connection', 'pool', 'retry', 'timeout', 'socket', 'query', 'queue', 'packet', 'error'];
  const documents = Array.from({ length: 300 }, () =>
    Array.from({ length: 1 + Math.floor(random() * 30) }, () => vocabulary[Math.floor(random() * vocabulary.length)]),
  );
  const rows = documents.map((words, id) => row(`src/file-${String(id).padStart(3, '0')}.ts`, words));
  const index = new LexicalIndex(rows);
  const groups: QueryGroup[] = [
    { forms: [{ lexeme: 'pars', prefix: true, weight: 1 }] },
    {
      forms: [
        { lexeme: 'retry', prefix: false, weight: 1 },
        { lexeme: 'timeout', prefix: false, weight: 0.5 },
      ],
    },
    { forms: [{ lexeme: 'socket', prefix: false, weight: 1 }] },
  ];

  it('scores every chunk exactly as BM25 does, prefixes and weighted forms included, best first', () => {
    const expected = bruteForce(documents, groups, 1.2, 0.5)
      .map((score, id) => ({ id, score }))
      .filter((entry) => entry.score > 0)
      .sort((a, b) => b.score - a.score || a.id - b.id);
    const scored = index.score({ groups, level: 'chunk', parameters: { k1: 1.2, b: 0.5 }, limit: 1_000 });
    expect(scored.map((entry) => entry.id)).toEqual(expected.map((entry) => entry.id));
    scored.forEach((entry, at) => expect(entry.score).toBeCloseTo(expected[at].score, 9));
    // The best 10 alone are the first 10 of all.
    expect(index.score({ groups, level: 'chunk', parameters: { k1: 1.2, b: 0.5 }, limit: 10 })).toEqual(scored.slice(0, 10));
  });

  it('answers the true best chunk however many others match its common words, wherever it sits in path order', () => {
    // 5,000 chunks share the common words; the one holding the rare word is the last in path order.
    const many = Array.from({ length: 5_000 }, (_, id) => row(`a/${String(id).padStart(4, '0')}.ts`, ['retry', 'connection', 'retry']));
    const large = new LexicalIndex([...many, row('z/last.ts', ['retry', 'connection', 'jitter'])]);
    const [best] = large.score({
      groups: queryGroups('retry the connection with jitter'),
      level: 'chunk',
      parameters: { k1: 1.2, b: 0.5 },
      limit: 5,
    });
    expect(large.files[large.fileOf(best.id)].path).toBe('z/last.ts');
  });

  it('leaves out the files not accepted', () => {
    const accepted = Uint8Array.from(index.files, (file) => (file.path < 'src/file-150' ? 1 : 0));
    const scored = index.score({ groups, level: 'chunk', parameters: { k1: 1.2, b: 0.5 }, accepted, limit: 1_000 });
    expect(scored.length).toBeGreaterThan(0);
    expect(scored.every((entry) => index.files[index.fileOf(entry.id)].path < 'src/file-150')).toBe(true);
  });

  it("counts a file's words once over its chunks, and the path's words once, not once per chunk", () => {
    const file = new LexicalIndex([
      row('lib/pool.ts', ['pool', 'lib', 'acquire', 'acquire']),
      row('lib/pool.ts', ['pool', 'lib', 'release']),
      row('lib/pool.ts', ['pool', 'lib', 'acquire']),
      row('lib/other.ts', ['other', 'lib', 'pool']),
    ]);
    const score = (word: string) =>
      file.score({
        groups: [{ forms: [{ lexeme: word, prefix: false, weight: 1 }] }],
        level: 'file',
        parameters: { k1: 1.2, b: 0 },
        limit: 5,
      });
    // k1 = 1.2, b = 0: a term frequency tf scores idf * tf * 2.2 / (tf + 1.2).
    const [acquire] = score('acquire');
    const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
    expect(acquire.score).toBeCloseTo((idf * 3 * 2.2) / (3 + 1.2), 9);
    // pool.ts names "pool" in its path (three chunks, once), other.ts in its code: both count it once.
    const pool = score('pool');
    expect(pool.map((entry) => entry.score)).toEqual([pool[0].score, pool[0].score]);
    expect(pathWords('src/HTTPServer/parse_connection-pool.ts')).toEqual(['src', 'http', 'server', 'parse', 'connection', 'pool', 'ts']);
  });

  it('ranks files and their best chunks within a directory and without excluded files', () => {
    const ranking = rankLexically(index, {
      question: 'parse the socket',
      directory: 'src/',
      excluded: (path) => path.endsWith('7.ts'),
      limit: 20,
      files: 5,
    });
    expect(ranking.chunks).toHaveLength(20);
    expect(ranking.files).toHaveLength(5);
    expect([...ranking.chunks, ...ranking.files.map((file) => file.best)].every((hit) => !hit.path.endsWith('7.ts'))).toBe(true);
    for (const file of ranking.files) expect(file.best.path).toBe(file.path);
    expect(rankLexically(index, { question: 'parse', directory: 'elsewhere/', excluded: () => false, limit: 20, files: 5 })).toEqual({
      chunks: [],
      files: [],
    });
  });
});

describe('LexicalIndex.serialize', () => {
  const random = createRandom(11);
  const vocabulary = ['parse', 'parser', 'connection', 'pool', 'retry', 'timeout', 'socket', 'query', 'queue', 'packet', 'café', 'naïve'];
  // Files of several chunks, a chunk shared by two files, symbols and languages set or not, roles set or not.
  const rows = Array.from({ length: 400 }, (_, id) =>
    row(
      `src/${['net', 'db', 'ui'][id % 3]}/file-${String(Math.floor(id / 4)).padStart(3, '0')}.ts`,
      Array.from({ length: 1 + Math.floor(random() * 25) }, () => vocabulary[Math.floor(random() * vocabulary.length)]),
      {
        startLine: 1 + (id % 4) * 20,
        endLine: 19 + (id % 4) * 20,
        symbol: id % 5 === 0 ? null : `Thing${id}.method`,
        language: id % 7 === 0 ? null : 'typescript',
        role: id % 3 === 0 ? null : 'implementation',
        ...(id === 399 ? { chunkId: 'src/net/file-000.ts#shared' } : {}),
      },
    ),
  ).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const index = new LexicalIndex(rows);

  it('gives back an index with the same files, chunks and words that ranks every question exactly as the original', () => {
    const bytes = index.serialize();
    const restored = LexicalIndex.deserialize(bytes);
    expect(restored.size).toEqual(index.size);
    expect(restored.weight).toBe(index.weight);
    expect(restored.files).toEqual(index.files);
    expect(restored.documents).toEqual(index.documents);
    for (const question of ['parse the socket', 'retry connection pool', 'queue packets with timeouts', 'café naïve', 'nothing here']) {
      const options = { question, directory: '', excluded: () => false, limit: 50, files: 30 };
      expect(rankLexically(restored, options)).toEqual(rankLexically(index, options));
      const inDirectory = { ...options, directory: 'src/db/', excluded: (path: string) => path.endsWith('1.ts') };
      expect(rankLexically(restored, inDirectory)).toEqual(rankLexically(index, inDirectory));
    }
    // Deflated: smaller than the typed arrays it holds.
    expect(bytes.length).toBeLessThan(index.weight);
  });

  it('refuses bytes that are not a whole index', () => {
    const bytes = index.serialize();
    expect(() => LexicalIndex.deserialize(bytes.subarray(0, bytes.length - 10))).toThrow();
    expect(() => LexicalIndex.deserialize(Buffer.from('not an index'))).toThrow();
  });
});

describe('queryGroups', () => {
  it('matches a longer word by the prefix of its stem, a short one as written, another spelling at 0.8, a synonym at 0.5', () => {
    expect(queryGroups('packets')).toEqual([{ forms: [{ lexeme: 'packet', prefix: true, weight: 1 }] }]);
    expect(queryGroups('the err')[0].forms).toEqual(
      expect.arrayContaining([
        { lexeme: 'err', prefix: false, weight: 1 },
        { lexeme: 'error', prefix: true, weight: 0.8 },
        { lexeme: 'exception', prefix: true, weight: 0.5 },
      ]),
    );
    expect(queryGroups('PostgreSQL')[0].forms).toEqual(expect.arrayContaining([{ lexeme: 'pg', prefix: false, weight: 0.8 }]));
    expect(queryGroups('indices')[0].forms).toEqual(expect.arrayContaining([{ lexeme: 'index', prefix: true, weight: 1 }]));
    // parseConnection: its parts, not the joined identifier (the document holds the parts).
    expect(queryGroups('parseConnection').map((group) => group.forms[0].lexeme)).toEqual(['parse', 'connection']);
  });
});

describe('LexicalIndex.fileCoverage', () => {
  const exact = (lexeme: string, weight = 1): QueryGroup => ({ forms: [{ lexeme, prefix: false, weight }] });
  const index = new LexicalIndex([
    row('lib/pool.js', ['pool', 'drain']),
    row('lib/pool.js', ['idle', 'timeout']),
    row('lib/query.js', ['query', 'timeout']),
    row('lib/util.js', ['pool']),
    row('lib/other.js', ['other']),
  ]);
  const ids = ['lib/pool.js', 'lib/query.js', 'lib/util.js', 'lib/other.js'].map((path) => index.fileId(path)!);

  it('is the idf-weighted share of the question’s words each file holds, over all its chunks', () => {
    const [pool, query, util, other] = index.fileCoverage([exact('pool'), exact('drain'), exact('timeout')], ids);
    expect(pool).toBeCloseTo(1);
    expect(other).toBe(0);
    // drain is in one file of four, pool and timeout in two each: drain weighs more.
    const idf = (df: number) => Math.log(1 + (4 - df + 0.5) / (df + 0.5));
    const all = idf(2) + idf(1) + idf(2);
    expect(query).toBeCloseTo(idf(2) / all);
    expect(util).toBeCloseTo(idf(2) / all);
  });

  it('counts a word, not its synonyms, and knows no unknown path', () => {
    expect(index.fileCoverage([exact('drain'), exact('query', 0.5)], ids)[1]).toBe(0);
    expect(index.fileId('lib/missing.js')).toBeUndefined();
  });
});

describe('rankWithinFiles', () => {
  it("answers each asked file's best chunks by keyword score, at most perFile of them, and no other file's", () => {
    const index = new LexicalIndex([
      row('src/parser.rs', ['escape', 'trailing', 'values'], { startLine: 119, endLine: 130 }),
      row('src/parser.rs', ['escape', 'values', 'hyphen'], { startLine: 640, endLine: 673 }),
      row('src/parser.rs', ['long', 'argument'], { startLine: 723, endLine: 762 }),
      row('src/parser.rs', ['escape'], { startLine: 900, endLine: 910 }),
      row('src/lexer.rs', ['escape', 'escape', 'trailing'], { startLine: 1, endLine: 20 }),
    ]);
    const hits = rankWithinFiles(index, { question: 'escape trailing values', paths: ['src/parser.rs'], perFile: 2 });
    expect(hits.map((hit) => [hit.path, hit.startLine])).toEqual([
      ['src/parser.rs', 119],
      ['src/parser.rs', 640],
    ]);
    expect(rankWithinFiles(index, { question: 'escape', paths: [], perFile: 2 })).toEqual([]);
  });
});

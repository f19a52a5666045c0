import { AppError } from '../../src/errors';
import {
  firstHitRank,
  formatMetricsTable,
  formatTable,
  parseQuestions,
  percentile,
  scoredFiles,
  scoreRanks,
} from '../../src/evaluation/evaluate-retrieval';

describe('firstHitRank', () => {
  it.each([
    ['the first file is right', ['lib/a.js', 'lib/b.js'], ['lib/a.js'], 1],
    ['the third file is the first right one', ['x.js', 'y.js', 'lib/b.js', 'lib/a.js'], ['lib/a.js', 'lib/b.js'], 3],
    ['any listed file counts, not only the main answer', ['x.js', 'lib/second.js'], ['lib/main.js', 'lib/second.js'], 2],
    ['no right file', ['x.js', 'y.js'], ['lib/a.js'], null],
    ['an empty answer', [], ['lib/a.js'], null],
    ['a path that only ends like the right one is a miss', ['src/lib/a.js', 'lib/a.js.map'], ['lib/a.js'], null],
  ])('%s', (_name, retrieved, expected, rank) => {
    expect(firstHitRank(retrieved, expected)).toBe(rank);
  });
});

describe('scoredFiles', () => {
  const answer = [
    'Readme.md',
    'lib/Pool.js',
    'docs/pool.md',
    'lib/a.js',
    'lib/b.js',
    'lib/c.js',
    'lib/d.js',
    'lib/e.js',
    'lib/f.js',
    'lib/g.js',
    'lib/h.js',
    'lib/i.js',
  ];

  it('keeps the first 10 files of an answer when nothing is neutral', () => {
    expect(scoredFiles(answer)).toEqual(answer.slice(0, 10));
  });

  it('drops neutral files (gitignore patterns) before cutting, so the files after them move up', () => {
    const scored = scoredFiles(answer, { neutral: ['*.md'] });
    expect(scored).toEqual([
      'lib/Pool.js',
      'lib/a.js',
      'lib/b.js',
      'lib/c.js',
      'lib/d.js',
      'lib/e.js',
      'lib/f.js',
      'lib/g.js',
      'lib/h.js',
      'lib/i.js',
    ]);
    expect(firstHitRank(scored, ['lib/Pool.js'])).toBe(1);
  });

  it('cuts at the depth asked for', () => {
    expect(scoredFiles(answer, { neutral: ['docs/'], depth: 2 })).toEqual(['Readme.md', 'lib/Pool.js']);
  });
});

describe('scoreRanks', () => {
  it('counts a question for recall@k when its first hit is at rank k or better, and averages 1/rank for MRR', () => {
    const metrics = scoreRanks([1, 2, 5, 6, 10, null]);
    expect(metrics.questions).toBe(6);
    expect(metrics.recallAt1).toBeCloseTo(1 / 6);
    expect(metrics.recallAt5).toBeCloseTo(3 / 6);
    expect(metrics.recallAt10).toBeCloseTo(5 / 6);
    expect(metrics.mrr).toBeCloseTo((1 + 1 / 2 + 1 / 5 + 1 / 6 + 1 / 10) / 6);
  });

  it('gives nothing for a hit below rank 10, in recall or MRR', () => {
    expect(scoreRanks([11, 50])).toEqual({ questions: 2, recallAt1: 0, recallAt5: 0, recallAt10: 0, mrr: 0 });
  });

  it('is perfect when every first file is right', () => {
    expect(scoreRanks([1, 1, 1])).toEqual({ questions: 3, recallAt1: 1, recallAt5: 1, recallAt10: 1, mrr: 1 });
  });

  it('scores zero questions as zero rather than NaN', () => {
    expect(scoreRanks([])).toEqual({ questions: 0, recallAt1: 0, recallAt5: 0, recallAt10: 0, mrr: 0 });
  });
});

describe('parseQuestions', () => {
  it('reads one question per line, skipping blank lines, ignoring extra keys and normalising ./ and duplicates', () => {
    const text = [
      '{"q": "How are packets parsed?", "files": ["lib/protocol/Parser.js"]}',
      '',
      '{"q": "  Where is the pool?  ", "files": ["./lib/Pool.js", "lib/Pool.js", "lib/PoolConfig.js"], "note": "two files"}',
      '',
    ].join('\n');
    expect(parseQuestions(text)).toEqual([
      { q: 'How are packets parsed?', files: ['lib/protocol/Parser.js'] },
      { q: 'Where is the pool?', files: ['lib/Pool.js', 'lib/PoolConfig.js'] },
    ]);
  });

  it('accepts Windows line endings and a byte order mark', () => {
    expect(parseQuestions('\uFEFF{"q": "a?", "files": ["a.js"]}\r\n{"q": "b?", "files": ["b.js"]}\r\n')).toHaveLength(2);
  });

  it.each([
    ['broken JSON', '{"q": "a?", "files": ["a.js"]}\n{"q": "b?", "files": ', /^q\.jsonl line 2: not valid JSON/],
    ['an array instead of an object', '["a?", ["a.js"]]', /^q\.jsonl line 1: expected an object/],
    ['a missing question', '{"files": ["a.js"]}', /^q\.jsonl line 1: "q" must be a non-empty string/],
    ['a blank question', '{"q": "  ", "files": ["a.js"]}', /^q\.jsonl line 1: "q" must be a non-empty string/],
    ['no files', '\n\n{"q": "a?", "files": []}', /^q\.jsonl line 3: "files" must be a non-empty array/],
    ['files as a string', '{"q": "a?", "files": "a.js"}', /^q\.jsonl line 1: "files" must be a non-empty array/],
    ['a number among the files', '{"q": "a?", "files": ["a.js", 3]}', /^q\.jsonl line 1: "files" must hold non-empty path strings/],
    ['an absolute path', '{"q": "a?", "files": ["/etc/passwd"]}', /^q\.jsonl line 1: "\/etc\/passwd" is not a path relative/],
    ['a path climbing out', '{"q": "a?", "files": ["lib/../../a.js"]}', /^q\.jsonl line 1: .* is not a path relative/],
    ['nothing but blank lines', '\n  \n', /^q\.jsonl holds no questions/],
  ])('refuses %s, naming the line', (_name, text, message) => {
    let caught: unknown;
    try {
      parseQuestions(text, 'q.jsonl');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe('BAD_USER_INPUT');
    expect((caught as AppError).userMessage).toMatch(message);
  });
});

describe('formatMetricsTable', () => {
  it('prints one row per strategy and mode with three decimals, numbers aligned right', () => {
    const table = formatMetricsTable([
      {
        strategy: 'tree-sitter',
        mode: 'vector',
        metrics: { questions: 4, recallAt1: 0.25, recallAt5: 0.5, recallAt10: 1, mrr: 0.5 },
        latency: { p50: 12.34, p95: 40 },
      },
      {
        strategy: 'lines',
        mode: 'hybrid',
        metrics: { questions: 4, recallAt1: 1, recallAt5: 1, recallAt10: 1, mrr: 1 },
        latency: { p50: 3, p95: 4.56 },
      },
    ]);
    expect(table.split('\n')).toEqual([
      'strategy     mode      R@1    R@5   R@10    MRR  p50 ms  p95 ms',
      '-----------  ------  -----  -----  -----  -----  ------  ------',
      'tree-sitter  vector  0.250  0.500  1.000  0.500    12.3    40.0',
      'lines        hybrid  1.000  1.000  1.000  1.000     3.0     4.6',
    ]);
  });

  it('leads with the set when rows come from several', () => {
    const table = formatMetricsTable([
      { set: 'mysql', strategy: 'files', mode: 'bm25', metrics: scoreRanks([1]) },
      { set: 'golang', strategy: 'tree-sitter', mode: 'hybrid', metrics: scoreRanks([2]), latency: { p50: 9, p95: 20 } },
    ]);
    expect(table.split('\n')[0]).toBe('set     strategy     mode      R@1    R@5   R@10    MRR  p50 ms  p95 ms');
    expect(table.split('\n')[2]).toBe('mysql   files        bm25    1.000  1.000  1.000  1.000       -       -');
  });

  it('takes percentiles by nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, index) => index + 1),
        95,
      ),
    ).toBe(95);
    expect(percentile([], 95)).toBe(0);
  });

  it('leaves the time column out when no row has one', () => {
    const table = formatMetricsTable([{ strategy: 'lines', mode: 'text', metrics: scoreRanks([1]) }]);
    expect(table.split('\n')[0]).toBe('strategy  mode    R@1    R@5   R@10    MRR');
  });
});

describe('formatTable', () => {
  it('aligns numbers with units to the right and words to the left', () => {
    expect(
      formatTable(
        ['strategy', 'chunks', 'stored'],
        [
          ['whole-file', '61', '0.61 MB'],
          ['lines', '1,402', '12.85 MB'],
        ],
      ).split('\n'),
    ).toEqual([
      'strategy    chunks    stored',
      '----------  ------  --------',
      'whole-file      61   0.61 MB',
      'lines        1,402  12.85 MB',
    ]);
  });
});

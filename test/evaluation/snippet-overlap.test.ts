import { leadsWithBoilerplate, parseLineLabels, scoreSnippets, snippetOutcome } from '../../src/evaluation/snippet-overlap';

describe('snippet scoring for eval:retrieval', () => {
  const text = [
    '{"q": "a?", "files": ["lib/a.js"], "lines": {"lib/a.js": [[10, 20], [30, 31]]}}',
    '',
    '{"q": "b?", "files": ["lib/b.js"]}',
  ].join('\n');

  it("reads each question's labels in order, null where there are none", () => {
    const labels = parseLineLabels(text, 'q.jsonl');
    expect(labels).toHaveLength(2);
    expect([...labels[0]!.entries()]).toEqual([
      [
        'lib/a.js',
        [
          [10, 20],
          [30, 31],
        ],
      ],
    ]);
    expect(labels[1]).toBeNull();
  });

  it.each([
    ['{"q": "a?", "files": ["a"], "lines": []}', 'q.jsonl line 1: "lines" must be an object'],
    ['{"q": "a?", "files": ["a"], "lines": {"a": [[5, 2]]}}', 'q.jsonl line 1 "a": [5, 2] is not a range of 1-based lines'],
    ['{"q": "a?", "files": ["a"], "lines": {"a": [[1]]}}', 'q.jsonl line 1 "a": [1] is not a [start, end] pair'],
  ])('refuses %s naming the line', (line, message) => {
    expect(() => parseLineLabels(line, 'q.jsonl')).toThrow(message);
  });

  it('scores the first snippet of the first labelled file', () => {
    const labels = parseLineLabels(text)[0]!;
    const answer = [
      { path: 'lib/other.js', snippets: [{ startLine: 1, endLine: 5 }] },
      {
        path: 'lib/a.js',
        snippets: [
          { startLine: 1, endLine: 9 },
          { startLine: 18, endLine: 25 },
        ],
      },
    ];
    const outcome = snippetOutcome(answer, labels);
    expect(outcome).toMatchObject({ found: true, path: 'lib/a.js', rank: 2, overlaps: false, anyOverlaps: true });
    const first = snippetOutcome([{ path: 'lib/a.js', snippets: [{ startLine: 31, endLine: 40 }] }], labels);
    expect(first).toMatchObject({ overlaps: true });
    expect(scoreSnippets({ strategy: 's', mode: 'hybrid', outcomes: [outcome, first, { found: false }] })).toMatchObject({
      labelled: 3,
      found: 2,
      firstOverlaps: 1,
      anyOverlaps: 2,
    });
  });

  it('tells an answer that leads with an import block', () => {
    const imports = { startLine: 1, endLine: 2, content: "import a from 'a';\nimport b from 'b';" };
    const code = { startLine: 4, endLine: 6, content: 'export function f() {\n  return 1;\n}' };
    expect(leadsWithBoilerplate([{ path: 'src/a.ts', language: 'typescript', snippets: [imports, code] }])).toBe(true);
    expect(leadsWithBoilerplate([{ path: 'src/a.ts', language: 'typescript', snippets: [code, imports] }])).toBe(false);
  });
});

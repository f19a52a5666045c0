import { extractFeatures, splitProseAndCode } from '../../src/gatekeeper/extract-features';
import { findCodeRegions } from '../../src/gatekeeper/find-code-regions';
import { tokenizeProse } from '../../src/gatekeeper/tokenize-prose';

const tokens = (text: string) => tokenizeProse(text, 100).map((token) => token.text);

describe('findCodeRegions', () => {
  it.each<[string, string, Array<{ kind: string; fenced: boolean }>]>([
    ['a fenced block', 'fix this:\n```js\nconst x = a.map(b => b + 1);\n```\nthanks', [{ kind: 'code', fenced: true }]],
    ['an unclosed fence', 'explain\n```\nlet a = 1;\nlet b = 2;', [{ kind: 'code', fenced: true }]],
    ['a fenced trace', 'why?\n```\nTypeError: x is not a function\n    at run (a.js:1:2)\n```', [{ kind: 'trace', fenced: true }]],
    [
      'a pasted Node trace',
      "why\nTypeError: Cannot read properties of undefined (reading 'map')\n    at render (src/App.tsx:12:5)\nhelp",
      [{ kind: 'trace', fenced: false }],
    ],
    [
      'a Python traceback',
      'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\nZeroDivisionError: division by zero',
      [{ kind: 'trace', fenced: false }],
    ],
    [
      'a Go panic',
      'panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:15 +0x45',
      [{ kind: 'trace', fenced: false }],
    ],
    ['unfenced Python', 'def foo(x):\n    return x + 1\n\nwhat does this do?', [{ kind: 'code', fenced: false }]],
    [
      'code after a colon',
      'why does this throw: const total = items.reduce((sum, item) => sum + item.price);',
      [{ kind: 'code', fenced: false }],
    ],
    ['prose only', 'Where is the auth middleware defined? (the new one)', []],
  ])('%s', (_name, text, expected) => {
    expect(findCodeRegions(text).map(({ kind, fenced }) => ({ kind, fenced }))).toEqual(expected);
  });
});

describe('tokenizeProse', () => {
  it('replaces names by their shape and keeps words', () => {
    expect(tokens('which files call `parseConnection` in src/db/conn.ts?')).toEqual([
      'which',
      'files',
      'call',
      '<inline-code>',
      'in',
      '<path>',
      '?',
    ]);
    expect(tokens('who calls getUserById or load_users() or utils.ts')).toEqual([
      'who',
      'calls',
      '<ident>',
      'or',
      '<call>',
      'or',
      '<path>',
    ]);
    expect(tokens("what's async/await, e.g. in TypeError cases")).toEqual([
      'whats',
      'async',
      'await',
      'eg',
      'in',
      '<error-name>',
      'typeerror',
      'cases',
    ]);
  });
});

describe('extractFeatures', () => {
  it('is deterministic and ignores indentation and case', () => {
    const first = extractFeatures('Explain this:\n    def f(x):\n        return x');
    const second = extractFeatures('explain THIS:\ndef f(x):\nreturn x');
    expect(Array.from(second.indices)).toEqual(Array.from(first.indices));
    expect(Array.from(second.values)).toEqual(Array.from(first.values));
  });

  it('shares character n-grams between a word and its typo', () => {
    const explain = new Set(extractFeatures('explain').indices);
    const typo = extractFeatures('expln').indices;
    expect(Array.from(typo).filter((bucket) => explain.has(bucket)).length).toBeGreaterThan(2);
  });

  it('keeps a long paste from outweighing the request', () => {
    const request = 'write unit tests for this';
    const paste = Array.from({ length: 400 }, (_, line) => `const value${line} = compute(${line});`).join('\n');
    const alone = extractFeatures(request);
    const withPaste = extractFeatures(`${request}\n\`\`\`\n${paste}\n\`\`\``);
    const weight = (vector: typeof alone, buckets: Set<number>) =>
      Array.from(vector.indices).reduce((sum, bucket, index) => sum + (buckets.has(bucket) ? vector.values[index] ** 2 : 0), 0);
    const requestBuckets = new Set(alone.indices);
    // The request's own features keep most of their weight, and the code adds few features.
    expect(weight(withPaste, requestBuckets) / weight(alone, requestBuckets)).toBeGreaterThan(0.9);
    expect(withPaste.indices.length - alone.indices.length).toBeLessThan(250);
    expect(splitProseAndCode(`${request}\n\`\`\`\n${paste}\n\`\`\``).prose.trim()).toBe(request);
  });
});

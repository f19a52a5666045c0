import { splitClauses } from '../../src/gatekeeper/split-clauses';

describe('splitClauses', () => {
  it.each<[string, string[]]>([
    ['explain this and then write tests for it', ['explain this', 'write tests for it']],
    ['1. explain X\n2. write tests', ['explain X', 'write tests']],
    ['What is a bloom filter? Also write one in Go for me.', ['What is a bloom filter', 'write one in Go for me.']],
    ['first refactor it, then test it', ['refactor it', 'test it']],
    ['expln this fn n write tests', ['expln this fn', 'write tests']],
    ['e.g. this works. ok', ['e.g. this works', 'ok']],
    ['where is the auth middleware defined', ['where is the auth middleware defined']],
  ])('%s', (text, expected) => {
    expect(splitClauses(text).map((clause) => clause.text)).toEqual(expected);
  });

  it('never cuts inside pasted code, and attaches code to the clause before it', () => {
    const text = 'Fix this error and explain why it happened\nTypeError: x.map is not a function\n    at render (app.js:10:12)';
    expect(splitClauses(text).map((clause) => clause.text)).toEqual([
      'Fix this error',
      'explain why it happened\nTypeError: x.map is not a function\n    at render (app.js:10:12)',
    ]);
    expect(splitClauses('```js\nconst a = 1; const b = 2;\nif (a and b) { run(); }\n```')).toHaveLength(1);
  });

  it('attaches code that comes first to the clause after it', () => {
    const text = 'TypeError: x.map is not a function\n    at render (app.js:10:12)\nwhy? and write a test';
    expect(splitClauses(text).map((clause) => clause.text)).toEqual([
      'TypeError: x.map is not a function\n    at render (app.js:10:12)\nwhy',
      'write a test',
    ]);
  });

  it('gives offsets into the prompt', () => {
    const text = 'explain this, then write tests';
    for (const clause of splitClauses(text)) expect(text.slice(clause.start, clause.end)).toBe(clause.text);
  });

  it('stops at eight clauses', () => {
    const clauses = splitClauses(Array.from({ length: 12 }, (_, index) => `do step ${index}`).join('. '));
    expect(clauses).toHaveLength(8);
    expect(clauses[7].text).toContain('do step 11');
  });
});

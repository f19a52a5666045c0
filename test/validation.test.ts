import { findUnsafeJson } from '../src/validation';

describe('findUnsafeJson', () => {
  it.each([
    ['a NUL byte in a nested string', { input: { question: 'a\u0000b' } }, '', { path: 'input.question', problem: 'nul' }],
    ['one in an array', { items: [1, 'x', 'y\u0000'] }, '', { path: 'items.2', problem: 'nul' }],
    ['one in a key', { input: { 'a\u0000b': 1 } }, '', { path: 'input.a\u0000b', problem: 'nul' }],
    ['one under a named root', { x: [{ y: '\u0000' }] }, 'variables', { path: 'variables.x.0.y', problem: 'nul' }],
    ['a bare string', 'a\u0000', 'body', { path: 'body', problem: 'nul' }],
    ['nothing unsafe', { a: [1, 'two', null, true, { b: [] }] }, '', null],
  ])('%s', (_name, value, path, expected) => {
    expect(findUnsafeJson(value, { maxDepth: 32, path })).toEqual(expected);
  });

  it('names the first container deeper than the limit, and walks 5,000 levels without recursion', () => {
    const nest = (levels: number) => {
      let value: unknown = 'leaf';
      for (let level = 0; level < levels; level += 1) value = level % 2 ? { a: value } : [value];
      return value;
    };
    // Levels 0 to 3 may hold containers; the one at level 4 is too deep. The outermost is an object when levels is even.
    expect(findUnsafeJson(nest(6), { maxDepth: 4 })).toEqual({ path: 'a.0.a.0', problem: 'depth' });
    expect(findUnsafeJson(nest(4), { maxDepth: 4 })).toBeNull();
    expect(findUnsafeJson(nest(5_000), { maxDepth: 32 })).toMatchObject({ problem: 'depth' });
  });
});

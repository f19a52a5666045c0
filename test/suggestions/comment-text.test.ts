import { commentText, isInstruction } from '../../src/suggestions/comment-text';

describe('commentText', () => {
  it.each([
    ['// fetch the users', 'fetch the users'],
    ['//fetch the users   ', 'fetch the users'],
    ['/// fetch the users', 'fetch the users'],
    ['//! crate docs', 'crate docs'],
    ['# fetch the users', 'fetch the users'],
    ['### fetch the users', 'fetch the users'],
    ['-- fetch the users', 'fetch the users'],
    ['/* fetch the users */', 'fetch the users'],
    ['/** fetch the users */', 'fetch the users'],
    ['/*! kept license */', 'kept license'],
    ['/**\n * Fetch the users.\n *\n * Sorted by name.\n */', 'Fetch the users.\n\nSorted by name.'],
    ['/*\n   fetch the users\n   sorted by name\n*/', 'fetch the users\nsorted by name'],
    ['=begin\nfetch the users\n=end', 'fetch the users'],
    ['//', ''],
    ['/**/', ''],
    ['/*\n *\n */', ''],
  ])('%j says %j', (raw, text) => {
    expect(commentText(raw)).toBe(text);
  });

  it('takes a block comment apart as the one regex it replaces did, on every string of up to 6 of its characters', () => {
    // commentText's block comments as they were, with the regex it used for the body until that was found cubic in a run of stars.
    const viaRegex = (raw: string) => {
      const body = /^\s*\/\*+!?([\s\S]*?)\*+\/\s*$/.exec(raw)?.[1] ?? raw.replace(/^\s*\/\*+!?/, '');
      const lines = body.split('\n').map((line) => line.replace(/^\s*\*+(?!\/)/, '').trim());
      const first = lines.findIndex((line) => line !== '');
      return first === -1 ? '' : lines.slice(first, lines.findLastIndex((line) => line !== '') + 1).join('\n');
    };
    const alphabet = ['/', '*', '!', ' ', '\n', 'a'];
    let strings = [''];
    let compared = 0;
    for (let length = 1; length <= 6; length += 1) {
      strings = strings.flatMap((prefix) => alphabet.map((character) => prefix + character));
      for (const tail of strings) {
        const raw = `/*${tail}`;
        compared += 1;
        if (commentText(raw) !== viaRegex(raw)) expect({ raw, text: commentText(raw) }).toEqual({ raw, text: viaRegex(raw) });
      }
    }
    expect(compared).toBe(55_986);
  });

  it('reads an unclosed run of stars at the largest size a request may send at once', () => {
    // The regex took 3.5 s for 3 KB of them, and eight times as long for twice as many.
    expect(commentText(`/${'*'.repeat(400_000)}`)).toBe('');
    expect(commentText(`/*${'*'.repeat(200_000)} fetch the users ${'*'.repeat(200_000)}/`)).toBe('fetch the users');
  });
});

describe('isInstruction', () => {
  it.each([
    ['fetch the users', true],
    ['ユーザーを取得する', true],
    ['42', true],
    ['----------', false],
    ['*** ===', false],
    ['', false],
  ])('%j: %s', (text, expected) => {
    expect(isInstruction(text)).toBe(expected);
  });
});

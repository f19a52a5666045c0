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

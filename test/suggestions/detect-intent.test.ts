import { detectIntent } from '../../src/suggestions/detect-intent';
import type { IntentDecision } from '../../src/suggestions/detect-intent';
import { atCursor } from './helpers/cursor';
import { LANGUAGES } from './helpers/language-fixtures';
import type { LanguageFixture } from './helpers/language-fixtures';

type Expected = Omit<IntentDecision, 'language'>;

const COMPLETION: Expected = { intent: 'completion', generationType: null, userInstruction: null };
const comment = (userInstruction: string): Expected => ({ intent: 'generation', generationType: 'comment', userInstruction });
const SMALL_FILE: Expected = { intent: 'generation', generationType: 'small_file', userInstruction: null };
const EMPTY_FUNCTION: Expected = { intent: 'generation', generationType: 'empty_function', userInstruction: null };

type Case = [language: string, rule: string, fixture: LanguageFixture, text: string, expected: Expected];

// Every rule and its edges, in every language; `file` keeps the small-file rule out unless a case wants it.
function casesFor(fixture: LanguageFixture): Case[] {
  const { line, file, statement } = fixture;
  const cases: Array<[string, string, Expected]> = [
    ['cursor inside a line comment', file(`${statement}\n${line} fetch the us<|>ers`), COMPLETION],
    ['cursor at the end of a line comment', file(`${line} fetch the users<|>`), COMPLETION],
    ['cursor at the end of an empty comment', file(`${line}<|>`), COMPLETION],
    ['cursor at the end of a comment trailing code', file(`${statement} ${line} running total<|>`), COMPLETION],
    ['a comment directly above', file(`${line} fetch the users\n<|>`), comment('fetch the users')],
    ['a comment directly above an indented cursor', file(`${line} fetch the users\n    <|>`), comment('fetch the users')],
    ['an empty comment directly above', file(`${line}\n<|>`), COMPLETION],
    ['a comment of markers only directly above', file(`${line} ----------\n<|>`), COMPLETION],
    ['a comment two lines up, a blank line between', file(`${line} fetch the users\n\n<|>`), COMPLETION],
    ['a comment, then code, then the cursor', file(`${line} fetch the users\n${statement}\n<|>`), COMPLETION],
    ['a comment above, code before the cursor on its line', file(`${line} fetch the users\n${statement.slice(0, 9)}<|>`), COMPLETION],
    ['a comment trailing the code directly above', file(`${statement} ${line} running total\n<|>`), COMPLETION],
    [
      'consecutive line comments, joined',
      file(`${line} fetch the users\n${line}   sorted by name\n<|>`),
      comment('fetch the users\nsorted by name'),
    ],
    ['only the run of comments next to the cursor', file(`${line} unrelated\n\n${line} fetch the users\n<|>`), comment('fetch the users')],
    ['a function with statements', file(fixture.nonEmptyFunction), COMPLETION],
    ['an empty function', file(fixture.emptyFunction), EMPTY_FUNCTION],
    ['code at the top level of a file', file(`${statement}\n<|>`), COMPLETION],
    ['exactly 4 code lines', fixture.fourCodeLines, SMALL_FILE],
    ['exactly 5 code lines', fixture.fiveCodeLines, COMPLETION],
    [
      'a comment in an empty function in a small file: the comment wins',
      fixture.smallFunction(`${line} fetch the users\n<|>`),
      comment('fetch the users'),
    ],
    ['the cursor on a comment in a small file: completion wins', fixture.smallFunction(`${line} fetch the users<|>`), COMPLETION],
    ['an empty function in a small file: small_file wins', fixture.smallFunction('<|>'), SMALL_FILE],
    ['an empty function under an empty comment', file(fixture.emptyFunction.replace('<|>', `${line}\n<|>`)), COMPLETION],
    ...fixture.emptyBodies.map(
      ([name, snippet]) => [`an empty body: ${name}`, file(snippet), EMPTY_FUNCTION] as [string, string, Expected],
    ),
    ...fixture.completions.map(
      ([name, snippet]) => [`still a completion: ${name}`, file(snippet), COMPLETION] as [string, string, Expected],
    ),
  ];
  if (fixture.blockComment) {
    cases.push(
      ['cursor inside a block comment', file(fixture.blockComment('fetch the <|>users')), COMPLETION],
      ['cursor on an empty line of a block comment', file(fixture.blockComment('fetch the users\n<|>\nsorted')), COMPLETION],
      ['a block comment directly above', file(`${fixture.blockComment('fetch the users')}\n<|>`), comment('fetch the users')],
    );
  }
  if (fixture.inlineBlockComment) {
    cases.push(
      ['cursor right after a one-line block comment', file(`${fixture.inlineBlockComment}<|>`), COMPLETION],
      ['cursor at the start of a comment', file(`<|>${fixture.inlineBlockComment}`), COMPLETION],
      [
        'a one-line block comment above, a line comment above it (not joined)',
        file(`${line} unrelated\n${fixture.inlineBlockComment}\n<|>`),
        comment('fetch the users'),
      ],
    );
  }
  if (fixture.docComment)
    cases.push(['a doc comment directly above', file(`${fixture.docComment}\n<|>`), comment('Fetch the users.\nSorted by name.')]);
  return cases.map(([rule, text, expected]) => [fixture.fileName, rule, fixture, text, expected]);
}

describe('detectIntent', () => {
  it.each(LANGUAGES.flatMap(casesFor))('%s: %s', async (_fileName, _rule, fixture, text, expected) => {
    expect(await detectIntent(atCursor(fixture.fileName, text))).toEqual({ ...expected, language: fixture.language });
  });

  it.each([
    ['Rust doc comments (///)', 'lib.rs', '/// Loads the users.\n/// Sorted by name.\n<|>', 'Loads the users.\nSorted by name.'],
    ['Rust inner doc comments (//!)', 'lib.rs', '//! Helpers for users.\n<|>', 'Helpers for users.'],
    ['C# XML doc comments', 'Users.cs', '/// Loads the users.\n/// Sorted by name.\n<|>', 'Loads the users.\nSorted by name.'],
    ['PHP hash comments', 'users.php', '<?php\n# fetch the users\n<|>', 'fetch the users'],
    ['Python comments with extra hashes', 'users.py', '## fetch the users ##\n<|>', 'fetch the users ##'],
    ['a JSDoc block on one line', 'app.js', '/** Fetch the users. */\n<|>', 'Fetch the users.'],
    [
      'comment lines indented differently',
      'users.py',
      'def main():\n    # fetch the users\n  # sorted by name\n    <|>',
      'fetch the users\nsorted by name',
    ],
    ['Windows line endings', 'app.js', 'const a = 1;\r\n// fetch the users\r\n<|>\r\n', 'fetch the users'],
  ])('comment text: %s', async (_name, fileName, text, instruction) => {
    expect(await detectIntent(atCursor(fileName, text))).toMatchObject(comment(instruction));
  });

  describe('files without a grammar', () => {
    it.each([
      ['a short text file', 'notes.txt', 'first\nsecond<|>', SMALL_FILE],
      [
        'SQL with 4 statements and -- comments',
        'schema.sql',
        '-- users\nCREATE TABLE a (id int);\n\nCREATE TABLE b (id int);\n/* two more\n   tables */\nCREATE TABLE c (id int);\nCREATE ' +
          'TABLE d (id int);<|>',
        SMALL_FILE,
      ],
      [
        'SQL with 5 statements',
        'schema.sql',
        '-- users\nCREATE TABLE a (id int);\nCREATE TABLE b (id int);\nCREATE TABLE c (id int);\nCREATE TABLE d (id int);\nCREATE TABLE ' +
          'e (id int);<|>',
        COMPLETION,
      ],
      ['a shell script of # comments and 2 commands', 'deploy.sh', '#!/bin/sh\n# deploy\nset -e\nmake deploy<|>', SMALL_FILE],
      [
        'a comment above the cursor (no comment rule without a grammar)',
        'Makefile',
        'all:\n\tbuild\ntest:\n\tcheck\nclean:\n\trm -rf out\n# fetch the users\n<|>',
        COMPLETION,
      ],
      ['an empty file', 'README', '<|>', SMALL_FILE],
    ])('%s', async (_name, fileName, text, expected) => {
      expect(await detectIntent(atCursor(fileName, text))).toEqual({ ...expected, language: null });
    });
  });

  it('treats a missing contentBelowCursor as the end of the file', async () => {
    expect(await detectIntent({ fileName: 'main.py', contentAboveCursor: '# fetch the users\n' })).toEqual({
      ...comment('fetch the users'),
      language: 'python',
    });
  });
});

import { languageOf } from '../parsing/languages';

/**
 * Which lines of a snippet are boilerplate: what every file of a language carries and no question
 * about behaviour is answered by. Import and include blocks, package declarations, re-export lists
 * (`export … from`, `exports.X = require(…)`, compiled TypeScript's `__esModule` preamble), `use
 * strict`, and license headers. Read from the text, per language: the chunker's kinds do not tell an
 * import block from other top-level code (both are `module`), and a snippet is lines of a chunk.
 */

/** `blank` and ordinary `comment` lines are neither: a doc comment belongs to the code below it. */
export type LineKind = 'code' | 'boilerplate' | 'comment' | 'blank';

/** What a boilerplate line is, for a question that asks about one kind. */
export type BoilerplateKind = 'imports' | 'exports' | 'license';

/** A statement that starts on a line and may go on over the next ones until `end` matches. */
type Rule = { start: RegExp; end?: RegExp; kind: BoilerplateKind };

type Family = {
  rules: Rule[];
  lineComment: RegExp | null;
  blockComments: boolean;
  /** Python's docstrings: prose, as comments are. */
  docstrings?: boolean;
};

/** A line that closes a statement ending in a string literal: `} from './x';`, `require('x');`. */
const ENDS_WITH_STRING = /['"`]\s*\)?\s*(\.[\w$]+\s*)*;?\s*(\/\/.*|\/\*.*)?$/;

const JS_RULES: Rule[] = [
  { start: /^\s*import\s*(type\s+)?[\w${*'"`]/, end: ENDS_WITH_STRING, kind: 'imports' },
  { start: /^\s*(const|let|var)\s+(\{[^}]*\}|[\w$]+)\s*=\s*require\(\s*['"`][^'"`]+['"`]\s*\)(\.[\w$]+)*\s*[;,]?\s*$/, kind: 'imports' },
  // The next names of `var a = require('a'),\n    b = require('b');`.
  { start: /^\s*[\w$]+\s*=\s*require\(\s*['"`][^'"`]+['"`]\s*\)(\.[\w$]+)*\s*[;,]?\s*$/, kind: 'imports' },
  { start: /^\s*require\(\s*['"`][^'"`]+['"`]\s*\);?\s*$/, kind: 'imports' },
  { start: /^\s*\/\/\/\s*<reference\b/, kind: 'imports' },
  { start: /^\s*['"]use strict['"];?\s*$/, kind: 'imports' },
  { start: /^\s*export\s+(type\s+)?(\*|\{)/, end: /(['"`]\s*;?|\}\s*;?)\s*(\/\/.*)?$/, kind: 'exports' },
  { start: /^\s*(module\.)?exports(\.[\w$]+)?\s*=\s*require\(/, end: /\)\s*;?\s*$/, kind: 'exports' },
  { start: /^\s*module\.exports\s*=\s*[A-Za-z_$][\w$.]*\s*;?\s*$/, kind: 'exports' },
  { start: /^\s*exports\.default\s*=\s*[A-Za-z_$][\w$.]*\s*;?\s*$/, kind: 'exports' },
  // Compiled TypeScript: the module marker, the `exports.A = exports.B = void 0;` line, `exports.A = A;`, re-exports.
  { start: /^\s*Object\.defineProperty\(exports,\s*["']__esModule["']/, kind: 'exports' },
  { start: /^\s*(exports\.[\w$]+\s*=\s*)+void 0;\s*$/, kind: 'exports' },
  { start: /^\s*exports\.([\w$]+)\s*=\s*\1;\s*$/, kind: 'exports' },
  // Object.defineProperty(exports, "X", { enumerable: true, get: function () { return y.X; } });
  {
    start: /^\s*Object\.defineProperty\(exports,\s*["'][\w$]+["'],\s*\{\s*enumerable:\s*true,\s*get:\s*function\s*\(\)\s*\{\s*return\s/,
    kind: 'exports',
  },
  { start: /^\s*([\w$]+\.)?__exportStar\(require\(/, kind: 'exports' },
];

const FAMILIES: Record<string, Family> = {
  js: { rules: JS_RULES, lineComment: /^\s*\/\//, blockComments: true },
  python: {
    rules: [
      { start: /^\s*import\s+[\w.]+/, end: /^[^\\]*$/, kind: 'imports' },
      { start: /^\s*from\s+[\w.]+\s+import\s+\(/, end: /\)\s*(#.*)?$/, kind: 'imports' },
      { start: /^\s*from\s+[\w.]+\s+import\s+/, end: /^[^\\]*$/, kind: 'imports' },
      { start: /^\s*if\s+([\w.]+\.)?TYPE_CHECKING\s*:\s*$/, kind: 'imports' },
      { start: /^__all__\s*\+?=/, end: /[\])]\s*(#.*)?$/, kind: 'exports' },
    ],
    lineComment: /^\s*#/,
    blockComments: false,
    docstrings: true,
  },
  go: {
    rules: [
      { start: /^\s*package\s+\w+\s*$/, kind: 'imports' },
      { start: /^\s*import\s*\(\s*$/, end: /^\s*\)\s*$/, kind: 'imports' },
      { start: /^\s*import\s+([\w.]+\s+)?"[^"]*"\s*$/, kind: 'imports' },
    ],
    lineComment: /^\s*\/\//,
    blockComments: true,
  },
  java: {
    rules: [
      { start: /^\s*package\s+[\w.]+\s*;?\s*$/, kind: 'imports' },
      { start: /^\s*import\s+(static\s+)?[\w.]+(\.\*)?(\s+as\s+\w+)?\s*;?\s*$/, kind: 'imports' },
    ],
    lineComment: /^\s*\/\//,
    blockComments: true,
  },
  ruby: {
    rules: [
      { start: /^\s*(require|require_relative|load)\s*\(?\s*['"][^'"]+['"]\s*\)?\s*$/, kind: 'imports' },
      { start: /^\s*autoload\s*\(?\s*:\w+\s*,\s*['"][^'"]+['"]\s*\)?\s*$/, kind: 'imports' },
    ],
    lineComment: /^\s*#/,
    blockComments: false,
  },
  rust: {
    rules: [
      { start: /^\s*(pub(\([\w:\s]+\))?\s+)?use\s+[\w:{*]/, end: /;\s*(\/\/.*)?$/, kind: 'imports' },
      { start: /^\s*(pub(\([\w:\s]+\))?\s+)?mod\s+\w+\s*;\s*$/, kind: 'imports' },
      { start: /^\s*extern\s+crate\s+\w+(\s+as\s+\w+)?\s*;\s*$/, kind: 'imports' },
      { start: /^\s*#\[macro_use\]\s*$/, kind: 'imports' },
      { start: /^\s*#!\[.*\]\s*$/, kind: 'imports' },
    ],
    lineComment: /^\s*\/\//,
    blockComments: true,
  },
  c: {
    rules: [
      { start: /^\s*#\s*(include|import)\b/, kind: 'imports' },
      { start: /^\s*#\s*pragma\s+once\b/, kind: 'imports' },
      // Include guards: #ifndef FOO_H / #define FOO_H / #endif /* FOO_H */.
      { start: /^\s*#\s*(ifndef|define)\s+\w*_(H|HPP|HH|H_|HPP_|INCLUDED|INCLUDED_)\s*$/i, kind: 'imports' },
      { start: /^\s*#\s*endif\s*(\/\/|\/\*)\s*!?\s*\w*_(H|HPP|HH|H_|HPP_|INCLUDED|INCLUDED_)\b.*$/i, kind: 'imports' },
      { start: /^\s*using\s+namespace\s+[\w:]+\s*;\s*$/, kind: 'imports' },
    ],
    lineComment: /^\s*\/\//,
    blockComments: true,
  },
  csharp: {
    rules: [
      { start: /^\s*(global\s+)?using\s+(static\s+)?[\w.]+(\s*=\s*[\w.<>,\s]+)?\s*;\s*$/, kind: 'imports' },
      { start: /^\s*namespace\s+[\w.]+\s*;\s*$/, kind: 'imports' },
    ],
    lineComment: /^\s*\/\//,
    blockComments: true,
  },
  php: {
    rules: [
      { start: /^\s*<\?php\s*$/, kind: 'imports' },
      { start: /^\s*namespace\s+[\w\\]+\s*;\s*$/, kind: 'imports' },
      { start: /^\s*use\s+(function\s+|const\s+)?[\w\\{},\s]+(\s+as\s+\w+)?\s*;\s*$/, kind: 'imports' },
      { start: /^\s*(require|include)(_once)?\b/, end: /;\s*$/, kind: 'imports' },
      { start: /^\s*declare\s*\(\s*strict_types\s*=\s*1\s*\)\s*;\s*$/, kind: 'imports' },
    ],
    lineComment: /^\s*(\/\/|#)/,
    blockComments: true,
  },
};

const FAMILY_OF: Record<string, keyof typeof FAMILIES> = {
  javascript: 'js',
  typescript: 'js',
  tsx: 'js',
  vue: 'js',
  python: 'python',
  go: 'go',
  java: 'java',
  kotlin: 'java',
  scala: 'java',
  groovy: 'java',
  ruby: 'ruby',
  rust: 'rust',
  c: 'c',
  cpp: 'c',
  objectivec: 'c',
  csharp: 'csharp',
  php: 'php',
};

/** Languages without rules still have their license headers found, in the comment syntax most share. */
const GENERIC: Family = { rules: [], lineComment: /^\s*(\/\/|#|--|;)/, blockComments: true };

const LICENSE = /\b(licen[cs]ed?|copyright|spdx-license-identifier|permission is hereby granted|all rights reserved)\b|\(c\)\s*\d{4}/i;

/** The language's rules: the chunk's language, else the one its path's extension names. */
function familyOf(language: string | null, path: string): Family {
  const name = language ?? languageOf(path);
  const family = name ? FAMILY_OF[name] : undefined;
  return family ? FAMILIES[family] : GENERIC;
}

/** Each line's kind, and the kind of boilerplate of each boilerplate line. */
export function classifyLines(options: { content: string; language: string | null; path: string }): {
  kinds: LineKind[];
  boilerplate: Array<BoilerplateKind | null>;
} {
  const family = familyOf(options.language, options.path);
  const lines = options.content.split('\n');
  const kinds: LineKind[] = [];
  const boilerplate: Array<BoilerplateKind | null> = [];
  let pending: Rule | null = null;
  let inComment = false;
  let docstring: string | null = null;
  for (const line of lines) {
    if (docstring) {
      kinds.push('comment');
      boilerplate.push(null);
      if (line.includes(docstring)) docstring = null;
      continue;
    }
    if (inComment) {
      kinds.push('comment');
      boilerplate.push(null);
      if (line.includes('*/')) inComment = false;
      continue;
    }
    if (pending) {
      kinds.push('boilerplate');
      boilerplate.push(pending.kind);
      if (pending.end!.test(line)) pending = null;
      continue;
    }
    if (!line.trim()) {
      kinds.push('blank');
      boilerplate.push(null);
      continue;
    }
    if (family.blockComments && /^\s*\/\*/.test(line)) {
      kinds.push('comment');
      boilerplate.push(null);
      inComment = !line.slice(line.indexOf('/*') + 2).includes('*/');
      continue;
    }
    const opening = family.docstrings ? /^\s*[rRbBuU]?("""|''')/.exec(line) : null;
    if (opening) {
      kinds.push('comment');
      boilerplate.push(null);
      const rest = line.slice(opening[0].length);
      docstring = rest.includes(opening[1]) ? null : opening[1];
      continue;
    }
    if (family.lineComment?.test(line)) {
      kinds.push('comment');
      boilerplate.push(null);
      continue;
    }
    const rule = family.rules.find((candidate) => candidate.start.test(line));
    if (!rule) {
      kinds.push('code');
      boilerplate.push(null);
      continue;
    }
    kinds.push('boilerplate');
    boilerplate.push(rule.kind);
    if (rule.end && !rule.end.test(line)) pending = rule;
  }
  markLicenseHeaders(lines, kinds, boilerplate);
  return { kinds, boilerplate };
}

/** A run of comment lines that speaks of a license or copyright is a license header, whatever comes after it. */
function markLicenseHeaders(lines: readonly string[], kinds: LineKind[], boilerplate: Array<BoilerplateKind | null>): void {
  let start = 0;
  while (start < lines.length) {
    if (kinds[start] !== 'comment') {
      start += 1;
      continue;
    }
    let end = start;
    while (end + 1 < lines.length && kinds[end + 1] === 'comment') end += 1;
    if (LICENSE.test(lines.slice(start, end + 1).join('\n'))) {
      for (let index = start; index <= end; index += 1) {
        kinds[index] = 'boilerplate';
        boilerplate[index] = 'license';
      }
    }
    start = end + 1;
  }
}

/** What a snippet holds: only boilerplate (and blank lines and comments), or code after some boilerplate lines. */
export type SnippetShape = { lines: LineKind[] } & (
  | { boilerplate: true; of: ReadonlySet<BoilerplateKind> }
  | {
      boilerplate: false;
      /** Lines (0-based) before the code that are boilerplate, and the blank lines after them: what trimming drops. */
      leading: number;
    }
);

/** At most this many lines of code among more lines of boilerplate: the snippet counts as boilerplate. */
const MOSTLY_BOILERPLATE_CODE_LINES = 3;

export function snippetShape(options: { content: string; language: string | null; path: string }): SnippetShape {
  const { kinds, boilerplate } = classifyLines(options);
  const firstCode = kinds.indexOf('code');
  if (firstCode === -1) {
    const found = new Set(boilerplate.filter((kind): kind is BoilerplateKind => kind !== null));
    // Comments alone (a doc block, say) are not boilerplate.
    return found.size ? { lines: kinds, boilerplate: true, of: found } : { lines: kinds, boilerplate: false, leading: 0 };
  }
  // A module's preamble with a line or two of code after it (`const debug = Debug("x")`, a class's first line) is the preamble.
  const codeLines = kinds.filter((kind) => kind === 'code').length;
  const boilerplateLines = kinds.filter((kind) => kind === 'boilerplate').length;
  if (codeLines <= MOSTLY_BOILERPLATE_CODE_LINES && codeLines < boilerplateLines) {
    return { lines: kinds, boilerplate: true, of: new Set(boilerplate.filter((kind): kind is BoilerplateKind => kind !== null)) };
  }
  // Up to the last boilerplate line before the code, and the blank lines after it: a doc comment stays with its code.
  const lastBoilerplate = kinds.lastIndexOf('boilerplate', firstCode);
  if (lastBoilerplate === -1) return { lines: kinds, boilerplate: false, leading: 0 };
  let leading = lastBoilerplate + 1;
  while (kinds[leading] === 'blank') leading += 1;
  return { lines: kinds, boilerplate: false, leading };
}

/** A line that does something: a call, control flow, an assignment's right-hand work. */
const BEHAVIOUR_WORDS =
  'return|if|else|for|foreach|while|switch|case|throw|raise|await|yield|try|catch|except|finally|defer|go|new|match|loop';
const BEHAVIOUR = new RegExp(`\\b(${BEHAVIOUR_WORDS})\\b|[\\w\\])]\\s*\\(`);

/**
 * Whether a snippet only declares: types, interfaces, struct fields, constants, with at most one line
 * that does something. "Where is X checked" is answered by the code that checks, not by the type of
 * its options, though both name X.
 */
export function declaresOnly(options: { content: string; lines: readonly LineKind[] }): boolean {
  const code = options.content.split('\n').filter((_, index) => options.lines[index] === 'code');
  return code.length >= 3 && code.filter((line) => BEHAVIOUR.test(line)).length <= 1;
}

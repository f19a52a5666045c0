import { fileRole, type FileRole } from '../indexing/file-role';
import { identifierTerms, stemWord } from '../llm/embedders/terms';
import { LruCache } from '../lru-cache';
import { synonymsOf } from './synonyms';
import { asksForTests, termExpansions } from './query-understanding';

/**
 * Ranks the files that fused chunk hits come from, the way a developer expects "where is X done?"
 * to be answered (docs/retrieval-eval.md has the evaluation behind each factor):
 *
 * - **File-level evidence**: a file's best chunk plus a damped sum of its other chunks, so one file
 *   with several relevant chunks beats a stray match elsewhere.
 * - **Role prior**: implementation first; tests, type declarations, docs, changelogs, examples and
 *   generated files weigh less unless the question asks for them ("which tests…", "type
 *   declarations", "documentation").
 * - **Name field**: question words (and their synonyms) in the file's name count, words in its
 *   directory and in the symbols of its matching chunks count less: BM25F's title field, at file
 *   level, identifier-split.
 * - **Test → implementation**: a matching test lends part of its evidence to the implementation
 *   file it is named after (`args_test.go` → `args.go`, `test_types.py` → `types.py`) or imports.
 */

export type FileEvidence = {
  path: string;
  role: string | null;
  score: number;
  symbol: string | null;
  content: string;
  /** The chunk's 1-based rank in the vector and keyword chunk rankings, when it is in them. */
  vectorRank?: number | null;
  textRank?: number | null;
};

export type QuestionIntent = Partial<Record<Exclude<FileRole, 'implementation' | 'generated'>, boolean>>;

/** The roles a question asks for by name; tests are read apart (asksForTests: "test" is also a verb). */
const INTENT_PATTERNS: Record<Exclude<keyof QuestionIntent, 'test'>, RegExp> = {
  types: /\b(typings?|type declarations?|type definitions?|declarations?|\.d\.ts|typescript types?|type stubs?)\b/i,
  docs: /\b(docs?|documentation|documented|readme|guides?|tutorials?|manual)\b/i,
  changelog: /\b(changelog|change log|release notes|changes between versions|what changed in)\b/i,
  example: /\b(examples?|samples?|demos?)\b/i,
};

/** Which kinds of file other than the implementation the question asks for. */
export function questionIntent(question: string): QuestionIntent {
  const intent: QuestionIntent = asksForTests(question) ? { test: true } : {};
  for (const [role, pattern] of Object.entries(INTENT_PATTERNS) as Array<[keyof QuestionIntent, RegExp]>)
    if (pattern.test(question)) intent[role] = true;
  return intent;
}

/** Weights of the roles no one asked for; a role the question asks for gets ASKED_FOR. */
export const ROLE_PRIOR: Record<FileRole, number> = {
  implementation: 1,
  test: 0.45,
  types: 0.4,
  docs: 0.4,
  changelog: 0.3,
  example: 0.6,
  generated: 0.6,
};
const ASKED_FOR = 1.3;
/** The implementation when the question asks for something else: still a good answer, not the best. */
const IMPLEMENTATION_WHEN_OTHER_ASKED = 0.85;
/** Each further chunk of a file adds this share of its score, halving again for every next one. */
const EVIDENCE_DAMPING = 0.2;
const MAX_CHUNKS_COUNTED = 5;
/** Weight of the share of question words in the file name, directory name and matched symbols. */
const NAME_WEIGHT = 0.3;
const DIRECTORY_WEIGHT = 0.1;
const SYMBOL_WEIGHT = 0.1;
/** Weight of a file's own BM25 score (scaled so the best file's is 1) beside its chunks' evidence. */
const LEXICAL_WEIGHT = 0.5;
/** Share of a test file's evidence lent to the implementation it is named after or imports. */
const TEST_LEND = 0.3;

function roleWeight(role: FileRole, intent: QuestionIntent): number {
  const askedForOther = Object.values(intent).some(Boolean);
  if (role === 'implementation') return askedForOther ? IMPLEMENTATION_WHEN_OTHER_ASKED : 1;
  if (role !== 'generated' && intent[role]) return ASKED_FOR;
  return ROLE_PRIOR[role];
}

/**
 * Most names a search ranks (files, directories, symbols) come back in the next searches of the same
 * code base: the stems of the 20,000 most recently ranked names are kept.
 */
const stemCache = new LruCache<string, ReadonlySet<string>>(20_000);

/** The stems of a name's identifier words (kept across searches: see stemCache). */
function stems(text: string): ReadonlySet<string> {
  let cached = stemCache.get(text);
  if (!cached) {
    cached = new Set(identifierTerms(text).map(stemWord));
    stemCache.set(text, cached);
  }
  return cached;
}

/** The question's words as groups of stems: a word matches a name through any of its synonyms. */
function questionGroups(terms: readonly string[]): Array<Set<string>> {
  return terms.map(
    (term) => new Set([term, ...synonymsOf(term), ...termExpansions(term).map((expansion) => expansion.word)].map(stemWord)),
  );
}

/** The share of the question's words (groups) that `words` hold: a name holding one word of five counts a fifth. */
function matches(groups: ReadonlyArray<Set<string>>, words: ReadonlySet<string>): number {
  if (!groups.length || !words.size) return 0;
  let count = 0;
  for (const group of groups) {
    for (const stem of group) {
      if (words.has(stem)) {
        count += 1;
        break;
      }
    }
  }
  return count / groups.length;
}

function splitPath(path: string): { directory: string; stem: string } {
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  return { directory: slash === -1 ? '' : path.slice(0, slash), stem: name.replace(/(\.d)?\.[^.]+$/, '') };
}

/** The implementation module a test file is named after: test_foo.py, foo_test.go, foo.test.ts, FooTest.java → foo / Foo. */
function testedName(path: string): string | null {
  const { stem } = splitPath(path);
  const name = stem
    .replace(/^test_/, '')
    .replace(/[._-](test|spec)s?$/i, '')
    .replace(/(Test|Tests|Spec)$/, '');
  return name && name !== stem ? name.toLowerCase() : null;
}

const IMPORT_PATTERNS = [
  /\bfrom\s+([\w.]+)\s+import\b/g,
  /^\s*import\s+([\w.]+)/gm,
  /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g,
  /\bfrom\s+['"]([^'"]+)['"]/g,
  /^\s*import\s+['"]([^'"]+)['"]/gm,
];

/** Last path or module segment of everything the content imports (`from click.core import` → core, `require('../lib/Pool')` → pool). */
function importedNames(content: string): Set<string> {
  const names = new Set<string>();
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of content.matchAll(pattern)) {
      const module = match[1].replace(/\.(js|ts|mjs|cjs|py)$/, '');
      const last = module.split(/[/.]/).filter(Boolean).pop();
      if (last) names.add(last.toLowerCase());
    }
  }
  return names;
}

export type RankedFile = {
  path: string;
  role: FileRole;
  score: number;
  /** What the score was made from, for a learned ranking (file-features.ts). */
  signals: FileSignals;
};

/** Raw evidence about one candidate file of a question, before any weighting. */
export type FileSignals = {
  /** The hand-weighted score (this module's formula). */
  hand: number;
  /** Fused chunk evidence: the best chunk plus a damped sum of the others. */
  evidence: number;
  /** Evidence lent by a test of this file. */
  lent: number;
  /** The file's own BM25 score, 0 when it has none. */
  lexical: number;
  /** Best 1-based ranks of the file's chunks in the vector and keyword rankings, null when absent. */
  vectorRank: number | null;
  textRank: number | null;
  /** The share of question words in the file's name, directory and matching chunks' symbols. */
  name: number;
  directory: number;
  symbol: number;
  /** The role prior as applied (roleWeight). */
  roleWeight: number;
  /** Candidate chunks of the file. */
  chunks: number;
  /** Directories above the file. */
  depth: number;
  /** The idf-weighted share of the question's words the whole file holds (LexicalIndex.fileCoverage), 0 when unknown. */
  coverage: number;
};

/**
 * Orders the files of chunk hits (any order; a file may have several) for a question whose
 * full-text terms are `terms`. Answers every file once, best first.
 */
export function rankFiles(
  hits: readonly FileEvidence[],
  options: {
    question: string;
    terms: readonly string[];
    lexical?: ReadonlyMap<string, number>;
    /** Each candidate file's coverage of the question's words (LexicalIndex.fileCoverage). */
    coverage?: (paths: readonly string[]) => ReadonlyMap<string, number>;
  },
): RankedFile[] {
  const intent = questionIntent(options.question);
  const groups = questionGroups(options.terms);
  type Candidate = {
    role: FileRole;
    scores: number[];
    symbols: Set<string>;
    imports: Set<string>;
    vectorRank: number | null;
    textRank: number | null;
  };
  const byPath = new Map<string, Candidate>();
  const best = (a: number | null, b: number | null | undefined) => (b == null ? a : a === null ? b : Math.min(a, b));
  for (const hit of hits) {
    let file = byPath.get(hit.path);
    if (!file) {
      const role = (hit.role as FileRole | null) ?? fileRole(hit.path);
      file = { role, scores: [], symbols: new Set(), imports: new Set(), vectorRank: null, textRank: null };
      byPath.set(hit.path, file);
    }
    file.scores.push(hit.score);
    file.vectorRank = best(file.vectorRank, hit.vectorRank);
    file.textRank = best(file.textRank, hit.textRank);
    if (hit.symbol) for (const stem of stems(hit.symbol)) file.symbols.add(stem);
    if (file.role === 'test') for (const name of importedNames(hit.content)) file.imports.add(name);
  }

  const evidence = new Map<string, number>();
  for (const [path, file] of byPath) {
    const sorted = [...file.scores].sort((a, b) => b - a).slice(0, MAX_CHUNKS_COUNTED);
    let total = sorted[0] ?? 0;
    let share = EVIDENCE_DAMPING;
    for (const score of sorted.slice(1)) {
      total += share * score;
      share /= 2;
    }
    evidence.set(path, total);
  }

  // Tests lend weight to the implementation they exercise, unless tests are what was asked for.
  const lent = new Map<string, number>();
  if (!intent.test) {
    const implementations = new Map<string, string[]>();
    for (const [path, file] of byPath) {
      if (file.role !== 'implementation') continue;
      const { stem, directory } = splitPath(path);
      for (const key of [
        stem.toLowerCase(),
        ...(stem === 'index' || stem === '__init__' || stem === 'mod' ? [directory.split('/').pop()!.toLowerCase()] : []),
      ]) {
        implementations.set(key, [...(implementations.get(key) ?? []), path]);
      }
    }
    for (const [path, file] of byPath) {
      if (file.role !== 'test') continue;
      const targets = new Set<string>();
      const named = testedName(path);
      if (named) for (const target of implementations.get(named) ?? []) targets.add(target);
      for (const name of file.imports) for (const target of implementations.get(name) ?? []) targets.add(target);
      for (const target of targets) lent.set(target, Math.max(lent.get(target) ?? 0, TEST_LEND * evidence.get(path)!));
    }
  }

  const coverage = options.coverage?.([...byPath.keys()]) ?? new Map<string, number>();
  let maxLexical = 0;
  for (const score of options.lexical?.values() ?? []) maxLexical = Math.max(maxLexical, score);
  const ranked: RankedFile[] = [];
  for (const [path, file] of byPath) {
    const { directory, stem } = splitPath(path);
    const name = matches(groups, stems(stem));
    const inDirectory = matches(groups, stems(directory));
    const symbol = matches(groups, file.symbols);
    const nameBoost = 1 + NAME_WEIGHT * name + DIRECTORY_WEIGHT * inDirectory + SYMBOL_WEIGHT * symbol;
    const lexicalScore = options.lexical?.get(path) ?? 0;
    const lexical = maxLexical > 0 ? lexicalScore / maxLexical : 0;
    const weight = roleWeight(file.role, intent);
    const score = (evidence.get(path)! + (lent.get(path) ?? 0) + LEXICAL_WEIGHT * lexical) * nameBoost * weight;
    const signals: FileSignals = {
      hand: score,
      evidence: evidence.get(path)!,
      lent: lent.get(path) ?? 0,
      lexical: lexicalScore,
      vectorRank: file.vectorRank,
      textRank: file.textRank,
      name,
      directory: inDirectory,
      symbol,
      roleWeight: weight,
      chunks: file.scores.length,
      depth: directory ? directory.split('/').length : 0,
      coverage: coverage.get(path) ?? 0,
    };
    ranked.push({ path, role: file.role, score, signals });
  }
  return ranked.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
}

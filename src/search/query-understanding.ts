import { stemWord } from '../llm/embedders/terms';

/**
 * What a question's words mean for keyword search, before they are matched: whether "test" asks
 * for tests or is a verb, the other spellings of an abbreviation, and word forms the stemmer does
 * not reach (irregular plurals), and a name written in mixed case that code writes as one word
 * ("MySQL": `mysql`). Identifier styles in a question (camelCase, snake_case, kebab-case) are
 * otherwise split by identifierTerms into the words the index holds.
 * Small, hand-written and general (no word of any one code base); synonyms.ts holds related words
 * that are not the same word.
 */

/**
 * "test" as what the code does: "the pool tests that / whether / if …", "does it test the
 * connection", "to test the socket". Taken out before the question is read for a request for tests.
 */
const TEST_VERB = [
  // Not after a word that makes "tests" a noun: "the tests that check the pool" asks for them.
  /(?<!\b(the|which|what|any|some|a|an|its|their|unit|integration|no|are|there)\s+)\b(tests?|tested|testing)\s+(that|whether|if)\b/gi,
  /\b(to|does|do|did|can|could|should|will|would|must|it|they|then|and|or)\s+test(s|ed|ing)?\b/gi,
];
/**
 * Asking for tests: the word names them ("the tests for", "unit tests", "which test covers",
 * "test suite", "a test helper", "spec", "fixtures"), or the question is about the testing of
 * something ("how is X tested").
 */
const TEST_NOUN = new RegExp(
  `\\b(${[
    'tests',
    'specs?',
    'fixtures?',
    'test\\s+(suites?|files?|cases?|helpers?|utilities|harness|data|runner|for|of|covering|covers)',
    '(unit|integration|end-to-end|e2e|regression|snapshot|expected-output)\\s+tests?',
    '(the|a|an|which|what|any|its|their|some|each|one)\\s+test',
    'tested',
    'testing',
  ].join('|')})\\b`,
  'i',
);

/** Whether the question asks for tests (test files, test cases), not for code that tests something. */
export function asksForTests(question: string): boolean {
  let text = question.replace(/`[^`]*`/g, ' ');
  for (const verb of TEST_VERB) text = text.replace(verb, ' ');
  return TEST_NOUN.test(text);
}

/** Weight of an abbreviation's other spelling beside the word as written: the same word, a little less sure. */
export const ABBREVIATION_WEIGHT = 0.8;

/**
 * Spellings of one word, short and long: a question says "PostgreSQL", the files are `pg-*.js`;
 * a question says "ctx", the code `context`. Each spelling matches the others at ABBREVIATION_WEIGHT.
 */
const ABBREVIATIONS: ReadonlyArray<readonly string[]> = [
  // "PostgreSQL" in a question splits as an identifier does: postgre, sql.
  ['pg', 'postgre', 'postgres', 'postgresql', 'psql'],
  ['cfg', 'conf', 'config', 'configuration'],
  ['ctx', 'context'],
  ['msg', 'message'],
  ['err', 'error'],
  ['k8s', 'kubernetes'],
  ['auth', 'authentication', 'authorization', 'authn', 'authz'],
  ['repo', 'repository'],
  ['db', 'database'],
  ['env', 'environment'],
  ['args', 'arguments'],
  ['arg', 'argument'],
  ['param', 'parameter'],
  ['params', 'parameters'],
  ['opts', 'options'],
  ['opt', 'option'],
  ['dir', 'directory'],
  ['req', 'request'],
  ['res', 'resp', 'response'],
  ['conn', 'connection'],
  ['addr', 'address'],
  ['buf', 'buffer'],
  ['impl', 'implementation'],
  ['init', 'initialize', 'initialise', 'initialization'],
  ['tx', 'transaction'],
  ['btn', 'button'],
  ['idx', 'index'],
  ['len', 'length'],
  ['num', 'number'],
  ['str', 'string'],
  ['tmp', 'temp', 'temporary'],
  ['pkg', 'package'],
  ['cb', 'callback'],
  ['ws', 'websocket'],
  ['js', 'javascript'],
  ['py', 'python'],
  ['regex', 'regexp'],
  ['eof', 'end of file'],
  ['proc', 'process'],
  ['sync', 'synchronize', 'synchronization'],
  ['async', 'asynchronous'],
  ['perm', 'permission'],
  ['perms', 'permissions'],
  ['attr', 'attribute'],
  ['attrs', 'attributes'],
  ['prev', 'previous'],
  ['src', 'source'],
  ['dest', 'dst', 'destination'],
  ['stats', 'statistics'],
  ['util', 'utility'],
  ['utils', 'utilities'],
  ['mgr', 'manager'],
  ['svc', 'service'],
  ['srv', 'server'],
  ['cli', 'command line'],
];

const ABBREVIATION_OF = new Map<string, string[]>();
for (const group of ABBREVIATIONS) {
  // Multi-word spellings ("command line") are matched by their words already; only single words expand.
  const words = group.filter((word) => !word.includes(' '));
  for (const word of words) {
    const others = words.filter((other) => other !== word);
    ABBREVIATION_OF.set(word, [...new Set([...(ABBREVIATION_OF.get(word) ?? []), ...others])]);
  }
}

/** Plurals and forms the suffix stemmer (stemWord) leaves unmatched: `indices` is `index`, `aliases` is `alias`. */
const IRREGULAR: ReadonlyMap<string, string> = new Map(
  Object.entries({
    indices: 'index',
    indexes: 'index',
    vertices: 'vertex',
    matrices: 'matrix',
    children: 'child',
    aliases: 'alias',
    statuses: 'status',
    analyses: 'analysis',
    bases: 'base',
    caches: 'cache',
    databases: 'database',
    responses: 'response',
    processes: 'process',
    leaves: 'leaf',
    halves: 'half',
    people: 'person',
    criteria: 'criterion',
    schemata: 'schema',
    data: 'datum',
  }),
);

/** A word's base form when the stemmer would miss it (an irregular plural), else null. */
export function baseForm(term: string): string | null {
  // A Map, not an object: a question's word may be `constructor` or `toString`.
  const base = IRREGULAR.get(term);
  if (!base || base === 'datum') return null;
  return stemWord(base) === stemWord(term) ? null : base;
}

export type Expansion = { word: string; weight: number };

/**
 * The other words a question's term matches, with their weights: its other spellings (an
 * abbreviation and its long form, ABBREVIATION_WEIGHT) and its base form when the stemmer cannot
 * reach it (weight 1: the same word). Not the term itself.
 */
export function termExpansions(term: string): Expansion[] {
  const expansions: Expansion[] = [];
  const base = baseForm(term);
  if (base) expansions.push({ word: base, weight: 1 });
  for (const word of ABBREVIATION_OF.get(term) ?? ABBREVIATION_OF.get(base ?? '') ?? [])
    if (word !== term && word !== base) expansions.push({ word, weight: ABBREVIATION_WEIGHT });
  return expansions;
}

/**
 * Names in a question written in mixed case with an acronym in them ("MySQL", "PostgreSQL",
 * "GraphQL", "OAuth"), as one lower-case word: identifierTerms splits them (`my`, `sql`) as it
 * splits `parseConnection`, but code that names such a thing often writes it in one piece
 * (`require('mysql')`, `graphql.parse`). A plain camelCase identifier is left to its parts.
 */
export function wholeWords(question: string): string[] {
  const words = question.match(/\b[A-Za-z][A-Za-z0-9]*\b/g) ?? [];
  return [
    ...new Set(words.filter((word) => word.length <= 24 && /[a-z]/.test(word) && /[A-Z]{2}/.test(word)).map((word) => word.toLowerCase())),
  ];
}

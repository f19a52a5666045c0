import { queryVocabulary } from './vocabulary';

/**
 * Programming vocabulary that means the same thing in a question and in code: a question says
 * "promise", the code `thenable`; "configuration" and `opts`; "error" and `err`. Small and
 * general on purpose (no word of any one code base): each entry lists words a term also matches.
 * Applied to full-text search (a term's synonyms join its OR group, text-query.ts) and to the
 * question the lexical embedder embeds (expandQuestion); a model embedder sees the question as
 * written.
 */
const GROUPS: ReadonlyArray<readonly string[]> = [
  ['promise', 'thenable', 'async', 'await'],
  ['id', 'identifier', 'uuid'],
  ['config', 'configuration', 'options', 'opts', 'settings'],
  ['err', 'error', 'exception'],
  ['auth', 'authentication', 'authenticate', 'credentials'],
  ['password', 'passwd', 'credentials', 'secret'],
  ['args', 'arguments', 'argv'],
  ['param', 'params', 'parameter'],
  ['env', 'environment'],
  ['dir', 'directory', 'folder'],
  ['db', 'database'],
  ['repo', 'repository'],
  ['msg', 'message'],
  ['cb', 'callback'],
  ['init', 'initialize', 'initialise', 'setup'],
  ['len', 'length'],
  ['str', 'string'],
  ['num', 'number'],
  ['conn', 'connection'],
  ['req', 'request'],
  ['res', 'response', 'reply'],
  ['tmp', 'temp', 'temporary'],
  ['src', 'source'],
  ['impl', 'implementation'],
  ['deprecation', 'deprecated', 'deprecate', 'warning', 'warn'],
  ['delete', 'remove', 'del'],
  ['regex', 'regexp', 'pattern'],
  ['cwd', 'working'],
  ['stdout', 'output'],
  ['stdin', 'input'],
  ['attr', 'attribute'],
  ['prop', 'property'],
  ['util', 'utils', 'helper', 'helpers'],
  ['ctx', 'context'],
  ['spec', 'test'],
  ['docs', 'documentation', 'doc'],
  ['log', 'logger', 'logging'],
  ['max', 'maximum'],
  ['min', 'minimum'],
  ['fmt', 'format'],
  ['tty', 'terminal', 'console'],
];

const SYNONYMS = new Map<string, string[]>();
for (const group of GROUPS) {
  for (const word of group) {
    const others = group.filter((other) => other !== word);
    SYNONYMS.set(word, [...new Set([...(SYNONYMS.get(word) ?? []), ...others])]);
  }
}

/** The words `term` also matches (not itself), or none (also when the table is off: vocabulary.ts). */
export function synonymsOf(term: string): readonly string[] {
  if (!queryVocabulary().handWritten) return [];
  return SYNONYMS.get(term) ?? [];
}

/** A question with the synonyms of its words appended, for the lexical embedder's bag of words. */
export function expandQuestion(question: string, terms: readonly string[]): string {
  const extra = [...new Set(terms.flatMap((term) => synonymsOf(term)))].filter((word) => !terms.includes(word));
  return extra.length ? `${question}\n${extra.join(' ')}` : question;
}

import { badInput } from '../errors';
import { identifierTerms, stemWord, STOP_WORDS } from '../llm/embedders/terms';
import { synonymsOf } from './synonyms';

/**
 * Refuses a query with nothing to search for (only punctuation, single letters or stop words),
 * naming the field: ranking such a query returns noise that looks like an answer.
 */
export function requireSearchableQuery(query: string, field: string): void {
  if (queryTerms(query).length === 0) {
    throw badInput(
      `${field} has nothing to search for: it holds only punctuation or common words. Name the code you are looking for (a function, a ` +
        `concept, an error).`,
      field,
    );
  }
}

/**
 * The words of a question for full-text search: identifiers split as the index splits them
 * (`parseConnection` matches "parse connection"), stop words out (inflected ones too: "happened"),
 * each at most once.
 */
export function queryTerms(question: string, limit = 32): string[] {
  const terms: string[] = [];
  for (const term of identifierTerms(question)) {
    if (STOP_WORDS.has(term) || STOP_WORDS.has(stemWord(term)) || !/^[a-z0-9_]+$/.test(term) || terms.includes(term)) continue;
    terms.push(term);
    if (terms.length === limit) break;
  }
  return terms;
}

/**
 * The forms of one term as a tsquery fragment: a longer word by the prefix of its stem (`packets`
 * finds packet and packet_writer, `queued` finds queue), a short one as it is or with an s (`node`,
 * `nodes`), a joined identifier or a number exactly.
 */
export function termForms(term: string): string {
  const stem = stemWord(term);
  if (term.includes('_') || /^\d+$/.test(term)) return term;
  if (stem.length >= 4 && (stem !== term || term.length >= 5)) return `${stem}:*`;
  const forms = stem !== term ? [term, stem] : term.endsWith('s') ? [term] : [term, `${term}s`];
  return forms.length === 1 ? forms[0] : `(${forms.join(' | ')})`;
}

/**
 * A term and its synonyms (synonyms.ts) as one tsquery group: `promise` matches `promis:* | thenable
 * | async | await`, so the levels below count it as one word whichever form a chunk holds.
 */
export function termGroup(term: string): string {
  const forms = [...new Set([term, ...synonymsOf(term)].map(termForms))];
  return forms.length === 1 ? forms[0] : `(${forms.join(' | ')})`;
}

/** A tsquery matching any of the terms in any of its forms. */
export function toTsQuery(terms: readonly string[]): string {
  return [...new Set(terms.map(termGroup))].join(' | ');
}

/** A tsquery matching chunks that hold every one of three or more terms; null for fewer terms (the pairs query covers them). */
export function toAllTsQuery(terms: readonly string[]): string | null {
  const groups = [...new Set(terms.map(termGroup))];
  return groups.length >= 3 ? groups.join(' & ') : null;
}

/**
 * A tsquery matching chunks that name one of the question's identifiers whole (`WatchCompilerHost`,
 * `parse_connection`: the joined terms queryTerms adds for a word of several parts, which the
 * 'simple' parser reads as the phrase of its parts), or null when the question names none. Far
 * fewer chunks match it than the pairs query, and they are the ones a question naming a symbol asks
 * about, so they are ranked before chunks that merely share two of the question's words.
 */
export function toIdentifiersTsQuery(terms: readonly string[]): string | null {
  const identifiers = [...new Set(terms.filter((term) => term.includes('_')).map(termGroup))];
  return identifiers.length ? identifiers.join(' | ') : null;
}

/**
 * A tsquery matching chunks that hold at least two of the terms (any two of the first `maxTerms`),
 * or null for fewer than two. Far fewer chunks match it than the any-term query, so ranking them
 * stays cheap however common one of the words is.
 *
 * Written as "the first and any later one, or the second and any later one, ...":
 * `(a & (b | c | d)) | (b & (c | d)) | (c & d)`. It matches exactly the chunks the list of every
 * pair, `(a & b) | (a & c) | ...`, matches, with fewer nodes (for eight terms 35 terms and 14
 * operators instead of 56 and 55) for the GIN index scan to evaluate for every candidate chunk.
 */
export function toPairsTsQuery(terms: readonly string[], maxTerms = 8): string | null {
  const groups = [...new Set(terms.map(termGroup))].slice(0, maxTerms);
  if (groups.length < 2) return null;
  const parts: string[] = [];
  for (let first = 0; first < groups.length - 1; first += 1) {
    const later = groups.slice(first + 1);
    parts.push(`(${groups[first]} & ${later.length === 1 ? later[0] : `(${later.join(' | ')})`})`);
  }
  return parts.join(' | ');
}

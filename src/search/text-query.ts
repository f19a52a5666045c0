import { badInput } from '../errors';
import { identifierTerms, stemWord, STOP_WORDS } from '../llm/embedders/terms';

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

import { identifierTerms } from '../llm/embedders/lexical.embedder';

const STOP_WORDS = new Set([
  'the', 'is', 'are', 'was', 'of', 'to', 'in', 'and', 'or', 'it', 'its', 'this', 'that', 'what', 'how', 'does', 'do', 'an', 'be', 'on', 'for', 'with',
  'where', 'which', 'when', 'why', 'who', 'can', 'could', 'should', 'would', 'we', 'you', 'me', 'my', 'our', 'there', 'here', 'from', 'by', 'as', 'at',
  'if', 'into', 'about', 'any', 'all', 'some', 'get', 'gets', 'got', 'happen', 'happens', 'code', 'file', 'files', 'handled', 'handle', 'handles', 'work', 'works', 'used', 'use', 'uses',
]);

/**
 * The words of a question for full-text search: identifiers split as the index splits them
 * (`parseConnection` matches "parse connection"), stop words out, each at most once.
 */
export function queryTerms(question: string, limit = 32): string[] {
  const terms: string[] = [];
  for (const term of identifierTerms(question)) {
    if (STOP_WORDS.has(term) || !/^[a-z0-9_]+$/.test(term) || terms.includes(term)) continue;
    terms.push(term);
    if (terms.length === limit) break;
  }
  return terms;
}

/** A tsquery matching any of the terms, with simple prefix matching for the longer words (`connect` finds `connection`). */
export function toTsQuery(terms: readonly string[]): string {
  return terms.map((term) => (term.length >= 5 && !term.includes('_') ? `${term}:*` : term)).join(' | ');
}

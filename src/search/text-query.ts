import { identifierTerms } from '../llm/embedders/lexical.embedder';

// Words that say nothing about which code answers a question: function words, question fillers,
// and the few keywords that occur in nearly every chunk of code (`new`, `function`, `return`).
const STOP_WORDS = new Set([
  'the', 'is', 'are', 'was', 'were', 'be', 'been', 'being', 'am', 'of', 'to', 'in', 'and', 'or', 'it', 'its', 'this', 'that', 'these', 'those',
  'what', 'how', 'does', 'do', 'did', 'done', 'an', 'on', 'for', 'with', 'where', 'which', 'when', 'why', 'who', 'whom', 'whose', 'whether',
  'can', 'could', 'should', 'would', 'will', 'shall', 'may', 'might', 'must', 'need', 'needs', 'has', 'have', 'had', 'having',
  'we', 'you', 'your', 'me', 'my', 'our', 'us', 'they', 'them', 'their', 'he', 'she', 'his', 'her', 'there', 'here', 'from', 'by', 'as', 'at',
  'if', 'into', 'onto', 'about', 'any', 'all', 'some', 'each', 'every', 'both', 'either', 'other', 'another', 'such', 'same', 'own', 'one', 'ones',
  'more', 'most', 'many', 'much', 'few', 'than', 'then', 'too', 'very', 'just', 'only', 'also', 'so', 'but', 'not', 'no', 'nor', 'yet',
  'again', 'already', 'always', 'ever', 'never', 'still', 'once', 'before', 'after', 'while', 'until', 'since', 'because', 'between', 'against',
  'through', 'during', 'over', 'under', 'out', 'up', 'down', 'off', 'away', 'instead', 'via', 'per', 'within', 'without', 'like', 'exactly',
  'get', 'gets', 'got', 'make', 'makes', 'made', 'sure', 'way', 'ways', 'kind', 'thing', 'things', 'something', 'happen', 'happens',
  'code', 'file', 'files', 'handled', 'handle', 'handles', 'work', 'works', 'used', 'use', 'uses',
  'new', 'function', 'return', 'var', 'let', 'const', 'null', 'undefined', 'true', 'false',
]);

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
 * A word without its English inflection (packets, queued, committed, buffering, queries: packet,
 * queu, commit, buffer, quer), for prefix matching that finds every form of it. Short words,
 * numbers and joined identifiers stay as they are.
 */
export function stemWord(word: string): string {
  if (word.length < 5 || !/^[a-z]+$/.test(word)) return word;
  let stem = word;
  if (/(ies|ied)$/.test(word)) stem = word.slice(0, -3);
  else if (/(ss|us|is)$/.test(word)) return word;
  else if (/(ches|shes|sses|xes)$/.test(word)) stem = word.slice(0, -2);
  else if (/s$/.test(word)) stem = word.slice(0, -1);
  else if (/(ed|ing)$/.test(word)) {
    stem = word.replace(/(ed|ing)$/, '');
    // committed, stopped: commit, stop (but rolled, passed keep their double letter).
    if (/([^aeiouls])\1$/.test(stem)) stem = stem.slice(0, -1);
  }
  // "string" is no inflection of "str": what is left must still be a word.
  return stem.length >= 3 && /[aeiouy]/.test(stem) ? stem : word;
}

/**
 * A tsquery matching any of the terms in any of its forms: a longer word by the prefix of its stem
 * (`packets` finds packet and packet_writer, `queued` finds queue), a short one as it is or with an s
 * (`node`, `nodes`), a joined identifier exactly.
 */
export function toTsQuery(terms: readonly string[]): string {
  const alternatives = new Set<string>();
  for (const term of terms) {
    const stem = stemWord(term);
    if (term.includes('_') || /^\d+$/.test(term)) alternatives.add(term);
    else if (stem.length >= 4 && (stem !== term || term.length >= 5)) alternatives.add(`${stem}:*`);
    else for (const form of stem !== term ? [term, stem] : term.endsWith('s') ? [term] : [term, `${term}s`]) alternatives.add(form);
  }
  return [...alternatives].join(' | ');
}

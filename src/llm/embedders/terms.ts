/** The words of code and of questions about it, as both the full-text index and the lexical embedder see them. */

/**
 * Identifier pieces: `parseConnection`, `parse_connection` and `parse-connection` all give parse + connection.
 * `cache` keeps each word's terms for the next texts of the same job (code repeats its words); it
 * holds pieces of the texts, so it should live no longer than they do.
 */
export function identifierTerms(text: string, cache?: Map<string, readonly string[]>): string[] {
  const terms: string[] = [];
  for (const word of text.match(/[A-Za-z_$][A-Za-z0-9_$]*|\d+/g) ?? []) {
    let wordTerms = cache?.get(word);
    if (wordTerms === undefined) {
      wordTerms = termsOfWord(word);
      cache?.set(word, wordTerms);
    }
    for (const term of wordTerms) terms.push(term);
  }
  return terms;
}

function termsOfWord(word: string): readonly string[] {
  const parts = word
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    // Before the last capital of a run that starts a word (HTTPServer → HTTP Server). A lookahead:
    // `([A-Z]+)([A-Z][a-z])` tried every start in a long run of capitals and rescanned it, quadratic
    // (a question of 50,000 capitals held the chat worker for 3.2 s).
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .split(/[\s_$]+/)
    .map((part) => part.toLowerCase())
    .filter((part) => part.length > 1);
  // The whole identifier too, so an exact symbol name weighs more than its pieces.
  return parts.length > 1 ? [...parts, parts.join('_')] : parts;
}

// Words that say nothing about which code answers a question: function words, question fillers,
// and the few keywords that occur in nearly every chunk of code (`new`, `function`, `return`).
export const STOP_WORDS = new Set([
  'the',
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'being',
  'am',
  'of',
  'to',
  'in',
  'and',
  'or',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'what',
  'how',
  'does',
  'do',
  'did',
  'done',
  'an',
  'on',
  'for',
  'with',
  'where',
  'which',
  'when',
  'why',
  'who',
  'whom',
  'whose',
  'whether',
  'can',
  'could',
  'should',
  'would',
  'will',
  'shall',
  'may',
  'might',
  'must',
  'need',
  'needs',
  'has',
  'have',
  'had',
  'having',
  'we',
  'you',
  'your',
  'me',
  'my',
  'our',
  'us',
  'they',
  'them',
  'their',
  'he',
  'she',
  'his',
  'her',
  'there',
  'here',
  'from',
  'by',
  'as',
  'at',
  'if',
  'into',
  'onto',
  'about',
  'any',
  'all',
  'some',
  'each',
  'every',
  'both',
  'either',
  'other',
  'another',
  'such',
  'same',
  'own',
  'one',
  'ones',
  'more',
  'most',
  'many',
  'much',
  'few',
  'than',
  'then',
  'too',
  'very',
  'just',
  'only',
  'also',
  'so',
  'but',
  'not',
  'no',
  'nor',
  'yet',
  'again',
  'already',
  'always',
  'ever',
  'never',
  'still',
  'once',
  'before',
  'after',
  'while',
  'until',
  'since',
  'because',
  'between',
  'against',
  'through',
  'during',
  'over',
  'under',
  'out',
  'up',
  'down',
  'off',
  'away',
  'instead',
  'via',
  'per',
  'within',
  'without',
  'like',
  'exactly',
  'get',
  'gets',
  'got',
  'make',
  'makes',
  'made',
  'sure',
  'way',
  'ways',
  'kind',
  'thing',
  'things',
  'something',
  'happen',
  'happens',
  'code',
  'file',
  'files',
  'handled',
  'handle',
  'handles',
  'work',
  'works',
  'used',
  'use',
  'uses',
  'new',
  'function',
  'return',
  'var',
  'let',
  'const',
  'null',
  'undefined',
  'true',
  'false',
]);

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

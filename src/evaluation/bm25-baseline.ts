import { identifierTerms, stemWord, STOP_WORDS } from '../llm/embedders/terms';

/**
 * A plain keyword baseline for the retrieval evaluation: Okapi BM25 over whole files (path and
 * content as one bag of words), identifier-split and stemmed the way full-text search splits them,
 * stop words out. It answers "is code search ahead of keyword search?" on every question set. Pure
 * and in memory: the CLI hands it the indexed files' text.
 */

const K1 = 1.2;
const B = 0.75;

function termsOf(text: string): string[] {
  const terms: string[] = [];
  for (const term of identifierTerms(text)) {
    if (STOP_WORDS.has(term)) continue;
    const stem = stemWord(term);
    if (STOP_WORDS.has(stem)) continue;
    terms.push(stem);
  }
  return terms;
}

export type Bm25Index = { rank(question: string, limit: number): string[] };

/** Builds the index over `files` (path → text); `rank` answers the best `limit` paths for a question. */
export function buildBm25Index(files: ReadonlyArray<{ path: string; text: string }>): Bm25Index {
  const documents = files.map((file) => {
    const counts = new Map<string, number>();
    const terms = termsOf(`${file.path}\n${file.text}`);
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    return { path: file.path, counts, length: terms.length };
  });
  const documentFrequency = new Map<string, number>();
  for (const document of documents)
    for (const term of document.counts.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const averageLength = documents.reduce((sum, document) => sum + document.length, 0) / Math.max(1, documents.length);
  const idf = (term: string) => {
    const df = documentFrequency.get(term) ?? 0;
    return Math.log(1 + (documents.length - df + 0.5) / (df + 0.5));
  };
  return {
    rank(question, limit) {
      const terms = [...new Set(termsOf(question))];
      const scored = documents.map((document) => {
        let score = 0;
        for (const term of terms) {
          const tf = document.counts.get(term) ?? 0;
          if (!tf) continue;
          score += (idf(term) * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * document.length) / Math.max(1, averageLength)));
        }
        return { path: document.path, score };
      });
      return scored
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path))
        .slice(0, limit)
        .map((entry) => entry.path);
    },
  };
}

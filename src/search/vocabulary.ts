import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../paths';
import { stemWord } from '../llm/embedders/terms';

/**
 * The vocabulary a question is expanded with, besides its own words: the hand-written synonym table
 * (synonyms.ts) and the word → identifier-part associations learned from doc comments of many code
 * bases (data/search/vocabulary.json, written by `npm run vocabulary:learn`). Which of the two apply
 * is a process-wide choice that evaluations switch (`eval:retrieval --vocabulary`); the service runs
 * with DEFAULT_VOCABULARY.
 */
export type QueryVocabulary = {
  /** The synonym table (synonyms.ts). */
  handWritten: boolean;
  /** The learned associations, in the keyword query only. */
  learned: boolean;
};

export const QUERY_VOCABULARIES = ['hand', 'learned', 'hand+learned', 'none'] as const;
export type QueryVocabularyName = (typeof QUERY_VOCABULARIES)[number];

export function vocabularyNamed(name: QueryVocabularyName): QueryVocabulary {
  return { handWritten: name === 'hand' || name === 'hand+learned', learned: name === 'learned' || name === 'hand+learned' };
}

export const DEFAULT_VOCABULARY: QueryVocabularyName = 'hand';

let current = vocabularyNamed(DEFAULT_VOCABULARY);

/** Switches the vocabulary of every later query of this process. */
export function useQueryVocabulary(name: QueryVocabularyName): void {
  current = vocabularyNamed(name);
}

export function queryVocabulary(): Readonly<QueryVocabulary> {
  return current;
}

export const VOCABULARY_FILE = path.join(PROJECT_ROOT, 'data', 'search', 'vocabulary.json');

type LearnedPart = { part: string; npmi: number };
let learned: Map<string, LearnedPart[]> | undefined;

function learnedTable(): Map<string, LearnedPart[]> {
  if (!learned) {
    const raw = JSON.parse(readFileSync(VOCABULARY_FILE, 'utf8')) as Record<string, Array<[string, number]>>;
    learned = new Map(Object.entries(raw).map(([word, parts]) => [word, parts.map(([part, npmi]) => ({ part, npmi }))]));
  }
  return learned;
}

/**
 * The identifier parts code uses for `term` (a question word) by the learned associations, with
 * their strength (NPMI, 0–1), strongest first; none when the learned vocabulary is off.
 */
export function learnedPartsOf(term: string): readonly LearnedPart[] {
  if (!current.learned) return [];
  return learnedTable().get(stemWord(term)) ?? [];
}

import { createHash } from 'node:crypto';
import { identifierTerms, stemWord, STOP_WORDS } from '../../llm/embedders/terms';
import { queryTerms } from '../text-query';

/**
 * Learns which identifier parts code uses for a word a question uses, from the training corpus's
 * mined doc comments (build-corpus.ts): each comment's question words against the identifier parts
 * of the declaration it documents. A pair is kept when it is much more frequent than chance
 * (normalized pointwise mutual information, NPMI), seen often enough, in enough packages to be
 * programming vocabulary rather than one code base's, and neither word is a form of the other
 * (a word already matches its own forms). Each word keeps its few strongest parts.
 */

export type VocabularyOptions = {
  /** Comments read per package at most (a fixed pseudo-random sample): big packages do not dominate. Default 1,500. */
  perPackage?: number;
  /** Identifier parts read per documented declaration, in the order they occur (its name and parameters first). Default 30. */
  identifiersPerComment?: number;
  /** Comments a pair must occur in. Default 8. */
  minCount?: number;
  /** Packages a pair must occur in. Default 4. */
  minPackages?: number;
  /** Lowest NPMI kept. Default 0.3. */
  minNpmi?: number;
  /** Parts kept per word. Default 3. */
  perWord?: number;
  /** A part in more than this share of comments says nothing (`self`, `value`). Default 0.03. */
  maxPartShare?: number;
  /**
   * Count a pair only in comments whose declaration does not use the word itself: what code says
   * instead of the word (callback → cb), rather than what merely goes with it. Default false.
   */
  insteadOnly?: boolean;
};

export type MinedCommentRecord = { question: string; identifiers: string[] };

/** A word's learned parts, strongest first: the part as code spells it and its NPMI. */
export type Vocabulary = Record<string, Array<{ part: string; npmi: number }>>;

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** A question's words as keys: stems of the words search would look for. */
export function questionKeys(question: string): Set<string> {
  return new Set(
    queryTerms(question, 64)
      .filter((term) => !term.includes('_') && /^[a-z]{3,}$/.test(term))
      .map(stemWord),
  );
}

/** The parts of identifiers as the index splits them, without joined ones, numbers and stop words. */
function identifierParts(identifiers: readonly string[], limit: number): Map<string, string> {
  const parts = new Map<string, string>();
  for (const term of identifierTerms(identifiers.join(' '))) {
    if (term.includes('_') || !/^[a-z]{2,}$/.test(term) || STOP_WORDS.has(term)) continue;
    const key = stemWord(term);
    if (!parts.has(key)) parts.set(key, term);
    if (parts.size === limit) break;
  }
  return parts;
}

/** One word is a form of the other: same stem, or one stem starts the other (connect, connection). */
function sameWord(left: string, right: string): boolean {
  if (left === right) return true;
  const [short, long] = left.length <= right.length ? [left, right] : [right, left];
  return short.length >= 3 && long.startsWith(short);
}

/** Learns the vocabulary from each package's mined comments. */
export function learnVocabulary(packages: ReadonlyMap<string, readonly MinedCommentRecord[]>, options: VocabularyOptions = {}): Vocabulary {
  const perPackage = options.perPackage ?? 1500;
  const identifiersPerComment = options.identifiersPerComment ?? 30;
  const minCount = options.minCount ?? 8;
  const minPackages = options.minPackages ?? 4;
  const minNpmi = options.minNpmi ?? 0.3;
  const perWord = options.perWord ?? 3;
  const maxPartShare = options.maxPartShare ?? 0.03;
  const insteadOnly = options.insteadOnly ?? false;

  let comments = 0;
  const wordCount = new Map<string, number>();
  const partCount = new Map<string, number>();
  const pairCount = new Map<string, number>();
  const pairPackages = new Map<string, Set<string>>();
  // The spelling of a part that occurs most, per stem.
  const spellings = new Map<string, Map<string, number>>();

  for (const [name, records] of [...packages].sort(([left], [right]) => (left < right ? -1 : 1))) {
    const sample = records
      .map((record, index) => ({ record, key: sha1(`${name}\0${index}`) }))
      .sort((left, right) => (left.key < right.key ? -1 : 1))
      .slice(0, perPackage)
      .map(({ record }) => record);
    for (const record of sample) {
      const words = questionKeys(record.question);
      const parts = identifierParts(record.identifiers, identifiersPerComment);
      if (!words.size || !parts.size) continue;
      comments += 1;
      for (const word of words) wordCount.set(word, (wordCount.get(word) ?? 0) + 1);
      for (const [part, spelling] of parts) {
        partCount.set(part, (partCount.get(part) ?? 0) + 1);
        const spelled = spellings.get(part) ?? new Map<string, number>();
        spelled.set(spelling, (spelled.get(spelling) ?? 0) + 1);
        spellings.set(part, spelled);
      }
      for (const word of words) {
        if (insteadOnly && [...parts.keys()].some((part) => sameWord(word, part))) continue;
        for (const part of parts.keys()) {
          if (sameWord(word, part)) continue;
          const key = `${word} ${part}`;
          pairCount.set(key, (pairCount.get(key) ?? 0) + 1);
          const seen = pairPackages.get(key) ?? new Set<string>();
          seen.add(name);
          pairPackages.set(key, seen);
        }
      }
    }
  }

  const byWord = new Map<string, Array<{ part: string; npmi: number }>>();
  for (const [key, count] of pairCount) {
    if (count < minCount || pairPackages.get(key)!.size < minPackages) continue;
    const [word, part] = key.split(' ');
    if (partCount.get(part)! / comments > maxPartShare) continue;
    const joint = count / comments;
    const pmi = Math.log(joint / ((wordCount.get(word)! / comments) * (partCount.get(part)! / comments)));
    const npmi = pmi / -Math.log(joint);
    if (npmi < minNpmi) continue;
    const spelled = [...spellings.get(part)!].sort((left, right) => right[1] - left[1] || (left[0] < right[0] ? -1 : 1))[0][0];
    byWord.set(word, [...(byWord.get(word) ?? []), { part: spelled, npmi: Math.round(npmi * 1000) / 1000 }]);
  }
  const vocabulary: Vocabulary = {};
  for (const word of [...byWord.keys()].sort()) {
    vocabulary[word] = byWord
      .get(word)!
      .sort((left, right) => right.npmi - left.npmi || (left.part < right.part ? -1 : 1))
      .slice(0, perWord);
  }
  return vocabulary;
}

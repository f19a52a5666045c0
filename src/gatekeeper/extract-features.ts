import { findCodeRegions, type CodeRegion } from './find-code-regions';
import { fnv1a, seedFor } from './hash';
import { tokenizeProse, type ProseToken } from './tokenize-prose';

/**
 * Bumped whenever extraction changes, so a model trained on other features refuses to load
 * instead of scoring garbage.
 */
export const FEATURE_VERSION = 1;
/** Hashed feature space: 2^18 keeps collisions rare for a vocabulary of a few tens of thousands. */
export const FEATURE_BUCKETS = 1 << 18;

/** Feature buckets with their values; indices are unique. */
export type SparseVector = { indices: Int32Array; values: Float64Array };

// Each group is L2-normalised on its own, then scaled: the developer's words count most, the code
// they pasted least, so a 200-line paste cannot outvote the one sentence that says what to do.
const GROUP_WEIGHTS = { word: 1, char: 1.2, flag: 0.5, code: 0.25 } as const;
// Bounds keep the cost of a pasted file flat; the request is almost always in the first words.
const MAX_PROSE_TOKENS = 200;
const MAX_CODE_TOKENS = 200;
/** Characters of a prompt that are looked at; the rest of a huge paste changes nothing. */
export const MAX_ANALYSED_CHARS = 20_000;

const SEEDS = {
  word: seedFor('word'),
  char: seedFor('char'),
  flag: seedFor('flag'),
  code: seedFor('code'),
};
const BUCKET_MASK = FEATURE_BUCKETS - 1;
const CODE_WORD = /[A-Za-z_$][\w$]+/g;

class Group {
  readonly buckets = new Set<number>();
  add(hash: number): void {
    this.buckets.add(hash & BUCKET_MASK);
  }
}

function wordFeatures(tokens: ProseToken[]): Group {
  const group = new Group();
  let previous = '<s>';
  for (const token of tokens) {
    group.add(fnv1a(token.text, SEEDS.word));
    group.add(fnv1a(`${previous} ${token.text}`, SEEDS.word));
    previous = token.text;
  }
  group.add(fnv1a(`${previous} </s>`, SEEDS.word));
  return group;
}

// Character 3- to 5-grams of each word wrapped in < >, hashed incrementally: "expln" still shares
// "<exp" and "xpl" with "explain", and the brackets keep prefixes apart from inner grams.
function charFeatures(tokens: ProseToken[]): Group {
  const group = new Group();
  for (const token of tokens) {
    if (!token.isWord) continue;
    const word = `<${token.text}>`;
    for (let start = 0; start + 3 <= word.length; start++) {
      let hash = SEEDS.char;
      for (let end = start; end < word.length && end < start + 5; end++) {
        hash ^= word.charCodeAt(end);
        hash = Math.imul(hash, 0x01000193);
        if (end - start >= 2) group.add(hash >>> 0);
      }
    }
  }
  return group;
}

function lengthBucket(words: number): string {
  if (words <= 2) return String(words);
  if (words <= 4) return '3-4';
  if (words <= 8) return '5-8';
  if (words <= 16) return '9-16';
  return '17+';
}

/** The parts of a prompt the model sees: the developer's prose and any pasted code or traces. */
export type PromptParts = { prose: string; code: string; hasCode: boolean; hasTrace: boolean; hasFence: boolean };

/** `regions` may be passed when the caller already found them (offsets into `text`). */
export function splitProseAndCode(text: string, knownRegions?: readonly CodeRegion[]): PromptParts {
  const analysed = text.length > MAX_ANALYSED_CHARS ? text.slice(0, MAX_ANALYSED_CHARS) : text;
  const regions = knownRegions === undefined ? findCodeRegions(analysed) : knownRegions.filter((region) => region.start < analysed.length);
  let prose = '';
  let code = '';
  let cursor = 0;
  for (const region of regions) {
    prose += `${analysed.slice(cursor, region.start)}\n`;
    code += `${analysed.slice(region.start, region.end)}\n`;
    cursor = Math.min(region.end, analysed.length);
  }
  prose += analysed.slice(cursor);
  return {
    prose,
    code,
    hasCode: regions.length > 0,
    hasTrace: regions.some((region) => region.kind === 'trace'),
    hasFence: regions.some((region) => region.fenced),
  };
}

function flagFeatures(parts: PromptParts, tokens: ProseToken[]): Group {
  const group = new Group();
  const words = tokens.filter((token) => token.isWord).length;
  group.add(fnv1a(`words:${lengthBucket(words)}`, SEEDS.flag));
  if (parts.hasCode) group.add(fnv1a('has-code', SEEDS.flag));
  if (parts.hasTrace) group.add(fnv1a('has-trace', SEEDS.flag));
  if (parts.hasFence) group.add(fnv1a('has-fence', SEEDS.flag));
  if (parts.hasCode && words === 0) group.add(fnv1a('only-code', SEEDS.flag));
  if (parts.hasCode && words <= 4) group.add(fnv1a(`code-with-words:${lengthBucket(words)}`, SEEDS.flag));
  return group;
}

function codeFeatures(code: string): Group {
  const group = new Group();
  let count = 0;
  for (const match of code.matchAll(CODE_WORD)) {
    if (count++ >= MAX_CODE_TOKENS) break;
    group.add(fnv1a(match[0].toLowerCase(), SEEDS.code));
  }
  return group;
}

/**
 * Turns a prompt into hashed features: word uni- and bigrams and character n-grams of the prose,
 * shape flags (length, pasted code, stack trace), and down-weighted words from the code.
 * `regions` saves finding the code again when the caller already has (offsets into `text`).
 */
export function extractFeatures(text: string, regions?: readonly CodeRegion[]): SparseVector {
  const parts = splitProseAndCode(text, regions);
  const tokens = tokenizeProse(parts.prose, MAX_PROSE_TOKENS);
  const values = new Map<number, number>();
  const addGroup = (group: Group, weight: number) => {
    if (group.buckets.size === 0) return;
    const value = weight / Math.sqrt(group.buckets.size);
    for (const bucket of group.buckets) values.set(bucket, (values.get(bucket) ?? 0) + value);
  };
  addGroup(wordFeatures(tokens), GROUP_WEIGHTS.word);
  addGroup(charFeatures(tokens), GROUP_WEIGHTS.char);
  addGroup(flagFeatures(parts, tokens), GROUP_WEIGHTS.flag);
  addGroup(codeFeatures(parts.code), GROUP_WEIGHTS.code);
  const indices = new Int32Array(values.size);
  const featureValues = new Float64Array(values.size);
  let position = 0;
  for (const [bucket, value] of values) {
    indices[position] = bucket;
    featureValues[position++] = value;
  }
  return { indices, values: featureValues };
}

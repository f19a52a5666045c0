import { FEATURE_NAMES, fileFeatures, parseRankerModel, orderByModel, sizeOf } from '../../src/search/file-features';
import type { FileSignals, RankedFile } from '../../src/search/file-ranking';
import { byHand, byModel, rankingQuality, trainRanker } from '../../src/search/training/train-ranker';
import type { RankerExample } from '../../src/search/training/ranker-features';

const signals = (extra: Partial<FileSignals> = {}): FileSignals => ({
  hand: 1,
  evidence: 1,
  lent: 0,
  lexical: 0,
  vectorRank: null,
  textRank: null,
  name: 0,
  directory: 0,
  symbol: 0,
  roleWeight: 1,
  chunks: 1,
  depth: 1,
  coverage: 0,
  ...extra,
});
const file = (path: string, extra: Partial<FileSignals> = {}): RankedFile => ({
  path,
  role: 'implementation',
  score: extra.hand ?? 1,
  signals: signals(extra),
});
const feature = (vector: number[], name: (typeof FEATURE_NAMES)[number]) => vector[FEATURE_NAMES.indexOf(name)];
const onlyWeight = (name: (typeof FEATURE_NAMES)[number]) => ({
  features: FEATURE_NAMES,
  weights: FEATURE_NAMES.map((feature) => (feature === name ? 1 : 0)),
});

describe('fileFeatures', () => {
  it('scales scores by the question’s best candidate and turns ranks into reciprocals', () => {
    const [first, second] = fileFeatures(
      [file('a.ts', { hand: 2, lexical: 8, vectorRank: 1, textRank: 4 }), file('b.ts', { hand: 1, lexical: 2, vectorRank: 2 })],
      { snapshotFiles: 100 },
    );
    expect(first).toHaveLength(FEATURE_NAMES.length);
    expect(feature(first, 'hand')).toBe(1);
    expect(feature(second, 'hand')).toBe(0.5);
    expect(feature(second, 'hand_rr')).toBe(0.5);
    expect(feature(first, 'text_rr')).toBe(0.25);
    expect(feature(second, 'text_rr')).toBe(0);
    expect(feature(second, 'lexical')).toBe(0.25);
    expect(feature(second, 'lexical_rr')).toBe(0.5);
    expect(feature(second, 'vector_rr_large')).toBeCloseTo(0.5 * sizeOf(100));
    expect(feature(second, 'vector_only')).toBe(0);
    expect(feature(fileFeatures([file('c.ts', { vectorRank: 3 })], { snapshotFiles: 10 })[0], 'vector_only')).toBe(1);
  });

  it('puts a code base’s size on a 0–1 scale', () => {
    expect(sizeOf(1)).toBe(0);
    expect(sizeOf(10_000)).toBe(1);
    expect(sizeOf(100)).toBe(0.5);
  });
});

describe('orderByModel', () => {
  it('orders candidates by the model and keeps the hand order without one', () => {
    const files = [file('a.ts', { hand: 2 }), file('b.ts', { hand: 1, name: 1 })];
    expect(orderByModel(files, { snapshotFiles: 10, model: null }).map((ranked) => ranked.path)).toEqual(['a.ts', 'b.ts']);
    const reranked = orderByModel(files, { snapshotFiles: 10, model: onlyWeight('name') });
    expect(reranked.map((ranked) => ranked.path)).toEqual(['b.ts', 'a.ts']);
    expect(reranked.every((ranked) => ranked.score > 0)).toBe(true);
  });
});

describe('parseRankerModel', () => {
  it('takes a model of the same features with a finite weight each', () => {
    expect(parseRankerModel(JSON.stringify(onlyWeight('hand'))).weights).toHaveLength(FEATURE_NAMES.length);
  });

  it.each([
    ['other features', { features: ['x'], weights: [1] }],
    ['a missing weight', { features: FEATURE_NAMES, weights: [1] }],
    ['a weight that is not a number', { features: FEATURE_NAMES, weights: FEATURE_NAMES.map(() => 'x') }],
  ])('refuses %s', (_label, model) => {
    expect(() => parseRankerModel(JSON.stringify(model))).toThrow(/file ranker model/);
  });
});

describe('trainRanker', () => {
  // The hand score ranks a wrong file first; the answer is always the file whose name holds the question's words.
  const examples: RankerExample[] = Array.from({ length: 30 }, (_, index) => {
    const candidates = [file('wrong.ts', { hand: 2 }), file(`right-${index}.ts`, { hand: 1, name: 1 }), file('other.ts', { hand: 1.5 })];
    const features = fileFeatures(candidates, { snapshotFiles: 50 });
    return {
      source: `package-${index % 3}`,
      question: `question ${index}`,
      snapshotFiles: 50,
      candidates: candidates.map((candidate, position) => ({
        path: candidate.path,
        relevant: candidate.path.startsWith('right'),
        features: features[position],
      })),
    };
  });

  it('learns what the hand-weighted score misses, and is measured by the first right file', () => {
    expect(rankingQuality(examples, byHand)).toMatchObject({ recallAt1: 0, candidateRecall: 1 });
    expect(rankingQuality(examples, byHand).mrr).toBeCloseTo(1 / 3);
    const model = trainRanker(examples, { steps: 200 });
    expect(rankingQuality(examples, byModel(model))).toMatchObject({ recallAt1: 1, recallAt5: 1, mrr: 1 });
    expect(model.weights[FEATURE_NAMES.indexOf('name')]).toBeGreaterThan(0);
  });

  it('stays the hand formula when nothing teaches otherwise', () => {
    const model = trainRanker([], { steps: 50 });
    expect(model.weights).toEqual(FEATURE_NAMES.map((name) => (name === 'hand' ? 1 : 0)));
  });
});

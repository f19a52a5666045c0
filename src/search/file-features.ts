import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../paths';
import type { FileSignals, RankedFile } from './file-ranking';

/**
 * The learned file ranking: each candidate file of a question described by a few features made
 * from its signals (file-ranking.ts), scored by a linear model trained on weakly labelled questions
 * mined from many code bases (src/search/training/, docs/retrieval-eval.md). The model is a data
 * file, like the gatekeeper's; without it the hand-weighted score stands.
 */

/** Where the trained model lives; committed, written by `npm run train:ranker`. */
export const RANKER_MODEL_FILE = path.join(PROJECT_ROOT, 'data', 'file-ranker', 'model.json');

/** The features of a candidate, in the model's order. Each is relative to the question's other candidates. */
export const FEATURE_NAMES = [
  'hand',
  'hand_rr',
  'evidence',
  'vector_rr',
  'text_rr',
  'lexical',
  'lexical_rr',
  'name',
  'directory',
  'symbol',
  'role',
  'lent',
  'chunks',
  'depth',
  'vector_rr_large',
  'text_rr_large',
  'lexical_large',
  'lexical_rr_large',
  'vector_only',
  'coverage',
  'coverage_large',
  'full_coverage',
] as const;

export type FileFeatureContext = {
  /** Files in the snapshot: how large the code base is. */
  snapshotFiles: number;
};

const reciprocal = (rank: number | null | undefined) => (rank ? 1 / rank : 0);

/** How large a code base is on a 0–1 scale: log10 of its files over 4 (10,000 files → 1). */
export function sizeOf(files: number): number {
  return Math.min(1.25, Math.log10(Math.max(1, files)) / 4);
}

/** The feature vectors of a question's ranked candidates (FEATURE_NAMES order), one per file. */
export function fileFeatures(files: readonly RankedFile[], context: FileFeatureContext): number[][] {
  const max = (pick: (signals: FileSignals) => number) => Math.max(1e-9, ...files.map((file) => pick(file.signals)));
  const maxHand = max((signals) => signals.hand);
  const maxEvidence = max((signals) => signals.evidence);
  const maxLexical = max((signals) => signals.lexical);
  const handRanks = new Map([...files].sort((a, b) => b.signals.hand - a.signals.hand).map((file, index) => [file.path, index + 1]));
  const lexicalRanks = new Map(
    files
      .filter((file) => file.signals.lexical > 0)
      .sort((a, b) => b.signals.lexical - a.signals.lexical)
      .map((file, index) => [file.path, index + 1]),
  );
  const large = sizeOf(context.snapshotFiles);
  return files.map((file) => {
    const signals = file.signals;
    const vectorRr = reciprocal(signals.vectorRank);
    const textRr = reciprocal(signals.textRank);
    const lexical = signals.lexical / maxLexical;
    const lexicalRr = reciprocal(lexicalRanks.get(file.path));
    return [
      signals.hand / maxHand,
      reciprocal(handRanks.get(file.path)),
      signals.evidence / maxEvidence,
      vectorRr,
      textRr,
      lexical,
      lexicalRr,
      signals.name,
      signals.directory,
      signals.symbol,
      Math.log(signals.roleWeight),
      signals.lent / maxEvidence,
      Math.min(signals.chunks, 5) / 5,
      Math.min(signals.depth, 10) / 10,
      vectorRr * large,
      textRr * large,
      lexical * large,
      lexicalRr * large,
      vectorRr > 0 && textRr === 0 && lexical === 0 ? 1 : 0,
      signals.coverage,
      signals.coverage * large,
      signals.coverage > 0.999 ? 1 : 0,
    ];
  });
}

/**
 * A regression tree as parallel arrays of nodes, the root first: an inner node sends a vector to
 * `left` when its `feature` is at most `threshold`, else to `right`; a leaf (feature -1) adds `value`.
 */
export type RankerTree = { feature: number[]; threshold: number[]; left: number[]; right: number[]; value: number[] };

/**
 * A ranking model: a linear part (weights · features; a bias would not change any order) plus,
 * optionally, boosted trees that correct it where a straight line cannot.
 */
export type RankerModel = { features: readonly string[]; weights: readonly number[]; trees?: readonly RankerTree[] };

const finite = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

function checkTree(tree: RankerTree): void {
  const nodes = tree.feature?.length ?? 0;
  const arrays = [tree.threshold, tree.left, tree.right, tree.value];
  if (!nodes || arrays.some((array) => !Array.isArray(array) || array.length !== nodes || !array.every(finite)))
    throw new Error('the file ranker model has a tree whose node arrays differ in length or hold something other than numbers');
  tree.feature.forEach((feature, node) => {
    if (feature === -1) return;
    const children = [tree.left[node], tree.right[node]];
    if (
      !Number.isInteger(feature) ||
      feature < 0 ||
      feature >= FEATURE_NAMES.length ||
      children.some((child) => child <= node || child >= nodes)
    )
      throw new Error('the file ranker model has a tree node with an unknown feature or a child that is not after it');
  });
}

/** Checks a model read from JSON: the same features in the same order, a finite weight for each, well-formed trees. */
export function parseRankerModel(json: string): RankerModel {
  const model = JSON.parse(json) as Partial<RankerModel>;
  const features = model.features ?? [];
  const weights = model.weights ?? [];
  if (features.length !== FEATURE_NAMES.length || features.some((name, index) => name !== FEATURE_NAMES[index]))
    throw new Error(`the file ranker model's features are not ${FEATURE_NAMES.join(', ')}`);
  if (weights.length !== features.length || !weights.every(finite))
    throw new Error('the file ranker model needs one finite weight per feature');
  for (const tree of model.trees ?? []) checkTree(tree);
  return { features, weights, trees: model.trees };
}

let shipped: RankerModel | null | undefined;

/** The shipped model (read once), or null when there is none. */
export function shippedRankerModel(): RankerModel | null {
  if (shipped === undefined) shipped = existsSync(RANKER_MODEL_FILE) ? parseRankerModel(readFileSync(RANKER_MODEL_FILE, 'utf8')) : null;
  return shipped;
}

/** The value a tree adds for a feature vector. */
export function treeValue(tree: RankerTree, features: readonly number[]): number {
  let node = 0;
  while (tree.feature[node] !== -1) node = features[tree.feature[node]] <= tree.threshold[node] ? tree.left[node] : tree.right[node];
  return tree.value[node];
}

/** The model's score of one feature vector. */
export function scoreFeatures(model: RankerModel, features: readonly number[]): number {
  let score = 0;
  for (let index = 0; index < features.length; index += 1) score += model.weights[index] * features[index];
  for (const tree of model.trees ?? []) score += treeValue(tree, features);
  return score;
}

/**
 * The candidates ordered by the model (the shipped one by default), best first; each file's score
 * becomes its model score shifted so the lowest is a small positive number (grouping scales by the
 * first). Without a model, the order and scores are file-ranking.ts's.
 */
export function orderByModel(files: readonly RankedFile[], context: FileFeatureContext & { model?: RankerModel | null }): RankedFile[] {
  const model = context.model === undefined ? shippedRankerModel() : context.model;
  if (!model || files.length === 0) return [...files];
  const features = fileFeatures(files, context);
  const scores = features.map((vector) => scoreFeatures(model, vector));
  const floor = Math.min(...scores);
  return files
    .map((file, index) => ({ ...file, score: scores[index] - floor + 1e-6 }))
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
}

import type { Grammar, LineIndex, Point, Tree } from '../parsing';

/** What the user likely wants at the cursor: a short completion, or generated code (and why). */
export type IntentDecision = {
  intent: 'completion' | 'generation';
  /** Why generation was chosen; null for completion. */
  generationType: 'comment' | 'small_file' | 'empty_function' | null;
  /** The comment above the cursor, without its markers, when generationType is `comment`; otherwise null. */
  userInstruction: string | null;
  /** The file's language (`typescript`, `python`, ...), or null when its extension has no grammar. */
  language: string | null;
};

/** A detector's verdict; detectIntent adds the language. */
export type Detection = Omit<IntentDecision, 'language'>;

/** The default verdict: complete the code at the cursor. */
export const COMPLETION: Detection = Object.freeze({ intent: 'completion', generationType: null, userInstruction: null });

/** A generation verdict; only comment generations carry an instruction. */
export const generation = (generationType: NonNullable<Detection['generationType']>, userInstruction: string | null = null): Detection => ({
  intent: 'generation',
  generationType,
  userInstruction,
});

/** Everything a detector may look at. Nodes of `tree` are valid only while the detector runs. */
export type IntentContext = {
  grammar: Grammar;
  /** The whole file: content above the cursor followed by content below it. */
  source: string;
  lines: LineIndex;
  /** The cursor as an index into `source`, and as a row and column. */
  cursor: number;
  point: Point;
  tree: Tree;
  /** False when the tree covers only a window around the cursor (large files); see parse-window.ts. */
  wholeFile: boolean;
};

/** Decides, or returns null to let the next detector try. */
export type Detector = (context: IntentContext) => Detection | null;

import { grammarForFileName, LineIndex, loadGrammar } from '../parsing';
import type { Grammar } from '../parsing';
import { countCodeRowsByMarkers } from './count-code-rows';
import { detectComment } from './detectors/comment.detector';
import { detectEmptyFunction } from './detectors/empty-function.detector';
import { detectSmallFile, SMALL_FILE_CODE_LINES } from './detectors/small-file.detector';
import { COMPLETION, generation } from './intent';
import type { Detection, Detector, IntentContext, IntentDecision } from './intent';
import { parseWindows, windowStartsCleanly } from './parse-window';
import type { ParseWindowOptions } from './parse-window';

export type { IntentDecision } from './intent';

/** The file around the cursor, as IDE clients send it with a code suggestion request. */
export type DetectIntentInput = {
  /** Name or path of the file; its extension picks the grammar. */
  fileName: string;
  contentAboveCursor: string;
  /** Default: empty (the cursor is at the end of the file). */
  contentBelowCursor?: string;
};

/** Tuning for large files; the defaults suit interactive use (see parse-window.ts). */
export type DetectIntentOptions = ParseWindowOptions;

/** The rules in order of precedence; the first that decides wins. */
const DETECTORS: readonly Detector[] = [detectComment, detectSmallFile, detectEmptyFunction];

/**
 * Whether the user wants a completion or generated code at the cursor, following GitLab's intent
 * detection: a comment at or right above the cursor, then a small file, then an empty function;
 * otherwise completion. Loads the file's grammar on first use; after that it runs synchronously.
 */
export async function detectIntent(input: DetectIntentInput, options: DetectIntentOptions = {}): Promise<IntentDecision> {
  const source = input.contentAboveCursor + (input.contentBelowCursor ?? '');
  const grammarName = grammarForFileName(input.fileName);
  if (!grammarName) {
    const small = countCodeRowsByMarkers(source, SMALL_FILE_CODE_LINES) < SMALL_FILE_CODE_LINES;
    return { ...(small ? generation('small_file') : COMPLETION), language: null };
  }
  const grammar = await loadGrammar(grammarName);
  const detection = detectInSource({ grammar, source, cursor: input.contentAboveCursor.length, options });
  return { ...detection, language: grammar.info.language };
}

function detectInSource(request: { grammar: Grammar; source: string; cursor: number; options: DetectIntentOptions }): Detection {
  const { grammar, source, cursor, options } = request;
  const lines = new LineIndex(source);
  const point = lines.pointAt(cursor);
  const run = (tree: IntentContext['tree'], wholeFile: boolean) => {
    const context: IntentContext = { grammar, source, lines, cursor, point, tree, wholeFile };
    for (const detector of DETECTORS) {
      const detection = detector(context);
      if (detection) return detection;
    }
    return COMPLETION;
  };
  for (const window of parseWindows({ ...options, lines, cursorRow: point.row, grammar: grammar.info.name })) {
    const detection = grammar.withTree(source, (tree) => (windowStartsCleanly(tree, lines, window) ? run(tree, false) : null), {
      includedRanges: window.includedRanges,
    });
    if (detection) return detection;
  }
  return grammar.withTree(source, (tree) => run(tree, true));
}

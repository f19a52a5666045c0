import type { DetectIntentInput } from '../../../src/suggestions/detect-intent';

/** The cursor marker in fixtures. */
export const CURSOR = '<|>';

/** A detectIntent input from a fixture with exactly one cursor marker. */
export function atCursor(fileName: string, text: string): DetectIntentInput {
  const parts = text.split(CURSOR);
  if (parts.length !== 2) throw new Error(`fixture needs exactly one ${CURSOR}: ${JSON.stringify(text)}`);
  return { fileName, contentAboveCursor: parts[0], contentBelowCursor: parts[1] };
}

/** Indents every non-empty line of a snippet (the cursor marker travels with its line). */
export const indent = (text: string, spaces: number) => text.replace(/^(?=.)/gm, ' '.repeat(spaces));

import { countCodeRows } from '../count-code-rows';
import { generation } from '../intent';
import type { Detection, IntentContext } from '../intent';

/** A file with fewer code lines (neither blank nor only comment) than this is small. GitLab's MIN_LINES_OF_CODE. */
export const SMALL_FILE_CODE_LINES = 5;

/** Rule 2. Fewer than 5 code lines in the whole file (above and below the cursor): generation of type small_file. */
export function detectSmallFile(context: IntentContext): Detection | null {
  const { grammar, lines, source } = context;
  const limit = SMALL_FILE_CODE_LINES;
  if (countCodeRows({ tree: context.tree, grammar, lines, limit }) >= limit) return null;
  // A window that shows too little code proves nothing about the rest: only the whole file can say it is small.
  const small = context.wholeFile || grammar.withTree(source, (tree) => countCodeRows({ tree, grammar, lines, limit }) < limit);
  return small ? generation('small_file') : null;
}

import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { feedbackTurns } from '../chat/feedback.service';
import { suggestionFeedbackRows } from '../suggestions/sessions/suggestion-feedback';
import { runCommand } from './run-command';

// npm run export:feedback -- --out feedback.jsonl   (default: stdout)
// One JSON line per feedback event: `kind: "chat"` with the turn it rates (prompt, context item ids,
// answer), then `kind: "code_suggestion"` with the suggestion and the document state it was made for.
const { values } = parseArgs({ args: process.argv.slice(2), options: { out: { type: 'string' } }, strict: true });

void runCommand(async ({ database }) => {
  const output: Writable = values.out ? createWriteStream(values.out) : process.stdout;
  let count = 0;
  const write = async (line: unknown) => {
    if (!output.write(`${JSON.stringify(line)}\n`)) await once(output, 'drain');
    count += 1;
  };
  for await (const turn of feedbackTurns(database.prisma)) await write({ kind: 'chat', ...turn });
  for await (const row of suggestionFeedbackRows(database.prisma)) await write({ kind: 'code_suggestion', ...row });
  if (values.out) {
    output.end();
    await once(output, 'finish');
    return { exported: count, out: values.out };
  }
  return undefined;
});

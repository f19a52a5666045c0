import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { feedbackTurns } from '../chat/feedback.service';
import { runCommand } from './run-command';

// npm run export:feedback -- --out feedback.jsonl   (default: stdout)
// One JSON line per feedback event, with the turn it rates: prompt, context item ids, answer.
const { values } = parseArgs({ args: process.argv.slice(2), options: { out: { type: 'string' } }, strict: true });

void runCommand(async ({ database }) => {
  const output: Writable = values.out ? createWriteStream(values.out) : process.stdout;
  let count = 0;
  for await (const turn of feedbackTurns(database.prisma)) {
    if (!output.write(`${JSON.stringify({ kind: 'chat', ...turn })}\n`)) await once(output, 'drain');
    count += 1;
  }
  if (values.out) {
    output.end();
    await once(output, 'finish');
    return { exported: count, out: values.out };
  }
  return undefined;
});

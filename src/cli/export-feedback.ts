import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { feedbackTurns } from '../chat/feedback.service';
import { runCommand } from './run-command';

// npm run export:feedback -- --out feedback.jsonl   (default: stdout)
// One JSON line per feedback event, with the turn it rates: prompt, context item ids, answer.
const { values } = parseArgs({ args: process.argv.slice(2), options: { out: { type: 'string' } }, strict: true });

void runCommand(async ({ database }) => {
  const output = values.out ? createWriteStream(values.out) : process.stdout;
  let count = 0;
  for await (const turn of feedbackTurns(database.prisma)) {
    if (!output.write(`${JSON.stringify({ kind: 'chat', ...turn })}\n`)) await new Promise((resolve) => output.once('drain', resolve));
    count += 1;
  }
  if (values.out) {
    await new Promise<void>((resolve, reject) => (output as ReturnType<typeof createWriteStream>).end((error?: Error | null) => (error ? reject(error) : resolve())));
    return { exported: count, out: values.out };
  }
  return undefined;
});

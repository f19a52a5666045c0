/**
 * Regenerates data/gatekeeper/generated.jsonl from the templates (deterministic):
 *
 *   node -r @swc-node/register src/gatekeeper/cli/generate-data.ts
 *
 * Then retrain with `npm run train:gatekeeper`. The tests fail if the committed file drifts from
 * what the templates produce.
 */
import { writeFileSync } from 'node:fs';
import { generatePrompts } from '../data-generator/generate-prompts';
import { GENERATED_DATA_FILE } from '../../files';

export function renderGeneratedData(): string {
  return generatePrompts()
    .map((prompt) => JSON.stringify(prompt))
    .join('\n')
    .concat('\n');
}

if (require.main === module) {
  const content = renderGeneratedData();
  writeFileSync(GENERATED_DATA_FILE, content);
  process.stdout.write(`wrote ${content.split('\n').length - 1} prompts to ${GENERATED_DATA_FILE}\n`);
}

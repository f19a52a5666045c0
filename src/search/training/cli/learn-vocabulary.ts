/**
 * Learns the search vocabulary (word → identifier parts, learn-vocabulary.ts) from the training
 * split of a corpus built by `npm run corpus:build`, and writes it (commit it):
 *
 *   npm run vocabulary:learn -- --corpus /work/corpus [--out data/search/vocabulary.json]
 *
 * Only the corpus's train packages are read: the validation packages stay unseen for measuring.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { learnVocabulary, type MinedCommentRecord } from '../learn-vocabulary';

type Manifest = { packages: Array<{ name: string; split: 'train' | 'validation'; mined: string }> };

function main(): void {
  const { values } = parseArgs({
    options: { corpus: { type: 'string' }, out: { type: 'string' }, 'instead-only': { type: 'boolean' } },
    strict: true,
  });
  if (!values.corpus) {
    process.stderr.write('error: --corpus <folder> is required (a folder written by npm run corpus:build)\n');
    process.exit(2);
  }
  const manifest = JSON.parse(readFileSync(path.join(values.corpus, 'manifest.json'), 'utf8')) as Manifest;
  const train = manifest.packages.filter((entry) => entry.split === 'train');
  const packages = new Map<string, MinedCommentRecord[]>(
    train.map((entry) => [
      entry.name,
      readFileSync(entry.mined, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as MinedCommentRecord),
    ]),
  );
  const vocabulary = learnVocabulary(packages, { insteadOnly: values['instead-only'] ?? false });
  const out = values.out ?? 'data/search/vocabulary.json';
  const entries = Object.entries(vocabulary);
  // One word a line: the file is read in review and diffs.
  const lines = entries.map(([word, parts]) => `  ${JSON.stringify(word)}: ${JSON.stringify(parts.map(({ part, npmi }) => [part, npmi]))}`);
  writeFileSync(out, `{\n${lines.join(',\n')}\n}\n`);
  const parts = entries.reduce((sum, [, learned]) => sum + learned.length, 0);
  process.stderr.write(`${entries.length} words, ${parts} parts, from ${train.length} train packages → ${out}\n`);
}

main();

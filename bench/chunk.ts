/**
 * Chunker and default embedder speed (prints figures; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/chunk.ts [runs=5]
 *
 * Chunks about 1 MB of each fixture language (the test fixtures repeated), after a warm-up, and
 * embeds the chunks with the lexical embedder; reports the median over the runs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chunkFile } from '../src/indexing/chunk-file';
import { LexicalEmbedder } from '../src/llm/embedders/lexical.embedder';
import { PROJECT_ROOT } from '../src/paths';
import { median } from './lib/figures';

const RUNS = Number(process.argv[2] ?? 5);
const FIXTURES = path.join(PROJECT_ROOT, 'test', 'indexing', 'fixtures');
const FILES: Array<[string, string]> = [
  ['user-service.ts', 'user-service.ts.txt'],
  ['rate_limiter.py', 'rate_limiter.py'],
  ['indexing-guide.md', 'indexing-guide.md'],
];

async function main(): Promise<void> {
  const embedder = new LexicalEmbedder();
  console.log(`chunk + lexical embed, ~1 MB per language, median of ${RUNS} runs, node ${process.version}`);
  for (const [name, file] of FILES) {
    const fixture = readFileSync(path.join(FIXTURES, file), 'utf8');
    const content = fixture.repeat(Math.ceil(1_000_000 / fixture.length));
    await chunkFile({ path: name, content: fixture });
    const chunkMs: number[] = [];
    const embedMs: number[] = [];
    let count = 0;
    for (let run = 0; run < RUNS; run += 1) {
      let started = performance.now();
      const chunks = await chunkFile({ path: name, content });
      chunkMs.push(performance.now() - started);
      count = chunks.length;
      started = performance.now();
      await embedder.embed(chunks.map((chunk) => chunk.content));
      embedMs.push(performance.now() - started);
    }
    const mb = content.length / 1_000_000;
    console.log(
      `  ${name.padEnd(20)} ${count} chunks   chunk ${median(chunkMs).toFixed(0).padStart(5)} ms ` +
        `(${(mb / (median(chunkMs) / 1000)).toFixed(1)} MB/s)   embed ${median(embedMs).toFixed(0).padStart(5)} ms ` +
        `(${Math.round(count / (median(embedMs) / 1000))} chunks/s)`,
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

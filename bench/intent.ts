/**
 * Intent detection latency on generated, realistic files of 100, 2,000 and 10,000 lines, with the
 * cursor near the middle (16 positions around it, in turn). Prints figures; it never passes or fails.
 *
 *   node -r @swc-node/register bench/intent.ts [iterations=400]
 *
 * "windowed" is detectIntent as shipped (large files parsed around the cursor); "whole file" forces
 * a parse of the entire file, for comparison. The first call per language includes loading its
 * grammar and is reported apart.
 */
import { parsingStats } from '../src/parsing';
import { detectIntent } from '../src/suggestions/detect-intent';
import type { DetectIntentInput, DetectIntentOptions } from '../src/suggestions/detect-intent';
import { cursorAtRow, REALISTIC_FILE_NAMES, realisticSource } from '../test/suggestions/helpers/realistic-source';
import type { RealisticLanguage } from '../test/suggestions/helpers/realistic-source';

const ITERATIONS = Number(process.argv[2] ?? 400);
const LANGUAGES: RealisticLanguage[] = ['typescript', 'python', 'go', 'java', 'csharp', 'php', 'ruby'];
const SIZES = [100, 2_000, 10_000];
const WHOLE_FILE: DetectIntentOptions = { wholeFileMaxChars: Number.POSITIVE_INFINITY };

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const ms = (value: number) => value.toFixed(2).padStart(7);

async function measure(inputs: DetectIntentInput[], iterations: number, options?: DetectIntentOptions) {
  for (let index = 0; index < Math.min(20, iterations); index += 1) await detectIntent(inputs[index % inputs.length], options);
  const samples: number[] = [];
  for (let index = 0; index < iterations; index += 1) {
    const started = performance.now();
    await detectIntent(inputs[index % inputs.length], options);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples.at(-1)! };
}

async function main() {
  console.log(`intent detection, ${ITERATIONS} calls per row (whole-file column: fewer on large files), node ${process.version}\n`);
  console.log('language     lines   chars | first call | windowed p50   p99     max | whole file p50   p99');
  let heapBefore: number | undefined;
  for (const language of LANGUAGES) {
    let first: number | null = null;
    for (const size of SIZES) {
      const source = realisticSource(language, size);
      const rows = source.split('\n').length;
      const middle = Math.floor(rows / 2);
      const inputs = Array.from({ length: 16 }, (_, offset) => ({
        fileName: REALISTIC_FILE_NAMES[language],
        ...cursorAtRow(source, middle - 8 + offset),
      }));
      if (first === null) {
        const started = performance.now();
        await detectIntent(inputs[0]);
        first = performance.now() - started;
        heapBefore ??= parsingStats().wasmHeapBytes;
      }
      const windowed = await measure(inputs, ITERATIONS);
      const whole = await measure(inputs, size > 2_000 ? Math.ceil(ITERATIONS / 10) : Math.ceil(ITERATIONS / 2), WHOLE_FILE);
      const firstColumn = size === SIZES[0] ? `${ms(first)} ms` : ' '.repeat(10);
      console.log(
        `${language.padEnd(10)} ${String(rows).padStart(6)} ${String(source.length).padStart(7)} | ${firstColumn} | ${ms(windowed.p50)} ` +
          `${ms(windowed.p99)} ${ms(windowed.max)} | ${ms(whole.p50)} ${ms(whole.p99)}`,
      );
    }
  }
  const stats = parsingStats();
  console.log(
    `\ntrees parsed ${stats.treesParsed}, still live ${stats.liveTrees}; WASM heap ${((heapBefore ?? 0) / 2 ** 20).toFixed(0)} MiB after ` +
      `the first call, ${(stats.wasmHeapBytes / 2 ** 20).toFixed(0)} MiB after`,
  );
  console.log(`grammar loads ${JSON.stringify(stats.grammarLoads)}, runtime inits ${stats.runtimeInits}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

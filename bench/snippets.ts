/**
 * Snippet choice (src/search/choose-snippets.ts): CPU per found file and the memory of the chunk
 * readings it keeps. Prints figures; never passes or fails on time.
 *
 *   node -r @swc-node/register bench/snippets.ts [runs=5]
 *
 * The chunks are this repository's own `src/` files cut by the tree-sitter chunker (no database, no
 * network); each file with at least 5 chunks is a "found file" of at most 25 chunks, as a search
 * gives a long file. Every question of data/retrieval-eval/duo-slice.jsonl is asked of every such
 * file. The first pass reads every chunk (its lines, words and boilerplate: the cold cost, and what
 * the readings cache then holds); the later passes find them read (the warm cost a repeated search
 * pays). CPU is this process's user + system time, which a shared machine's load moves less than
 * wall time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { chunkFile } from '../src/indexing/chunk-file';
import { PROJECT_ROOT } from '../src/paths';
import { chooseSnippets, snippetIntent, type SnippetHit } from '../src/search/choose-snippets';
import { queryTerms } from '../src/search/text-query';
import { cpuMs, machineLoad, median, QUICK, reportFigures, runBench } from './lib/figures';

const RUNS = Number(process.argv[2] ?? (QUICK ? 3 : 5));
const CHUNKS_PER_FILE = 25;
const MIN_CHUNKS = 5;

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

async function foundFiles(): Promise<Array<{ path: string; hits: SnippetHit[] }>> {
  const files: Array<{ path: string; hits: SnippetHit[] }> = [];
  for (const file of sourceFiles(path.join(PROJECT_ROOT, 'src'))) {
    const relative = path.relative(PROJECT_ROOT, file);
    const chunks = await chunkFile({ path: relative, content: readFileSync(file, 'utf8') });
    if (chunks.length < MIN_CHUNKS) continue;
    files.push({
      path: relative,
      // Retrieval scores falling with the order, as a search's fused scores do.
      hits: chunks.slice(0, CHUNKS_PER_FILE).map((chunk, at) => ({
        startLine: chunk.startLine,
        endLine: chunk.endLine,
        content: chunk.content,
        score: 1 / (6 + at),
        symbol: chunk.symbol ?? null,
      })),
    });
  }
  return files;
}

async function main(): Promise<void> {
  const files = await foundFiles();
  const questions = readFileSync(path.join(PROJECT_ROOT, 'data', 'retrieval-eval', 'duo-slice.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => (JSON.parse(line) as { q: string }).q);
  const characters = files.reduce((sum, file) => sum + file.hits.reduce((total, hit) => total + hit.content.length, 0), 0);
  const chunks = files.reduce((sum, file) => sum + file.hits.length, 0);
  console.log(
    `snippet choice: ${files.length} files of ${MIN_CHUNKS}–${CHUNKS_PER_FILE} chunks (${chunks} chunks, ` +
      `${(characters / 1e6).toFixed(2)} M characters), ${questions.length} questions, ${RUNS} runs; ${machineLoad()}`,
  );

  const pass = () => {
    const started = cpuMs();
    let calls = 0;
    for (const question of questions) {
      const options = { language: 'typescript', question, terms: queryTerms(question), intent: snippetIntent(question) };
      for (const file of files) {
        chooseSnippets(file.hits, { ...options, path: file.path });
        calls += 1;
      }
    }
    return (cpuMs() - started) / calls;
  };

  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const cold = pass();
  collectGarbage();
  const readingsMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  const warm: number[] = [];
  for (let run = 0; run < RUNS; run += 1) warm.push(pass());

  const perMillion = readingsMb / (characters / 1e6);
  console.log(`  cold (every chunk read first)   ${cold.toFixed(3)} ms CPU per file`);
  console.log(`  warm (median of ${RUNS} passes)     ${median(warm).toFixed(3)} ms CPU per file`);
  console.log(
    `  readings kept                   ${readingsMb.toFixed(1)} MB (${perMillion.toFixed(0)} MB per million characters of chunks)`,
  );
  reportFigures([
    {
      figure: 'snippet choice, CPU per found file of up to 25 chunks (warm)',
      target: '-',
      result: `${median(warm).toFixed(2)} ms`,
      met: null,
    },
    {
      figure: 'snippet choice, readings kept per million characters of chunks',
      target: '-',
      result: `${perMillion.toFixed(0)} MB`,
      met: null,
    },
  ]);
}

runBench(main);

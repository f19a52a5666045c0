/**
 * Chat gatekeeper latency (prints figures; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/gatekeeper.ts [rounds=3]
 *
 * Classifies a few thousand varied prompts (every labelled prompt, a reworded copy of each, and
 * long prompts with 50 to 400 pasted lines) one at a time and prints p50/p99/max per prompt:
 * uncached (cache off), uncached with a context (selected text, open file or repository in turn),
 * then cached (every prompt seen once before). Also prints the model load
 * time. Each figure is the median over `rounds` runs.
 */
import { readDataset } from '../src/gatekeeper/training/dataset';
import { GATEKEEPER_DATA_DIR } from '../src/gatekeeper/files';
import { NO_CONTEXT, type GatekeeperContext } from '../src/gatekeeper/context';
import { loadGatekeeper } from '../src/gatekeeper/load-gatekeeper';
import { CODE_SNIPPETS, STACK_TRACES } from '../src/gatekeeper/training/data-generator/snippets';
import { median, percentile } from './lib/figures';

const ROUNDS = Number(process.argv[2] ?? 3);

function benchPrompts(): string[] {
  const texts = readDataset(GATEKEEPER_DATA_DIR).map((prompt) => prompt.text);
  const leads = ['hey, ', 'quick q: ', 'ok so ', 'Hi Duo! ', 'please ', ''];
  const reworded = texts.map((text, index) => `${leads[index % leads.length]}${text} (${index})`);
  const long: string[] = [];
  for (let index = 0; index < 300; index++) {
    const lines = 50 + ((index * 37) % 350);
    const block: string[] = [];
    while (block.length < lines) block.push(...CODE_SNIPPETS[(index + block.length) % CODE_SNIPPETS.length].code.split('\n'));
    const paste =
      index % 3 === 0
        ? STACK_TRACES[index % STACK_TRACES.length] + '\n' + block.slice(0, lines).join('\n')
        : block.slice(0, lines).join('\n');
    long.push(
      index % 2 === 0
        ? `why does this fail? (${index})\n\`\`\`\n${paste}\n\`\`\``
        : `${paste}\nrefactor this and write tests for it (${index})`,
    );
  }
  return [...texts, ...reworded, ...long];
}

/**
 * CPU time (user + system) per prompt: on a shared, loaded machine the wall clock counts time the
 * process waited for a core; this does not (it does count GC and the cpuUsage call itself).
 */
function cpuTime(classify: (prompt: string) => unknown, prompts: string[]): number[] {
  const costs: number[] = [];
  for (const prompt of prompts) {
    const started = process.cpuUsage();
    classify(prompt);
    const used = process.cpuUsage(started);
    costs.push((used.user + used.system) / 1000);
  }
  return costs;
}

function time(classify: (prompt: string) => unknown, prompts: string[]): number[] {
  const latencies: number[] = [];
  for (const prompt of prompts) {
    const started = performance.now();
    classify(prompt);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

function main(): void {
  const loadStarted = performance.now();
  loadGatekeeper({ cacheSize: 0 });
  const loadMs = performance.now() - loadStarted;
  const prompts = benchPrompts();
  const warm = loadGatekeeper({ cacheSize: 0 });
  for (const prompt of prompts.slice(0, 1000)) warm.classify(prompt);

  type Sample = { p50: number; p99: number; max: number };
  const runs = { uncached: [] as Sample[], withContext: [] as Sample[], cpu: [] as Sample[], cached: [] as Sample[] };
  // Selected code, an open file, a repository: the context rule's path, in turn.
  const contexts: GatekeeperContext[] = [
    { ...NO_CONTEXT, selectedText: true },
    { ...NO_CONTEXT, currentFile: true },
    { ...NO_CONTEXT, codebase: true },
  ];
  for (let round = 0; round < ROUNDS; round++) {
    const fresh = loadGatekeeper({ cacheSize: 0 });
    const uncached = time((prompt) => fresh.classify(prompt), prompts);
    runs.uncached.push({ p50: percentile(uncached, 50), p99: percentile(uncached, 99), max: Math.max(...uncached) });
    const contextual = loadGatekeeper({ cacheSize: 0 });
    let turn = 0;
    const withContext = time((prompt) => contextual.classify(prompt, contexts[turn++ % contexts.length]), prompts);
    runs.withContext.push({ p50: percentile(withContext, 50), p99: percentile(withContext, 99), max: Math.max(...withContext) });
    const cpu = cpuTime((prompt) => contextual.classify(prompt, contexts[turn++ % contexts.length]), prompts);
    runs.cpu.push({ p50: percentile(cpu, 50), p99: percentile(cpu, 99), max: Math.max(...cpu) });
    const gatekeeper = loadGatekeeper({ cacheSize: prompts.length });
    for (const prompt of prompts) gatekeeper.classify(prompt);
    const cached = time((prompt) => gatekeeper.classify(prompt), prompts);
    runs.cached.push({ p50: percentile(cached, 50), p99: percentile(cached, 99), max: Math.max(...cached) });
  }
  const format = (samples: Array<{ p50: number; p99: number; max: number }>) =>
    `p50 ${median(samples.map((s) => s.p50)).toFixed(3)} ms   p99 ${median(samples.map((s) => s.p99)).toFixed(3)} ms   max ` +
    `${median(samples.map((s) => s.max)).toFixed(2)} ms`;
  const longest = Math.max(...prompts.map((prompt) => prompt.length));
  process.stdout.write(
    [
      `gatekeeper: ${prompts.length} prompts (up to ${longest} chars), median of ${ROUNDS} rounds, node ${process.version}`,
      `model load (first loadGatekeeper): ${loadMs.toFixed(0)} ms`,
      `uncached: ${format(runs.uncached)}`,
      `uncached, with context: ${format(runs.withContext)}`,
      `uncached, with context, CPU time: ${format(runs.cpu)}`,
      `cached:   ${format(runs.cached)}`,
      `heap used: ${(process.memoryUsage().heapUsed / 1024 / 1024).toFixed(0)} MiB`,
      '',
    ].join('\n'),
  );
}

main();

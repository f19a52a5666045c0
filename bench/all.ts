/**
 * `npm run bench`: every bench in its quick mode (BENCH_QUICK=1: fewer runs and samples), one after
 * another, each in a process of its own with a time limit, then one table: figure, target, result.
 * A bench that fails or runs out of time is a row saying so; the others still run.
 *
 *   npm run bench [-- --with-search]   (search builds ~100k chunks first: about ten more minutes)
 *
 * Needs PostgreSQL with pgvector and Redis as the tests do, and `npm run build` (run here) for the
 * start-up bench. Each bench's own report is printed as it goes.
 */
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';
import { FIGURES_PREFIX, machineLoad, type Figure } from './lib/figures';

type Bench = { name: string; args: string[]; limitMinutes: number; build?: boolean };

const BENCHES: Bench[] = [
  { name: 'responsiveness', args: ['embedded,postgres'], limitMinutes: 20 },
  { name: 'large-tree', args: [], limitMinutes: 5 },
  { name: 'chat', args: [], limitMinutes: 10 },
  { name: 'index', args: [], limitMinutes: 20 },
  { name: 'session', args: [], limitMinutes: 5 },
  { name: 'completions', args: [], limitMinutes: 10 },
  { name: 'messages', args: [], limitMinutes: 5 },
  { name: 'snippets', args: [], limitMinutes: 5 },
  { name: 'outage', args: [], limitMinutes: 5 },
  { name: 'startup', args: [], limitMinutes: 10, build: true },
  ...(process.argv.includes('--with-search') ? [{ name: 'search', args: ['60', '100000', '5'], limitMinutes: 40 }] : []),
];

function run(bench: Bench): Promise<{ figures: Figure[]; failure: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', path.join('bench', `${bench.name}.ts`), ...bench.args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, BENCH_QUICK: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const figures: Figure[] = [];
    let buffered = '';
    child.stdout.on('data', (data: Buffer) => {
      buffered += data.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith(FIGURES_PREFIX)) figures.push(...(JSON.parse(line.slice(FIGURES_PREFIX.length)) as Figure[]));
        else console.log(`  ${line}`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), bench.limitMinutes * 60_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const failure = signal
        ? `stopped after its ${bench.limitMinutes} min limit`
        : code !== 0
          ? `failed (exit ${code})`
          : figures.length === 0
            ? 'printed no figures'
            : null;
      resolve({ figures, failure });
    });
  });
}

async function main(): Promise<void> {
  console.log(
    `duo-slice benches, quick mode, ${new Date().toISOString()}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), node ` +
      `${process.version}; ${machineLoad()}\n`,
  );
  const rows: Array<Figure & { bench: string }> = [];
  for (const bench of BENCHES) {
    console.log(`== bench/${bench.name}.ts ${bench.args.join(' ')}`);
    if (bench.build) {
      const built = spawnSync('npm', ['run', 'build', '--silent'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
      if (built.status !== 0) {
        rows.push({
          bench: bench.name,
          figure: `bench/${bench.name}.ts`,
          target: '-',
          result: 'not run: npm run build failed',
          met: false,
        });
        continue;
      }
    }
    const started = performance.now();
    const { figures, failure } = await run(bench);
    console.log(`   (${((performance.now() - started) / 1000).toFixed(0)} s; ${machineLoad()})\n`);
    rows.push(...figures.map((figure) => ({ ...figure, bench: bench.name })));
    if (failure) rows.push({ bench: bench.name, figure: `bench/${bench.name}.ts`, target: '-', result: failure, met: false });
  }
  if (!process.argv.includes('--with-search'))
    rows.push({
      bench: 'search',
      figure: 'codebaseSearch p95 at 100k chunks, GraphQL / in-process',
      target: '40 / 25 ms',
      result: 'not run (npm run bench -- --with-search)',
      met: null,
    });
  const width = (key: 'figure' | 'target' | 'result') => Math.max(key.length, ...rows.map((row) => row[key].length));
  const [figureWidth, targetWidth, resultWidth] = [width('figure'), width('target'), width('result')];
  const line = (figure: string, target: string, result: string, met: string) =>
    `| ${figure.padEnd(figureWidth)} | ${target.padEnd(targetWidth)} | ${result.padEnd(resultWidth)} | ${met.padEnd(4)} |`;
  console.log(`\n${line('figure', 'target', 'result', 'met')}`);
  console.log(line('-'.repeat(figureWidth), '-'.repeat(targetWidth), '-'.repeat(resultWidth), '----'));
  for (const row of rows) console.log(line(row.figure, row.target, row.result, row.met === null ? '' : row.met ? 'yes' : 'no'));
  console.log(`\n${machineLoad()}; figures from a shared or busy machine are slower than the code.`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

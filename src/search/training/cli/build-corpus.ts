/**
 * Builds the weakly labelled training corpus of code search (question → file pairs mined from doc
 * comments, src/search/training/build-corpus.ts) from the packages of
 * data/training-corpus/packages.json:
 *
 *   npm run corpus:build -- --out /work/corpus [--packages file] [--only name]... [--max-pairs 40]
 *
 * Writes, under --out: repos/<name> (the package with its chosen comments blanked, a git
 * repository), questions/<name>.jsonl, mined/<name>.jsonl (every mined comment with the
 * identifiers of what it documents), manifest.json (packages, language, split, paths, counts;
 * skipped packages and why), sets.json (the packages as eval:retrieval question sets: train ones
 * with the role "tuning", validation ones "held-out") and, when at least 50 packages in at least 4
 * languages are in it, READY. Untouched sources are cached under the system's temporary folder and reused.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildCorpusPackage, DEFAULT_MAX_PAIRS, DEFAULT_MAX_PER_FILE, splitPackages, type PackageResult } from '../build-corpus';
import { loadCorpusPackages, sourceOf } from '../corpus-packages';

const MIN_PACKAGES = 50;
const MIN_LANGUAGES = 4;

const USAGE = `Usage: npm run corpus:build -- --out <folder> [--packages <file>] [--only <name>]...
         [--max-pairs N] [--per-file N] [--concurrency N]`;

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function positive(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) fail(`${flag} must be a positive whole number (got "${value}")`);
  return number;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        out: { type: 'string' },
        packages: { type: 'string' },
        only: { type: 'string', multiple: true },
        'max-pairs': { type: 'string' },
        'per-file': { type: 'string' },
        concurrency: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!values.out?.trim()) fail('--out is required');
  const outDir = path.resolve(values.out.trim());
  const packagesFile = path.resolve(values.packages ?? 'data/training-corpus/packages.json');
  let entries;
  try {
    entries = loadCorpusPackages(packagesFile);
  } catch (error) {
    fail((error as { userMessage?: string }).userMessage ?? (error as Error).message);
  }
  const unknown = (values.only ?? []).find((name) => !entries.some((entry) => entry.name === name));
  if (unknown) fail(`--only ${unknown}: ${packagesFile} has no such package`);
  const chosen = values.only?.length ? entries.filter((entry) => values.only!.includes(entry.name)) : entries;
  const maxPairs = positive(values['max-pairs'], '--max-pairs', DEFAULT_MAX_PAIRS);
  const maxPerFile = positive(values['per-file'], '--per-file', DEFAULT_MAX_PER_FILE);
  const concurrency = positive(values.concurrency, '--concurrency', 3);
  const cacheDir = path.join(os.tmpdir(), 'duo-corpus-sources');

  await mkdir(outDir, { recursive: true });
  await rm(path.join(outDir, 'READY'), { force: true });
  const split = splitPackages(entries);
  const results: PackageResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < chosen.length) {
      const entry = chosen[next];
      next += 1;
      const started = performance.now();
      const result = await buildCorpusPackage({ entry, outDir, cacheDir, maxPairs, maxPerFile }).catch((error: Error): PackageResult => ({
        status: 'skipped',
        name: entry.name,
        language: entry.language,
        source: sourceOf(entry),
        reason: `failed: ${error.message.slice(0, 300)}`,
      }));
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stderr.write(
        result.status === 'ok'
          ? `${entry.name}: ${result.pairs} pairs of ${result.candidates} mined, ${result.indexedFiles} files (${seconds} s)\n`
          : `${entry.name}: skipped, ${result.reason}\n`,
      );
      results.push(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chosen.length) }, worker));

  const order = new Map(entries.map((entry, index) => [entry.name, index]));
  results.sort((left, right) => order.get(left.name)! - order.get(right.name)!);
  const built = results.filter((result) => result.status === 'ok');
  const skipped = results.filter((result) => result.status === 'skipped');
  const count = <Row extends { pairs: number }>(rows: Row[], key: (row: Row) => string) =>
    Object.fromEntries(
      [...new Set(rows.map(key))].sort().map((value) => {
        const matching = rows.filter((row) => key(row) === value);
        return [value, { packages: matching.length, pairs: matching.reduce((sum, row) => sum + row.pairs, 0) }];
      }),
    );
  const packages = built.map((result) => ({ ...result, split: split.get(result.name)! }));
  const manifest = {
    description:
      'Weakly labelled code-search pairs: a doc comment or docstring as the question, its own file as the answer; ' +
      'each repository is the package with the chosen comments blanked out.',
    packagesFile: path.relative(process.cwd(), packagesFile),
    maxPairs,
    maxPerFile,
    counts: {
      packages: built.length,
      pairs: built.reduce((sum, row) => sum + row.pairs, 0),
      byLanguage: count(packages, (row) => row.language),
      bySplit: count(packages, (row) => row.split),
    },
    packages,
    skipped,
  };
  await writeFile(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // The same packages as question sets for eval:retrieval --sets: train ones as "tuning", validation ones as "held-out".
  const sets = packages.map((entry) => ({
    name: entry.name.replace(/[^a-z0-9-]+/g, '-'),
    language: entry.language,
    role: entry.split === 'train' ? 'tuning' : 'held-out',
    questions: path.relative(outDir, entry.questions),
    repo: path.relative(outDir, entry.repository),
  }));
  await writeFile(path.join(outDir, 'sets.json'), `${JSON.stringify(sets, null, 2)}\n`);
  const languages = new Set(built.map((result) => result.language)).size;
  process.stderr.write(`${built.length} packages in ${languages} languages, ${manifest.counts.pairs} pairs; ${skipped.length} skipped\n`);
  if (values.only?.length) return;
  if (built.length >= MIN_PACKAGES && languages >= MIN_LANGUAGES) {
    await writeFile(path.join(outDir, 'READY'), `${new Date().toISOString()}\n`);
    process.stderr.write(`wrote ${path.join(outDir, 'READY')}\n`);
  } else {
    process.stderr.write(`not READY: needs ${MIN_PACKAGES} packages in ${MIN_LANGUAGES} languages\n`);
    process.exitCode = 1;
  }
  if (!existsSync(path.join(outDir, 'manifest.json'))) process.exitCode = 1;
}

void main();

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  materializeDebianBinary,
  materializeDebianSource,
  materializeNpmPackage,
  reproducibleGit,
  type MaterializedPackage,
} from '../../evaluation/npm-source';
import { createFileFilter } from '../../indexing/file-filter';
import { fileRole } from '../../indexing/file-role';
import { grammarForFileName, ParseBudgetExceeded } from '../../parsing';
import { sourceOf, type CorpusPackage } from './corpus-packages';
import { mineComments, type MinedComment } from './mine-comments';

/**
 * One package of the training corpus: its source fetched (npm pack, or a Debian source package's
 * upstream tarball), its doc comments and docstrings mined (mine-comments.ts), at most `maxPairs`
 * of them chosen deterministically as questions whose answer is their own file, and a copy of the
 * package committed as a git repository with those comments blanked out (line numbers kept), so a
 * search over the copy never sees the question's words where the question came from.
 *
 * A comment is not chosen when its question is asked twice in the package, or when its first or
 * last words occur anywhere else in the package's indexed files (a bundle, a type declaration or a
 * copy repeating the comment would give the answer away, or answer it as well).
 */

/** Packages with fewer or more indexed files than these are left out. */
export const MIN_FILES = 50;
export const MAX_FILES = 1500;
/** Questions per package, and per file of it. */
export const DEFAULT_MAX_PAIRS = 40;
export const DEFAULT_MAX_PER_FILE = 3;
/** Packages yielding fewer questions than this are left out: too little to learn from. */
export const MIN_PAIRS = 10;
// Files the miner reads: bigger ones are data or bundles.
const MAX_MINED_BYTES = 400_000;

export type MinedRecord = MinedComment & { path: string; chosen: boolean };

export type PackageResult =
  | {
      status: 'ok';
      name: string;
      language: string;
      source: string;
      /** The stripped copy: a one-commit git repository. */
      repository: string;
      commit: string;
      /** The questions, JSON Lines of {"q", "files"} as data/retrieval-eval/*.jsonl. */
      questions: string;
      /** Every mined comment with its identifiers, chosen or not (JSON Lines of MinedRecord). */
      mined: string;
      files: number;
      indexedFiles: number;
      minedFiles: number;
      candidates: number;
      pairs: number;
    }
  | { status: 'skipped'; name: string; language: string; source: string; reason: string };

const { config: GIT_CONFIG, env: GIT_ENV } = reproducibleGit('corpus');

function git(repository: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-C', repository, ...GIT_CONFIG, ...args],
      { env: GIT_ENV, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8', timeout: 5 * 60_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`git ${args[0]} failed: ${String(stderr || error.message).slice(0, 300)}`)) : resolve(stdout),
    );
  });
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** Lower-case words separated by single spaces: how question text is looked for in the code. */
export function normalizeText(text: string): string {
  return ` ${text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()} `;
}

function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) count += 1;
  return count;
}

/** The first and last `size` words of a question, as normalized probes. */
function probes(question: string, size = 5): string[] {
  const words = normalizeText(question).trim().split(' ');
  if (words.length <= size) return [` ${words.join(' ')} `];
  return [` ${words.slice(0, size).join(' ')} `, ` ${words.slice(-size).join(' ')} `];
}

async function materialize(entry: CorpusPackage, cacheDir: string): Promise<MaterializedPackage> {
  const directory = path.join(cacheDir, entry.name);
  if (entry.npm) return materializeNpmPackage({ spec: entry.npm, directory });
  if (entry.deb)
    return materializeDebianBinary({
      package: entry.deb,
      message: entry.name,
      directory,
      isSource: (file) => grammarForFileName(file) !== null,
    });
  return materializeDebianSource({ source: entry.debian!, message: entry.name, directory });
}

type SourceFile = { path: string; text: string };

/** The files of the materialized repository the indexer would index (file-filter.ts), with their text. */
async function indexedFiles(repository: string): Promise<{ all: string[]; indexed: SourceFile[] }> {
  const all = (await git(repository, ['ls-files', '-z'])).split('\0').filter(Boolean);
  const filter = createFileFilter();
  const indexed: SourceFile[] = [];
  for (const file of all) {
    const absolute = path.join(repository, file);
    const info = await stat(absolute).catch(() => null);
    if (!info?.isFile() || filter.byPath(file, info.size)) continue;
    const content = await readFile(absolute);
    const text = content.toString('utf8');
    if (filter.byContent(content, text)) continue;
    indexed.push({ path: file, text });
  }
  return { all, indexed };
}

/** Candidates in a fixed pseudo-random order, then chosen: at most `maxPerFile` per file, `maxPairs` in all, none given away elsewhere. */
function choose(options: {
  name: string;
  candidates: MinedRecord[];
  corpusText: string;
  maxPairs: number;
  maxPerFile: number;
}): MinedRecord[] {
  const { candidates, corpusText } = options;
  const asked = new Map<string, number>();
  for (const candidate of candidates) {
    const key = normalizeText(candidate.question);
    asked.set(key, (asked.get(key) ?? 0) + 1);
  }
  const ordered = candidates
    .map((candidate) => ({ candidate, key: sha1(`${options.name}\0${candidate.path}\0${candidate.startRow}`) }))
    .sort((left, right) => (left.key < right.key ? -1 : left.key > right.key ? 1 : 0));
  const perFile = new Map<string, number>();
  const chosen: MinedRecord[] = [];
  for (const { candidate } of ordered) {
    if (chosen.length >= options.maxPairs) break;
    if ((perFile.get(candidate.path) ?? 0) >= options.maxPerFile) continue;
    if ((asked.get(normalizeText(candidate.question)) ?? 0) > 1) continue;
    // Its own comment holds each probe once; more occurrences are copies elsewhere.
    if (probes(candidate.question).some((probe) => occurrences(corpusText, probe) > 1)) continue;
    perFile.set(candidate.path, (perFile.get(candidate.path) ?? 0) + 1);
    chosen.push(candidate);
  }
  return chosen;
}

/** `text` with the rows of `comments` blanked (each comment's first row becomes its placeholder). */
export function blankComments(text: string, comments: ReadonlyArray<Pick<MinedComment, 'startRow' | 'endRow' | 'placeholder'>>): string {
  const lines = text.split('\n');
  for (const comment of comments) {
    for (let row = comment.startRow; row <= comment.endRow && row < lines.length; row += 1) {
      const carriageReturn = lines[row].endsWith('\r') ? '\r' : '';
      lines[row] = (row === comment.startRow ? comment.placeholder : '') + carriageReturn;
    }
  }
  return lines.join('\n');
}

/** Commits the source repository's files, with `changed` written over them, as a new repository at `target`. */
async function writeStrippedCopy(options: {
  source: string;
  target: string;
  changed: Map<string, string>;
  message: string;
}): Promise<string> {
  const parent = path.dirname(options.target);
  await mkdir(parent, { recursive: true });
  const building = path.join(parent, `.${path.basename(options.target)}.${randomBytes(6).toString('hex')}.tmp`);
  const archive = path.join(os.tmpdir(), `corpus-${randomBytes(6).toString('hex')}.tar`);
  try {
    await git(options.source, ['archive', '--format=tar', '-o', archive, 'HEAD']);
    await mkdir(building);
    await new Promise<void>((resolve, reject) =>
      execFile('tar', ['-xf', archive, '-C', building, '--no-same-owner'], (error) =>
        error ? reject(new Error(`tar -xf failed: ${error.message}`, { cause: error })) : resolve(),
      ),
    );
    for (const [file, text] of options.changed) await writeFile(path.join(building, file), text);
    await git(building, ['init', '-q']);
    await git(building, ['add', '-A', '--force']);
    await git(building, ['commit', '-q', '--allow-empty', '--no-verify', '-m', options.message]);
    await rm(options.target, { recursive: true, force: true });
    await rename(building, options.target);
    return (await git(options.target, ['rev-parse', 'HEAD'])).trim();
  } finally {
    await rm(archive, { force: true });
    await rm(building, { recursive: true, force: true });
  }
}

/** Fetches, mines and writes one package of the corpus under `outDir` (repos/, questions/, mined/). */
export async function buildCorpusPackage(options: {
  entry: CorpusPackage;
  outDir: string;
  /** Where the untouched sources are materialized (and reused from). */
  cacheDir: string;
  maxPairs?: number;
  maxPerFile?: number;
  /** Bounds on the package's indexed files and its questions (default MIN_FILES, MAX_FILES, MIN_PAIRS). */
  minFiles?: number;
  maxFiles?: number;
  minPairs?: number;
}): Promise<PackageResult> {
  const { entry, outDir } = options;
  const source = sourceOf(entry);
  const skipped = (reason: string): PackageResult => ({ status: 'skipped', name: entry.name, language: entry.language, source, reason });
  let original: MaterializedPackage;
  try {
    original = await materialize(entry, options.cacheDir);
  } catch (error) {
    return skipped(`could not be fetched: ${(error as Error).message.slice(0, 300)}`);
  }
  const { all, indexed } = await indexedFiles(original.repository);
  const minFiles = options.minFiles ?? MIN_FILES;
  const maxFiles = options.maxFiles ?? MAX_FILES;
  const minPairs = options.minPairs ?? MIN_PAIRS;
  if (indexed.length < minFiles || indexed.length > maxFiles)
    return skipped(`${indexed.length} indexed files, outside ${minFiles}–${maxFiles}`);

  const candidates: MinedRecord[] = [];
  let minedFiles = 0;
  for (const file of indexed) {
    const grammar = grammarForFileName(file.path);
    if (!grammar || fileRole(file.path) !== 'implementation' || file.text.length > MAX_MINED_BYTES) continue;
    minedFiles += 1;
    try {
      for (const comment of await mineComments({ source: file.text, grammar }))
        candidates.push({ ...comment, path: file.path, chosen: false });
    } catch (error) {
      if (!(error instanceof ParseBudgetExceeded)) throw error;
    }
  }
  const corpusText = indexed.map((file) => normalizeText(file.text)).join('\n');
  const chosen = choose({
    name: entry.name,
    candidates,
    corpusText,
    maxPairs: options.maxPairs ?? DEFAULT_MAX_PAIRS,
    maxPerFile: options.maxPerFile ?? DEFAULT_MAX_PER_FILE,
  });
  if (chosen.length < minPairs)
    return skipped(`${chosen.length} usable doc comments of ${candidates.length} mined, fewer than ${minPairs}`);
  for (const comment of chosen) comment.chosen = true;

  const byFile = new Map<string, MinedRecord[]>();
  for (const comment of chosen) byFile.set(comment.path, [...(byFile.get(comment.path) ?? []), comment]);
  const texts = new Map(indexed.map((file) => [file.path, file.text]));
  const changed = new Map([...byFile].map(([file, comments]) => [file, blankComments(texts.get(file)!, comments)]));
  const repository = path.join(outDir, 'repos', entry.name);
  const commit = await writeStrippedCopy({
    source: original.repository,
    target: repository,
    changed,
    message: `${entry.name} (${source}), mined comments blanked`,
  });

  const questions = path.join(outDir, 'questions', `${entry.name}.jsonl`);
  const mined = path.join(outDir, 'mined', `${entry.name}.jsonl`);
  await mkdir(path.dirname(questions), { recursive: true });
  await mkdir(path.dirname(mined), { recursive: true });
  const ordered = [...chosen].sort((left, right) =>
    left.path < right.path ? -1 : left.path > right.path ? 1 : left.startRow - right.startRow,
  );
  await writeFile(questions, ordered.map((comment) => `${JSON.stringify({ q: comment.question, files: [comment.path] })}\n`).join(''));
  await writeFile(mined, candidates.map((comment) => `${JSON.stringify(comment)}\n`).join(''));
  return {
    status: 'ok',
    name: entry.name,
    language: entry.language,
    source,
    repository,
    commit,
    questions,
    mined,
    files: all.length,
    indexedFiles: indexed.length,
    minedFiles,
    candidates: candidates.length,
    pairs: chosen.length,
  };
}

/**
 * Train (≈80%) or validation (≈20%) for each package, stratified by language: within a language
 * the packages in order of their name's sha1, the first fifth (rounded) validation.
 */
export function splitPackages(entries: ReadonlyArray<{ name: string; language: string }>): Map<string, 'train' | 'validation'> {
  const split = new Map<string, 'train' | 'validation'>();
  const languages = [...new Set(entries.map((entry) => entry.language))];
  for (const language of languages) {
    const names = entries
      .filter((entry) => entry.language === language)
      .map((entry) => entry.name)
      .sort((left, right) => (sha1(left) < sha1(right) ? -1 : 1));
    const validation = Math.round(names.length * 0.2);
    names.forEach((name, index) => split.set(name, index < validation ? 'validation' : 'train'));
  }
  return split;
}

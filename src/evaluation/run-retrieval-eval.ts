// Retrieval evaluation runs (npm run eval:retrieval): indexes one repository once per chunking
// strategy into temporary projects, asks every labelled question in every retrieval mode and
// reports recall@k and MRR; src/cli/eval-retrieval.ts only parses the command line.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config';
import type { PrismaClient } from '../db/prisma';
import { AppError, badInput } from '../errors';
import { materializeDebianSource, materializeNpmPackage } from './npm-source';
import {
  firstHitRank,
  formatMetricsTable,
  formatTable,
  MRR_DEPTH,
  parseQuestions,
  percentile,
  type MetricsRow,
  scoreRanks,
  scoredFiles,
  type RetrievalMetrics,
  type RetrievalQuestion,
} from './evaluate-retrieval';
import type { ChunkStrategy } from '../indexing/chunk-file';
import { buildBm25Index } from './bm25-baseline';
import { BlobReader, readBlobs, resolveBranchFirst } from '../indexing/git-reader';
import { indexRepository, type IndexProgress, type IndexRunResult } from '../indexing/index-repository';
import { openRepository } from '../indexing/repository-location';
import type { Embedder } from '../llm/embedders/embedder';
import type { Logger } from '../logger';
import { createGroup, createProject } from '../namespaces/namespaces.service';
import { searchCode, type RetrievalMode } from '../search/search-code';
import type { Reranking } from '../llm/rerankers/reranker';
import ignore from 'ignore';
import { formatCount, ProgressBar } from '../progress-bar';
import { snapshotFiles, storedChunkBytes } from '../db/code-chunks';
import { CODE_INDEX_TABLES, refreshTableStatistics } from '../db/table-statistics';
import { lexicalIndexOf } from '../search/lexical-search';
import { activeSnapshotScope } from '../search/index-readiness';
import { DEFAULT_VOCABULARY, useQueryVocabulary, type QueryVocabularyName } from '../search/vocabulary';
import { formatSnippetTable, measureSnippets, SNIPPET_SEARCH, type LineLabels } from './snippet-overlap';

/** What a retrieval evaluation runs on and how (the eval:retrieval command's options). */
export type RetrievalEvalOptions = {
  repo: string | undefined;
  npm: string | undefined;
  questions: string;
  ref: string;
  strategies: ChunkStrategy[];
  modes: RetrievalMode[];
  exclusions: string[];
  neutral: string[];
  json: string | undefined;
  /** A Debian source package=version to materialize (its upstream tarball), committed with `name`. */
  debian: { source: string; name: string } | undefined;
  /** The query vocabularies to run every mode with (src/search/vocabulary.ts); several label the runs. */
  vocabularies: QueryVocabularyName[];
  /** A list of question sets to evaluate instead of one source (the CLI's --sets, --set, --role). */
  sets: { file: string; names: string[]; role: 'tuning' | 'held-out' | undefined } | undefined;
};

/** The questions file, validated before anything is indexed; a bad line stops the run with its number. */
export function loadQuestions(file: string): RetrievalQuestion[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    process.stderr.write(
      `error: cannot read the questions file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`,
    );
    process.exit(2);
  }
  try {
    return parseQuestions(text, file);
  } catch (error) {
    process.stderr.write(`error: ${error instanceof AppError ? error.userMessage : (error as Error).message}\n`);
    process.exit(2);
  }
}

export type Source = { label: string; repository: string; commit: string };

/** The repository to index: the one given, or the npm package materialized into a cache folder. */
export async function prepareSource(args: RetrievalEvalOptions, bar: ProgressBar): Promise<Source> {
  let repository: string;
  let label: string;
  if (args.npm) {
    bar.status(`${args.npm}: fetching the package…`);
    const directory = path.join(os.tmpdir(), 'duo-eval-sources', args.npm.replace(/[^\w.-]+/g, '_'));
    try {
      repository = (await materializeNpmPackage({ spec: args.npm, directory })).repository;
    } catch (error) {
      throw new AppError({
        code: 'BAD_USER_INPUT',
        userMessage: `The package ${args.npm} could not be fetched: ${(error as Error).message}`,
        cause: error,
      });
    }
    label = args.npm;
  } else if (args.debian) {
    const { source, name } = args.debian;
    bar.status(`${source}: fetching the Debian source package…`);
    try {
      const directory = path.join(os.tmpdir(), 'duo-eval-sources', name);
      repository = (await materializeDebianSource({ source, message: name, directory })).repository;
    } catch (error) {
      throw new AppError({
        code: 'BAD_USER_INPUT',
        userMessage: `The Debian source ${source} could not be fetched: ${(error as Error).message}`,
        cause: error,
      });
    }
    label = `${name} (${source})`;
  } else {
    repository = path.resolve(args.repo!);
    label = repository;
  }
  const git = await openRepository({ projectId: 0, repositoryUrl: repository, dataDir: os.tmpdir() });
  const reader = new BlobReader(git);
  const commit = await resolveBranchFirst(reader, args.ref).finally(() => reader.close());
  if (!commit) throw badInput(`${label} has no branch, tag or commit "${args.ref}"`);
  return { label, repository, commit };
}

export type IndexFigures = {
  set?: string;
  strategy: ChunkStrategy;
  files: number;
  chunks: number;
  storedBytes: number;
  durationMs: number;
  /** Building the snapshot's keyword (BM25) index, which the first search after indexing does. */
  keywordIndexMs: number;
};
export type QuestionResult = { rank: number | null; files: string[] };
export type RunFigures = {
  /** The question set, when several are evaluated in one run. */
  set?: string;
  strategy: ChunkStrategy | 'files';
  mode: RetrievalMode | 'bm25';
  /** The query vocabulary, when several were compared. */
  vocabulary?: QueryVocabularyName;
  metrics: RetrievalMetrics;
  /** Each question's search time (ms), in the file's order. */
  searchMs: number[];
  questions: QuestionResult[];
  /** With a reranker: the questions whose reranking failed (the search's own order was scored). */
  rerankFailures?: number;
  /** With line labels: where the first snippet of a right file falls (snippet-overlap.ts). */
  snippets?: Awaited<ReturnType<typeof measureSnippets>>;
};

export type EvaluationContext = {
  prisma: PrismaClient;
  config: Config;
  logger: Logger;
  embedder: Embedder;
  /** RERANK_PROVIDER's reranker, applied in every mode as the service applies it; null for none. */
  reranking: Reranking | null;
  args: RetrievalEvalOptions;
  source: Source;
  questions: RetrievalQuestion[];
  /** Each question's `lines` labels (parseLineLabels), when the file has any. */
  lineLabels?: Array<LineLabels | null>;
  signal: AbortSignal;
};

/** Indexes the source into one temporary project with a strategy, then asks every question in every mode. */
/**
 * The keyword baseline: BM25 over the snapshot's whole files (the ones indexed, exclusions and
 * neutral files applied the same way), scored like the search modes.
 */
async function bm25Baseline(context: EvaluationContext, snapshotId: bigint): Promise<RunFigures> {
  const { prisma, args, questions } = context;
  const manifest = [...(await snapshotFiles(prisma, snapshotId))]
    .map(([path, file]) => ({ path, blob: file.blob }))
    .sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
  const excluded = args.exclusions.length ? ignore().add(args.exclusions) : null;
  const wanted = manifest.filter((file) => !excluded?.ignores(file.path));
  const text = new Map<string, string>();
  for await (const { blob, content } of readBlobs({ repository: context.source.repository }, [...new Set(wanted.map((file) => file.blob))]))
    text.set(blob, content?.toString('utf8') ?? '');
  const index = buildBm25Index(wanted.map((file) => ({ path: file.path, text: text.get(file.blob) ?? '' })));
  const searchMs: number[] = [];
  const results: QuestionResult[] = questions.map((question) => {
    const started = performance.now();
    const files = scoredFiles(index.rank(question.q, args.neutral.length ? MRR_DEPTH * 2 : MRR_DEPTH), { neutral: args.neutral });
    searchMs.push(performance.now() - started);
    return { rank: firstHitRank(files, question.files), files };
  });
  const metrics = scoreRanks(results.map((result) => result.rank));
  return { strategy: 'files', mode: 'bm25', metrics, searchMs, questions: results };
}

export async function evaluateStrategy(
  context: EvaluationContext,
  options: { projectId: number; strategy: ChunkStrategy; baseline: boolean },
): Promise<{ index: IndexFigures; runs: RunFigures[] }> {
  const { prisma, embedder, reranking, args, questions, signal } = context;
  const { projectId, strategy } = options;
  const indexBar = new ProgressBar({ stream: process.stderr, unit: 'files' });
  const onProgress = (progress: IndexProgress) => {
    if (progress.phase === 'done') return;
    indexBar.update({
      label: `${strategy}: indexing`,
      done: progress.filesDone,
      total: progress.filesTotal,
      detail: `${formatCount(progress.chunks)} chunks`,
    });
  };
  const started = performance.now();
  indexBar.status(`${strategy}: reading the repository…`);
  let result: IndexRunResult;
  try {
    result = await indexRepository({
      prisma,
      embedder,
      logger: context.logger,
      dataDir: context.config.dataDir,
      projectId,
      ref: args.ref,
      chunkStrategy: strategy,
      maxFileBytes: context.config.indexing.maxFileBytes,
      onProgress,
      signal,
    });
  } finally {
    indexBar.clear();
  }
  const durationMs = Math.round(performance.now() - started);
  if (result.outcome === 'dropped')
    throw new AppError({ code: 'INTERNAL', userMessage: `${context.source.label}: "${args.ref}" disappeared while it was indexed` });
  // As the service reads it (indexReadiness); the project's exclusions are the run's (createWorkspace).
  const scope = await activeSnapshotScope(prisma, { projectId, ref: args.ref });
  if (!scope) throw new AppError({ code: 'INTERNAL', userMessage: `${strategy}: the index has no active snapshot after indexing` });
  // As the service finds the tables after autovacuum: fresh statistics (src/db/table-statistics.ts).
  await refreshTableStatistics(prisma, { tables: CODE_INDEX_TABLES });
  const keywordStarted = performance.now();
  await lexicalIndexOf(prisma, scope);
  const index: IndexFigures = {
    strategy,
    files: result.files,
    chunks: result.chunks,
    storedBytes: await storedChunkBytes(prisma, projectId),
    durationMs,
    keywordIndexMs: Math.round(performance.now() - keywordStarted),
  };

  const runs: RunFigures[] = options.baseline ? [await bm25Baseline(context, scope.snapshotId)] : [];
  const compared = args.vocabularies.length > 1;
  try {
    for (const vocabulary of args.vocabularies) {
      useQueryVocabulary(vocabulary);
      for (const mode of args.modes) {
        const bar = new ProgressBar({ stream: process.stderr, unit: 'questions' });
        const results: QuestionResult[] = [];
        const searchMs: number[] = [];
        let rerankFailures = 0;
        for (const question of questions) {
          signal.throwIfAborted();
          bar.update({ label: `${strategy} ${mode}${compared ? ` ${vocabulary}` : ''}`, done: results.length, total: questions.length });
          const searchStarted = performance.now();
          // One snippet per file, so the answer is its first files (their order does not depend on it);
          // twice as many when neutral files will be dropped from it.
          const limit = args.neutral.length ? MRR_DEPTH * 2 : MRR_DEPTH;
          const answer = await searchCode({ prisma, embedder, reranking, scope, query: question.q, limit, maxPerFile: 1, mode });
          searchMs.push(performance.now() - searchStarted);
          if (reranking && !answer.reranked && answer.files.length > 1) rerankFailures += 1;
          const files = scoredFiles(
            answer.files.map((file) => file.path),
            { neutral: args.neutral },
          );
          results.push({ rank: firstHitRank(files, question.files), files });
        }
        bar.update({ label: `${strategy} ${mode}${compared ? ` ${vocabulary}` : ''}`, done: results.length, total: questions.length });
        bar.clear();
        const metrics = scoreRanks(results.map((result) => result.rank));
        const snippets = context.lineLabels?.some(Boolean)
          ? await measureSnippets({
              strategy,
              mode,
              questions,
              labels: context.lineLabels,
              search: async (query) => (await searchCode({ prisma, embedder, reranking, scope, query, mode, ...SNIPPET_SEARCH })).files,
            })
          : undefined;
        runs.push({
          strategy,
          mode,
          ...(compared ? { vocabulary } : {}),
          metrics,
          searchMs,
          questions: results,
          snippets,
          ...(reranking ? { rerankFailures } : {}),
        });
      }
    }
  } finally {
    useQueryVocabulary(DEFAULT_VOCABULARY);
  }
  return { index, runs };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(2)} MB`;

/** The metrics table's rows of runs, with their search times' p50 and p95. */
export function metricsRows(runs: readonly RunFigures[]): MetricsRow[] {
  return runs.map((run) => ({
    set: run.set,
    strategy: run.strategy,
    mode: run.vocabulary ? `${run.mode} ${run.vocabulary}` : run.mode,
    metrics: run.metrics,
    latency: { p50: percentile(run.searchMs, 50), p95: percentile(run.searchMs, 95) },
  }));
}

/** The index table: each index's size and how long it and its keyword index took to build. */
export function formatIndexTable(indexes: readonly IndexFigures[]): string {
  const withSet = indexes.some((index) => index.set !== undefined);
  return formatTable(
    [...(withSet ? ['set'] : []), 'strategy', 'files', 'chunks', 'stored', 'index time', 'keyword index'],
    indexes.map((index) => [
      ...(withSet ? [index.set ?? '-'] : []),
      index.strategy,
      formatCount(index.files),
      formatCount(index.chunks),
      megabytes(index.storedBytes),
      seconds(index.durationMs),
      seconds(index.keywordIndexMs),
    ]),
  );
}

export function report(options: { context: EvaluationContext; indexes: IndexFigures[]; runs: RunFigures[] }): string {
  const { context, indexes, runs } = options;
  const { source, questions, embedder, args } = context;
  const exclusions = args.exclusions.length ? `, excluding ${args.exclusions.join(' ')}` : '';
  const neutral = args.neutral.length ? `, ${args.neutral.join(' ')} scored as neutral` : '';
  return [
    `Retrieval on ${source.label} at ${source.commit.slice(0, 12)}: ${questions.length} questions, embedder ` +
      `${embedder.version}${exclusions}${neutral}`,
    ...rerankerLines(context.reranking, runs),
    '',
    formatMetricsTable(metricsRows(runs)),
    '',
    formatIndexTable(indexes),
    '',
    ...formatSnippetSection(runs),
  ].join('\n');
}

/** What the header says of the reranker: which, how it was used, and the questions it failed on (their search's own order was scored). */
export function rerankerLines(reranking: Reranking | null, runs: readonly RunFigures[]): string[] {
  if (!reranking) return [];
  const { reranker, candidates, weight, maxChars } = reranking;
  const failed = runs.filter((run) => run.rerankFailures);
  return [
    `reranker ${reranker.name}${reranker.model ? ` ${reranker.model}` : ''}: the best ${candidates} files, weight ${weight}, ` +
      `${maxChars} characters per file`,
    ...failed.map(
      (run) =>
        `  the reranker failed on ${run.rerankFailures} of ${run.questions.length} questions in ${run.set ? `${run.set} ` : ''}` +
        `${run.strategy} ${run.mode} (logged as code_search_rerank_failed; those were scored in the search's own order)`,
    ),
  ];
}

/** The snippet table of runs with line labels, and a blank line; nothing when no run has them. */
export function formatSnippetSection(runs: readonly RunFigures[]): string[] {
  const rows = runs.flatMap((run) => (run.snippets ? [{ ...run.snippets, set: run.set }] : []));
  return rows.length ? [formatSnippetTable(rows), ''] : [];
}

export function writeJson(file: string, options: { context: EvaluationContext; indexes: IndexFigures[]; runs: RunFigures[] }): void {
  const { context, indexes, runs } = options;
  const document = {
    source: {
      label: context.source.label,
      repository: context.source.repository,
      ref: context.args.ref,
      commit: context.source.commit,
      npm: context.args.npm ?? null,
    },
    embedder: context.embedder.version,
    reranker: context.reranking
      ? {
          provider: context.reranking.reranker.name,
          model: context.reranking.reranker.model,
          candidates: context.reranking.candidates,
          weight: context.reranking.weight,
          max_chars: context.reranking.maxChars,
        }
      : null,
    exclusions: context.args.exclusions,
    neutral: context.args.neutral,
    questions: context.questions,
    indexes: indexes.map(indexJson),
    results: runs.map(runJson),
  };
  writeJsonFile(file, document);
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

function indexJson(index: IndexFigures) {
  return {
    strategy: index.strategy,
    files: index.files,
    chunks: index.chunks,
    stored_bytes: index.storedBytes,
    duration_ms: index.durationMs,
    keyword_index_ms: index.keywordIndexMs,
  };
}

function runJson(run: RunFigures) {
  return {
    strategy: run.strategy,
    mode: run.mode,
    ...(run.vocabulary ? { vocabulary: run.vocabulary } : {}),
    recall_at_1: round(run.metrics.recallAt1),
    recall_at_5: round(run.metrics.recallAt5),
    recall_at_10: round(run.metrics.recallAt10),
    mrr: round(run.metrics.mrr),
    search_ms_p50: round(percentile(run.searchMs, 50)),
    search_ms_p95: round(percentile(run.searchMs, 95)),
    ...(run.rerankFailures === undefined ? {} : { rerank_failures: run.rerankFailures }),
    // Per question, in the file's order: the first right file's rank (null: none in the first files) and the files scored.
    ranks: run.questions.map((question) => question.rank),
    answers: run.questions.map((question) => question.files),
    ...(run.snippets ? { snippets: run.snippets } : {}),
  };
}

function writeJsonFile(file: string, document: unknown): void {
  try {
    writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  } catch (error) {
    throw new AppError({
      code: 'BAD_USER_INPUT',
      userMessage: `cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      cause: error,
    });
  }
}

/** A group of its own with one project per strategy; removing the group removes them and their indexes. */
export async function createWorkspace(
  prisma: PrismaClient,
  options: { repository: string; strategies: readonly ChunkStrategy[]; exclusions: readonly string[] },
) {
  const group = await createGroup(prisma, {
    path: `eval-retrieval-${randomBytes(4).toString('hex')}`,
    name: 'Retrieval evaluation (temporary)',
  });
  const projects = new Map<ChunkStrategy, number>();
  try {
    for (const strategy of options.strategies) {
      const { project } = await createProject(prisma, {
        fullPath: `${group.fullPath}/${strategy}`,
        repository: options.repository,
        duoFeaturesEnabled: true,
      });
      if (options.exclusions.length)
        await prisma.project.update({ where: { id: project.id }, data: { contextExclusions: [...options.exclusions] } });
      projects.set(strategy, project.id);
    }
  } catch (error) {
    await removeWorkspace(prisma, group);
    throw error;
  }
  return { group, projects };
}

export async function removeWorkspace(prisma: PrismaClient, group: { id: number; fullPath: string }): Promise<void> {
  try {
    // Projects cascade to their code indexes, snapshots, manifests and chunks.
    await prisma.project.deleteMany({ where: { groupId: group.id } });
    await prisma.group.deleteMany({ where: { id: group.id } });
  } catch (error) {
    process.stderr.write(
      `warning: the temporary group ${group.fullPath} could not be removed (${(error as Error).message}); remove it by hand\n`,
    );
  }
}

/** The figures of a --sets run as JSON: each set, its indexes and every run with its per-question ranks and times. */
export function writeSetsJson(
  file: string,
  options: {
    embedder: string;
    sets: ReadonlyArray<{ name: string; language: string; role: string }>;
    indexes: IndexFigures[];
    runs: RunFigures[];
  },
): void {
  writeJsonFile(file, {
    embedder: options.embedder,
    sets: options.sets.map((set) => ({
      name: set.name,
      language: set.language,
      role: set.role,
      indexes: options.indexes.filter((index) => index.set === set.name).map(indexJson),
      results: options.runs.filter((run) => run.set === set.name).map(runJson),
    })),
  });
}

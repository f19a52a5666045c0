import os from 'node:os';
import { parseArgs } from 'node:util';
import { AppError, badInput } from '../errors';
import { MRR_DEPTH } from '../evaluation/evaluate-retrieval';
import { formatMetricsTable, type RetrievalQuestion } from '../evaluation/evaluate-retrieval';
import { loadQuestionSets, type QuestionSet } from '../evaluation/question-sets';
import {
  createWorkspace,
  evaluateStrategy,
  formatIndexTable,
  formatSnippetSection,
  metricsRows,
  writeSetsJson,
  loadQuestions,
  prepareSource,
  removeWorkspace,
  report,
  rerankerLines,
  writeJson,
  type EvaluationContext,
  type IndexFigures,
  type RetrievalEvalOptions,
  type RunFigures,
} from '../evaluation/run-retrieval-eval';
import { CHUNK_STRATEGIES } from '../indexing/chunk-file';
import { createEmbedder } from '../llm/embedders/create-embedder';
import { createReranking } from '../llm/rerankers/create-reranker';
import { ProgressBar } from '../progress-bar';
import type { RetrievalMode } from '../search/search-code';
import { DEFAULT_VOCABULARY, QUERY_VOCABULARIES } from '../search/vocabulary';
import { runCommand } from './run-command';
import { loadLineLabels, type LineLabels } from '../evaluation/snippet-overlap';

// npm run eval:retrieval -- (--repo <path> | --npm <spec>) --questions <file.jsonl> [--json out.json]
// npm run eval:retrieval -- --sets data/retrieval-eval/sets.json [--set <name>]... [--role tuning|held-out]
// Indexes one repository once per chunking strategy into temporary projects, asks every labelled
// question in every retrieval mode, prints recall@k and MRR per strategy and mode on stdout
// (progress on stderr), and removes the temporary projects and their indexes again.
const MODES: readonly RetrievalMode[] = ['vector', 'text', 'hybrid'];

const USAGE = `Usage: npm run eval:retrieval -- (--repo <path> | --npm <spec>) --questions <file.jsonl> [options]
       npm run eval:retrieval -- --sets <sets.json> [--set <name>]... [--role tuning|held-out] [options]

Measures code search on labelled questions: the repository is indexed once per chunking strategy
(${CHUNK_STRATEGIES.join(', ')}) in temporary projects of the configured database (DATABASE_URL,
or the embedded one) with the configured embedder (EMBEDDINGS_PROVIDER) and reranker (RERANK_PROVIDER,
if any), every question is asked
in every retrieval mode (${MODES.join(', ')}), and recall@1/5/10 and MRR@${MRR_DEPTH} are printed per
strategy and mode, with a keyword baseline (BM25 over whole files, identifier-split: "files bm25"). A hit is the first file of the answer
(grouped by file, best first) that the
question lists. The temporary projects are removed at the end, also when the run fails.

  --repo       a local git repository to index
  --npm        an npm package spec (e.g. mysql@2.18.1), made into a git repository in a cache
               folder under ${os.tmpdir()}
  --questions  JSON Lines, one {"q": "...", "files": ["path", ...]} per line (required with --repo or
               --npm); a question may add "lines": {"path": [[start, end], ...]}, the lines that
               answer, and the first snippet of a right file is then scored against them
  --sets       a list of question sets (data/retrieval-eval/sets.json): each set's source (an npm
               spec, or a Debian source package=version, fetched with apt-get source: needs a
               deb-src entry) is made into a repository in a cache folder under ${os.tmpdir()}
               (a set with "repo" names a local git repository instead, as the training corpus's
               sets.json does), and one table of every set, mode and the baseline is printed
  --set        only this set of --sets; repeat for several (default: all)
  --role       only the sets of this role of --sets: tuning or held-out (default: both)
  --ref        the branch, tag or commit to index (default: HEAD)
  --strategy   only this chunking strategy; repeat for several (default: all)
  --mode       only this retrieval mode; repeat for several (default: all)
  --exclude    a gitignore pattern kept out of the index, e.g. '*.md'; repeat for several
  --neutral    a gitignore pattern of files scored as neither right nor wrong (dropped from the
               answer before ranking), e.g. '*.md' for documentation no question lists
  --vocabulary the words a question is expanded with: ${QUERY_VOCABULARIES.join(', ')} (hand: the
               synonym table; learned: data/search/vocabulary.json); repeat to compare several on one
               index, each labelling its rows (default: ${DEFAULT_VOCABULARY})
  --json       also write the figures and every question's ranks to this file`;

function usageError(message: string): never {
  process.stderr.write(`error: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function pick<T extends string>(values: string[] | undefined, allowed: readonly T[], flag: string): T[] {
  if (!values?.length) return [...allowed];
  const unknown = values.find((value) => !allowed.includes(value as T));
  if (unknown !== undefined) throw badInput(`${flag} must be one of ${allowed.join(', ')} (got "${unknown}")`);
  // In the canonical order, each once, whatever order they were given in.
  return allowed.filter((value) => values.includes(value));
}

function parse(argv: string[]): RetrievalEvalOptions {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        repo: { type: 'string' },
        npm: { type: 'string' },
        questions: { type: 'string' },
        ref: { type: 'string' },
        strategy: { type: 'string', multiple: true },
        mode: { type: 'string', multiple: true },
        exclude: { type: 'string', multiple: true },
        neutral: { type: 'string', multiple: true },
        vocabulary: { type: 'string', multiple: true },
        json: { type: 'string' },
        sets: { type: 'string' },
        set: { type: 'string', multiple: true },
        role: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const repo = values.repo?.trim() || undefined;
    const npm = values.npm?.trim() || undefined;
    const sets = values.sets?.trim() || undefined;
    if ([repo, npm, sets].filter(Boolean).length !== 1) throw badInput('give exactly one of --repo, --npm and --sets');
    if (!sets && !values.questions?.trim()) throw badInput('--questions is required with --repo or --npm');
    if (sets && values.questions !== undefined) throw badInput("--questions goes with --repo or --npm; --sets names each set's own");
    if (!sets && (values.set !== undefined || values.role !== undefined)) throw badInput('--set and --role go with --sets');
    if (values.role !== undefined && !['tuning', 'held-out'].includes(values.role)) throw badInput('--role must be tuning or held-out');
    if (values.json !== undefined && !values.json.trim()) throw badInput('--json needs a file name');
    if (values.ref !== undefined && !values.ref.trim()) throw badInput('--ref needs a branch, tag or commit');
    return {
      repo,
      npm,
      questions: values.questions?.trim() ?? '',
      debian: undefined,
      sets: sets ? { file: sets, names: values.set ?? [], role: values.role as 'tuning' | 'held-out' | undefined } : undefined,
      ref: values.ref?.trim() || 'HEAD',
      strategies: pick(values.strategy, CHUNK_STRATEGIES, '--strategy'),
      modes: pick(values.mode, MODES, '--mode'),
      exclusions: (values.exclude ?? []).map((pattern) => pattern.trim()).filter(Boolean),
      neutral: (values.neutral ?? []).map((pattern) => pattern.trim()).filter(Boolean),
      vocabularies: values.vocabulary?.length ? pick(values.vocabulary, QUERY_VOCABULARIES, '--vocabulary') : [DEFAULT_VOCABULARY],
      json: values.json?.trim(),
    };
  } catch (error) {
    usageError(error instanceof AppError ? error.userMessage : (error as Error).message);
  }
}

const args = parse(process.argv.slice(2));

/** What one run evaluates: the source and questions given, or each chosen set of a --sets list. */
function evaluations(): Array<{
  set?: QuestionSet;
  args: RetrievalEvalOptions;
  questions: RetrievalQuestion[];
  lineLabels: Array<LineLabels | null>;
}> {
  if (!args.sets) return [{ args, questions: loadQuestions(args.questions), lineLabels: loadLineLabels(args.questions) }];
  const { file, names, role } = args.sets;
  let sets: QuestionSet[];
  try {
    sets = loadQuestionSets(file);
  } catch (error) {
    usageError(error instanceof AppError ? error.userMessage : (error as Error).message);
  }
  const unknown = names.find((name) => !sets.some((set) => set.name === name));
  if (unknown) usageError(`--set ${unknown}: ${file} has no such set (it has ${sets.map((set) => set.name).join(', ')})`);
  return sets
    .filter((set) => (!names.length || names.includes(set.name)) && (!role || set.role === role))
    .map((set) => ({
      set,
      args: {
        ...args,
        npm: set.npm,
        repo: set.repoPath,
        debian: set.debian ? { source: set.debian, name: set.name } : undefined,
        questions: set.questionsPath,
      },
      questions: loadQuestions(set.questionsPath),
      lineLabels: loadLineLabels(set.questionsPath),
    }));
}

const chosen = evaluations();

void runCommand(async ({ config, database, logger }) => {
  const { prisma } = database;
  const controller = new AbortController();
  const interrupt = () =>
    controller.abort(
      new AppError({ code: 'INTERNAL', userMessage: 'The evaluation was interrupted; its temporary projects were removed.' }),
    );
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const status = new ProgressBar({ stream: process.stderr, unit: 'steps' });
  try {
    const embedder = await createEmbedder(config.embeddings);
    const reranking = createReranking(config.rerank, logger);
    const indexes: IndexFigures[] = [];
    const runs: RunFigures[] = [];
    let last: EvaluationContext | undefined;
    for (const { set, args: setArgs, questions, lineLabels } of chosen) {
      const source = await prepareSource(setArgs, status);
      const context: EvaluationContext = {
        prisma,
        config,
        logger,
        embedder,
        reranking,
        args: setArgs,
        source,
        questions,
        lineLabels,
        signal: controller.signal,
      };
      const workspace = await createWorkspace(prisma, {
        repository: source.repository,
        strategies: setArgs.strategies,
        exclusions: setArgs.exclusions,
      });
      const setIndexes: IndexFigures[] = [];
      const setRuns: RunFigures[] = [];
      try {
        for (const strategy of setArgs.strategies) {
          const result = await evaluateStrategy(context, {
            projectId: workspace.projects.get(strategy)!,
            strategy,
            baseline: setIndexes.length === 0,
          });
          setIndexes.push({ ...result.index, set: set?.name });
          setRuns.push(...result.runs.map((run) => ({ ...run, set: set?.name })));
        }
      } finally {
        status.status(`removing the temporary projects of ${workspace.group.fullPath}…`);
        await removeWorkspace(prisma, workspace.group);
      }
      if (args.json && !set) writeJson(args.json, { context, indexes: setIndexes, runs: setRuns });
      if (set) process.stderr.write(`${set.name} (${set.language}, ${set.role}):\n${formatMetricsTable(metricsRows(setRuns))}\n\n`);
      indexes.push(...setIndexes);
      runs.push(...setRuns);
      last = context;
    }
    if (!args.sets) {
      process.stdout.write(report({ context: last!, indexes, runs }));
      return undefined;
    }
    if (args.json) writeSetsJson(args.json, { embedder: embedder.version, sets: chosen.map((entry) => entry.set!), indexes, runs });
    process.stdout.write(
      [
        `Retrieval on ${chosen.length} question sets, embedder ${embedder.version}; search time per question in ms`,
        ...rerankerLines(reranking, runs),
        '',
        formatMetricsTable(metricsRows(runs)),
        '',
        formatIndexTable(indexes),
        '',
        ...formatSnippetSection(runs),
      ].join('\n'),
    );
    return undefined;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
});

import os from 'node:os';
import { parseArgs } from 'node:util';
import { AppError, badInput } from '../errors';
import { MRR_DEPTH } from '../evaluation/evaluate-retrieval';
import {
  createWorkspace,
  evaluateStrategy,
  loadQuestions,
  prepareSource,
  removeWorkspace,
  report,
  writeJson,
  type EvaluationContext,
  type IndexFigures,
  type RetrievalEvalOptions,
  type RunFigures,
} from '../evaluation/run-retrieval-eval';
import { CHUNK_STRATEGIES } from '../indexing/chunk-file';
import { createEmbedder } from '../llm/embedders/create-embedder';
import { ProgressBar } from '../progress-bar';
import type { RetrievalMode } from '../search/search-code';
import { runCommand } from './run-command';
import { loadLineLabels } from '../evaluation/snippet-overlap';

// npm run eval:retrieval -- (--repo <path> | --npm <spec>) --questions <file.jsonl> [--json out.json]
// Indexes one repository once per chunking strategy into temporary projects, asks every labelled
// question in every retrieval mode, prints recall@k and MRR per strategy and mode on stdout
// (progress on stderr), and removes the temporary projects and their indexes again.
const MODES: readonly RetrievalMode[] = ['vector', 'text', 'hybrid'];

const USAGE = `Usage: npm run eval:retrieval -- (--repo <path> | --npm <spec>) --questions <file.jsonl> [options]

Measures code search on labelled questions: the repository is indexed once per chunking strategy
(${CHUNK_STRATEGIES.join(', ')}) in temporary projects of the configured database (DATABASE_URL,
or the embedded one) with the configured embedder (EMBEDDINGS_PROVIDER), every question is asked
in every retrieval mode (${MODES.join(', ')}), and recall@1/5/10 and MRR@${MRR_DEPTH} are printed per
strategy and mode, with a keyword baseline (BM25 over whole files, identifier-split: "files bm25"). A hit is the first file of the answer
(grouped by file, best first) that the
question lists. The temporary projects are removed at the end, also when the run fails.

  --repo       a local git repository to index
  --npm        an npm package spec (e.g. mysql@2.18.1), made into a git repository in a cache
               folder under ${os.tmpdir()}
  --questions  JSON Lines, one {"q": "...", "files": ["path", ...]} per line (required); a
               question may add "lines": {"path": [[start, end], ...]}, the lines that answer,
               and the first snippet of a right file is then scored against them
  --ref        the branch, tag or commit to index (default: HEAD)
  --strategy   only this chunking strategy; repeat for several (default: all)
  --mode       only this retrieval mode; repeat for several (default: all)
  --exclude    a gitignore pattern kept out of the index, e.g. '*.md'; repeat for several
  --neutral    a gitignore pattern of files scored as neither right nor wrong (dropped from the
               answer before ranking), e.g. '*.md' for documentation no question lists
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
        json: { type: 'string' },
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
    if (!repo === !npm) throw badInput('give exactly one of --repo and --npm');
    if (!values.questions?.trim()) throw badInput('--questions is required');
    if (values.json !== undefined && !values.json.trim()) throw badInput('--json needs a file name');
    if (values.ref !== undefined && !values.ref.trim()) throw badInput('--ref needs a branch, tag or commit');
    return {
      repo,
      npm,
      questions: values.questions.trim(),
      ref: values.ref?.trim() || 'HEAD',
      strategies: pick(values.strategy, CHUNK_STRATEGIES, '--strategy'),
      modes: pick(values.mode, MODES, '--mode'),
      exclusions: (values.exclude ?? []).map((pattern) => pattern.trim()).filter(Boolean),
      neutral: (values.neutral ?? []).map((pattern) => pattern.trim()).filter(Boolean),
      json: values.json?.trim(),
    };
  } catch (error) {
    usageError(error instanceof AppError ? error.userMessage : (error as Error).message);
  }
}

const args = parse(process.argv.slice(2));
const questions = loadQuestions(args.questions);
const lineLabels = loadLineLabels(args.questions);

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
    const source = await prepareSource(args, status);
    const embedder = await createEmbedder(config.embeddings);
    const context: EvaluationContext = { prisma, config, logger, embedder, args, source, questions, lineLabels, signal: controller.signal };
    const workspace = await createWorkspace(prisma, {
      repository: source.repository,
      strategies: args.strategies,
      exclusions: args.exclusions,
    });
    const indexes: IndexFigures[] = [];
    const runs: RunFigures[] = [];
    try {
      for (const strategy of args.strategies) {
        const result = await evaluateStrategy(context, {
          projectId: workspace.projects.get(strategy)!,
          strategy,
          baseline: indexes.length === 0,
        });
        indexes.push(result.index);
        runs.push(...result.runs);
      }
    } finally {
      status.status(`removing the temporary projects of ${workspace.group.fullPath}…`);
      await removeWorkspace(prisma, workspace.group);
    }
    if (args.json) writeJson(args.json, { context, indexes, runs });
    process.stdout.write(report({ context, indexes, runs }));
    return undefined;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
});

import { parseArgs } from 'node:util';
import { AppError, badInput, notFound } from '../errors';
import { indexRepository, type IndexProgress, type IndexRunResult } from '../indexing/index-repository';
import { createEmbedder } from '../llm/embedders/create-embedder';
import { formatCount, ProgressBar } from '../progress-bar';
import { runCommand } from './run-command';

// npm run index -- --project group/name [--ref main] [--force]
// Indexes one branch now, in this process, the way the index worker would, with a progress bar on
// stderr. stdout gets one JSON line with the outcome, like the other commands.
const USAGE = `Usage: npm run index -- --project <group/name> [--ref <branch>] [--force]

Indexes a branch of a project's repository now, in this process, with the configured embedder
(EMBEDDINGS_PROVIDER) and database (DATABASE_URL, or the embedded one: through the running
service when there is one). Search keeps serving the previous index until the new one is complete.

  --project  the project's full path, e.g. gitlab-org/gitlab (required)
  --ref      the branch to index (default: the project's default branch)
  --force    a new snapshot of the whole tree, even if nothing changed since the last run (files already
             cut and embedded by the same chunker and embedder are reused: they are content-addressed)`;

function parse(argv: string[]): { project: string; ref: string | undefined; force: boolean } {
  try {
    const { values } = parseArgs({
      args: argv,
      options: { project: { type: 'string' }, ref: { type: 'string' }, force: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (!values.project?.trim()) throw badInput('--project is required');
    if (values.ref !== undefined && !values.ref.trim()) throw badInput('--ref needs a branch name');
    return { project: values.project.trim(), ref: values.ref?.trim(), force: values.force ?? false };
  } catch (error) {
    process.stderr.write(`error: ${error instanceof AppError ? error.userMessage : (error as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(2)} MB`;

function describeSkipped(skipped: Partial<Record<string, number>>): string {
  const entries = Object.entries(skipped).filter(([, count]) => count);
  if (!entries.length) return 'none';
  return entries
    .sort(([, a], [, b]) => b! - a!)
    .map(([reason, count]) => `${reason} ${formatCount(count!)}`)
    .join(', ');
}

/** The human summary, for stderr: the JSON line on stdout carries the same figures. */
function summary(options: { target: string; result: IndexRunResult; durationMs: number }): string {
  const { result, target } = options;
  if (result.outcome === 'dropped') return `${target}: the branch no longer exists in the repository, so its index was dropped.\n`;
  const rows: Array<[string, string]> = [
    [
      'mode',
      result.outcome === 'unchanged' ? 'unchanged (already indexed at this commit; use --force to rebuild)' : (result.mode ?? 'full'),
    ],
    ['commit', result.commitSha],
    ['files', formatCount(result.files)],
    ['chunks', formatCount(result.chunks)],
    ['newly embedded', formatCount(result.chunksEmbedded)],
    ['files read', formatCount(result.filesRead)],
    ['skipped', describeSkipped(result.skipped)],
    ['read', megabytes(result.bytesRead)],
    ['duration', seconds(options.durationMs)],
  ];
  const title = result.outcome === 'unchanged' ? `${target} is up to date` : `Indexed ${target}`;
  return `${title}\n${rows.map(([label, value]) => `  ${label.padEnd(15)} ${value}`).join('\n')}\n`;
}

const args = parse(process.argv.slice(2));

void runCommand(async ({ config, database, logger }) => {
  const { prisma } = database;
  const project = await prisma.project.findUnique({
    where: { fullPath: args.project },
    select: { id: true, fullPath: true, repositoryUrl: true, defaultBranch: true },
  });
  if (!project) throw notFound(`Project ${args.project} not found`);
  if (!project.repositoryUrl?.trim())
    throw badInput(`Project ${project.fullPath} has no repository configured, so there is nothing to index.`);
  const ref = args.ref ?? project.defaultBranch;
  const target = `${project.fullPath}@${ref}`;
  const embedder = await createEmbedder(config.embeddings);

  const bar = new ProgressBar({ stream: process.stderr, unit: 'files' });
  const controller = new AbortController();
  // The run stops between batches; the unfinished snapshot was never visible and is removed by the next run.
  const interrupt = () =>
    controller.abort(new AppError({ code: 'INTERNAL', userMessage: 'Indexing was interrupted; search keeps the previous index.' }));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const onProgress = (progress: IndexProgress) => {
    // 'done' repeats the last batch's counts; the summary follows at once.
    if (progress.phase === 'done') return;
    const label = `${progress.mode ?? 'full'} index`;
    bar.update({ label, done: progress.filesDone, total: progress.filesTotal, detail: `${formatCount(progress.chunks)} chunks` });
    if (progress.phase === 'indexing' && progress.filesDone >= progress.filesTotal) bar.status(`${target}: activating the new index…`);
  };

  const started = performance.now();
  let result: IndexRunResult;
  bar.status(`${target}: reading the repository…`);
  try {
    result = await indexRepository({
      prisma,
      embedder,
      logger,
      dataDir: config.dataDir,
      gitlab: config.gitlab,
      projectId: project.id,
      ref,
      force: args.force,
      maxFileBytes: config.indexing.maxFileBytes,
      onProgress,
      signal: controller.signal,
    });
  } finally {
    bar.clear();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
  const durationMs = Math.round(performance.now() - started);
  process.stderr.write(summary({ target, result, durationMs }));
  if (result.outcome === 'dropped') return { project: project.fullPath, ref, outcome: 'dropped', duration_ms: durationMs };
  return {
    project: project.fullPath,
    ref,
    outcome: result.outcome,
    mode: result.mode,
    commit_sha: result.commitSha,
    files: result.files,
    chunks: result.chunks,
    chunks_embedded: result.chunksEmbedded,
    files_read: result.filesRead,
    skipped: result.skipped,
    bytes_read: result.bytesRead,
    duration_ms: durationMs,
  };
});

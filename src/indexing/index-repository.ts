import { createHash } from 'node:crypto';
import type { CodeIndex, CodeIndexSnapshot, PrismaClient, Project } from '../db/prisma';
import { AppError } from '../errors';
import type { Embedder } from '../llm/embedders/embedder';
import type { Logger } from '../logger';
import { grammarForFileName } from '../parsing';
import {
  addFiles,
  blobsAtPaths,
  ChunksCollectedError,
  collectGarbage,
  copyFiles,
  ensureVectorIndex,
  knownBlobVariants,
  knownChunkIds,
  promoteToVectorGraph,
  snapshotCounts,
  storeBatch,
  VECTOR_GRAPH_MIN_CHUNKS,
  vectorGraphState,
  type BlobChunkRow,
  type BlobVariant,
  type FileRow,
  type NewChunk,
} from '../db/code-chunks';
import { vectorBinary } from '../db/pg-binary';
import { chunkEmbedSpec, type EmbeddedChunk } from './chunk-embed';
import { chunkerVersionOf, type ChunkStrategy } from './chunk-file';
import { inProcessChunker, type FileChunker } from './chunk-pool';
import { dropCodeIndex } from './code-index.service';
import { createFileFilter, type FileFilter, type SkipReason } from './file-filter';
import { selectFiles } from './select-files';
import {
  BlobReader,
  changedEntries,
  isAncestor,
  listFiles,
  resolveBranchFirst,
  validateRef,
  withSizes,
  type GitOptions,
  type TreeEntry,
  type TreePath,
} from './git-reader';
import { fileRole } from './file-role';
import { openRepository, RepositoryUnavailableError, type GitLabRepositoryAccess } from './repository-location';
import { chunkEmbeddingText } from './search-text';

/** Bump when the file filter's rules change: every index rebuilds to apply them. */
// filter-v2: manifests record each file's role (file-role.ts).
const FILTER_VERSION = 'filter-v2';

/** How far a run has come, for progress bars and the index's counters. */
export type IndexProgress = {
  phase: 'planning' | 'indexing' | 'activating' | 'done';
  mode: 'full' | 'incremental' | null;
  /** Files to go through in this run (the changed ones when incremental). */
  filesTotal: number;
  filesDone: number;
  /** Chunks of the files gone through (stored before or now), and how many needed a new embedding. */
  chunks: number;
  embedded: number;
  bytesRead: number;
};

export type IndexRepositoryOptions = {
  prisma: PrismaClient;
  embedder: Embedder;
  logger: Logger;
  /** Clones of remote repositories go under here. */
  dataDir: string;
  /** Connected mode: remote repositories are read from this GitLab only, with its service token. Default none. */
  gitlab?: GitLabRepositoryAccess | null;
  projectId: number;
  ref: string;
  /** Rebuild everything even if an incremental run would do. Default false. */
  force?: boolean;
  /** The push deleted the branch: drop its index. Default false. */
  deleted?: boolean;
  /** Default 1,000,000. */
  maxFileBytes?: number;
  /** How files are cut. Default tree-sitter; the others are for evaluation. */
  chunkStrategy?: ChunkStrategy;
  /** Files read, chunked and embedded together. Default 200. */
  batchFiles?: number;
  /**
   * Source bytes a batch holds at most (one larger file is a batch of its own). Default 8 MiB: a
   * pipelined run holds the batch being written and the next one read, whatever their files' sizes.
   */
  batchBytes?: number;
  /** Where files are chunked and (lexically) embedded: a worker-thread pool in the service. Default: this thread. */
  chunker?: FileChunker;
  /**
   * Read and chunk the next batch while this one is written. Default true. The service turns it off
   * on the embedded database, one session that every request waits on: a chunk thread working beside
   * it takes a core from the database's thread (re-measured with PGlite in its own thread: about 5 %
   * faster runs for a longer tail of request latency; docs/performance.md).
   */
  pipeline?: boolean;
  /** New chunks written per transaction. Default 64 (the service passes INDEX_TRANSACTION_CHUNKS). */
  transactionChunks?: number;
  onProgress?: (progress: IndexProgress) => void;
  signal?: AbortSignal;
  /** The project's vectors join the HNSW graph from this many chunks on. Default VECTOR_GRAPH_MIN_CHUNKS; 0 puts them there at once. */
  vectorGraphMinChunks?: number;
};

export type IndexRunResult =
  | { outcome: 'dropped' }
  | {
      outcome: 'indexed' | 'unchanged';
      mode: 'full' | 'incremental' | null;
      commitSha: string;
      files: number;
      chunks: number;
      /** Files whose blobs were read in this run. */
      filesRead: number;
      /** Chunks embedded in this run (the rest were already stored under their content hash). */
      chunksEmbedded: number;
      skipped: Partial<Record<SkipReason, number>>;
      bytesRead: number;
    };

type Selected = TreeEntry & { variant: string; language: string | null };

function variantOf(path: string, chunkerVersion: string, embedder: Embedder): { variant: string; language: string | null } {
  const language = grammarForFileName(path);
  return { variant: `${chunkerVersion}|${embedder.version}|${language ?? ''}`, language };
}

function settingsDigest(options: { exclusions: readonly string[]; maxFileBytes: number }): string {
  return createHash('sha256')
    .update(JSON.stringify([FILTER_VERSION, options.maxFileBytes, [...options.exclusions]]))
    .digest('hex')
    .slice(0, 16);
}

async function readText(reader: BlobReader, blob: string): Promise<string | null> {
  const [read] = await reader.read([blob]);
  return read?.content?.toString('utf8') ?? null;
}

/**
 * Indexes one ref of a project: plans a full or incremental run, reads, filters, chunks and embeds
 * only what the project does not have yet, writes a new snapshot beside the active one and makes it
 * active in one transaction. Until then search keeps serving the previous complete snapshot.
 */
export async function indexRepository(options: IndexRepositoryOptions): Promise<IndexRunResult> {
  const { prisma, projectId, ref } = options;
  validateRef(ref);
  if (options.deleted) {
    await dropCodeIndex(prisma, { projectId, ref });
    await collectGarbage(prisma, projectId);
    return { outcome: 'dropped' };
  }
  const project = await prisma.project.findUnique({ where: { id: projectId } });
  if (!project) throw new AppError({ code: 'NOT_FOUND', userMessage: `project ${projectId} does not exist` });
  const where = { projectId_ref: { projectId, ref } };
  const index = await prisma.codeIndex.upsert({
    where,
    create: { projectId, ref, state: 'indexing', startedAt: new Date() },
    // files_total is the new run's once it has listed its files (buildSnapshot): until then nobody reads the last run's as this one's.
    update: { state: 'indexing', startedAt: new Date(), lastError: null, filesTotal: null },
  });
  try {
    const git = await openRepository({ projectId, repositoryUrl: project.repositoryUrl, dataDir: options.dataDir, gitlab: options.gitlab });
    // One cat-file process answers the run's ref, ancestry and blobs (BlobReader says why).
    const reader = new BlobReader(git);
    try {
      return await indexCommit(options, { index, project, git, reader });
    } finally {
      reader.close();
    }
  } catch (error) {
    const message =
      error instanceof AppError ? error.userMessage : 'Indexing failed unexpectedly; it will be retried. See the worker log for details.';
    await prisma.codeIndex.updateMany({ where: { projectId, ref }, data: { state: 'failed', lastError: message, finishedAt: new Date() } });
    throw error;
  }
}

/** An index run once its repository is open: the ref, the plan, the new snapshot and its activation. */
async function indexCommit(
  options: IndexRepositoryOptions,
  run: { index: CodeIndex; project: Project; git: GitOptions; reader: BlobReader },
): Promise<IndexRunResult> {
  const { prisma, projectId, ref } = options;
  const { index, project, git, reader } = run;
  const where = { projectId_ref: { projectId, ref } };
  const commit = await resolveBranchFirst(reader, ref);
  if (!commit) {
    if (index.activeSnapshotId !== null) {
      // The branch was indexed and is gone: it was deleted (a fetch prunes it from a remote's mirror).
      await dropCodeIndex(prisma, { projectId, ref });
      await collectGarbage(prisma, projectId);
      return { outcome: 'dropped' };
    }
    throw new RepositoryUnavailableError(`The branch "${ref}" does not exist in the project's repository.`);
  }
  const maxFileBytes = options.maxFileBytes ?? 1_000_000;
  const settings = settingsDigest({ exclusions: project.contextExclusions, maxFileBytes });
  const active =
    index.activeSnapshotId === null ? null : await prisma.codeIndexSnapshot.findUnique({ where: { id: index.activeSnapshotId } });
  const chunkerVersion = chunkerVersionOf(options.chunkStrategy);
  const sameSettings =
    active !== null &&
    active.chunkerVersion === chunkerVersion &&
    active.embedderVersion === options.embedder.version &&
    active.settingsDigest === settings;
  if (sameSettings && !options.force && active.commitSha === commit) {
    const counts = await snapshotCounts(prisma, { projectId, snapshotId: active.id });
    await prisma.codeIndex.update({
      where,
      data: {
        state: 'ready',
        finishedAt: new Date(),
        filesIndexed: counts.files,
        chunkCount: counts.chunks,
        embeddedCount: counts.embedded,
      },
    });
    return {
      outcome: 'unchanged',
      mode: null,
      commitSha: commit,
      files: counts.files,
      chunks: counts.chunks,
      filesRead: 0,
      chunksEmbedded: 0,
      skipped: {},
      bytesRead: 0,
    };
  }
  // A run that died left its snapshot unfinished: it was never visible, so it just goes.
  const unfinished = await prisma.codeIndexSnapshot.deleteMany({ where: { indexId: index.id, complete: false } });
  await ensureVectorIndex(prisma, options.embedder.dimensions);
  const snapshot = await prisma.codeIndexSnapshot.create({
    data: { indexId: index.id, commitSha: commit, chunkerVersion, embedderVersion: options.embedder.version, settingsDigest: settings },
  });
  const result = await buildSnapshot({
    ...options,
    git,
    blobs: reader,
    commit,
    snapshot,
    active: sameSettings && !options.force ? active : null,
    exclusions: project.contextExclusions,
    maxFileBytes,
  });
  const counts = await activateSnapshot(prisma, { indexId: index.id, projectId, snapshot });
  options.onProgress?.({ ...result.progress, phase: 'done' });
  // What this run replaced is all an incremental run can have left unreferenced when the project
  // had no garbage before it: its active snapshot covered the project (read before this run's
  // writes cleared the mark; a run that died before its collection never set it) and no dead
  // run's chunks are about. Otherwise, and after a full run, the whole project is looked at. So
  // the covers_project mark the collection sets stays true to its word.
  const only = unfinished.count === 0 && active?.coversProject === true ? (result.replaced ?? undefined) : undefined;
  await collectGarbage(prisma, projectId, { only });
  await placeVectors(options, null);
  return {
    outcome: 'indexed',
    mode: result.progress.mode,
    commitSha: commit,
    files: counts.files,
    chunks: counts.chunks,
    filesRead: result.filesRead,
    chunksEmbedded: result.progress.embedded,
    skipped: result.skipped,
    bytesRead: result.progress.bytesRead,
  };
}

type BuildOptions = IndexRepositoryOptions & {
  git: GitOptions;
  /** The run's cat-file process. */
  blobs: BlobReader;
  commit: string;
  snapshot: CodeIndexSnapshot;
  /** The active snapshot to build on incrementally, or null for a full build. */
  active: CodeIndexSnapshot | null;
  exclusions: readonly string[];
  maxFileBytes: number;
};

/**
 * The files the run reads, with their sizes, and the tree's `.gitattributes`. A full run (no
 * snapshot to build on, history rewritten, or the attributes changed) lists every file with its
 * size; an incremental one copies the unchanged files' rows from the active snapshot and sizes only
 * the added and modified files, which one `git diff --raw` names with their blobs (withSizes says
 * why sizes are read apart). Its ancestry and attributes come through the run's cat-file process:
 * each git process started from the service's costs 20–30 ms of the event loop here.
 */
async function planFiles(options: BuildOptions): Promise<{
  mode: 'full' | 'incremental';
  attributes: TreePath | null;
  candidates: TreeEntry[];
  /** What the active snapshot's changed paths pointed at (incremental runs): the only garbage the run can make. */
  replaced: BlobVariant[] | null;
}> {
  const { active, git, commit } = options;
  const full = async () => {
    const tree = await listFiles(git, commit);
    return { mode: 'full' as const, attributes: tree.find((entry) => entry.path === ATTRIBUTES) ?? null, candidates: tree, replaced: null };
  };
  if (!active) return full();
  // Walked through the run's cat-file process; only a long or shallow history needs merge-base,
  // with the changes read beside it.
  const reachable = await options.blobs.reachable(active.commitSha, commit);
  if (reachable === false) return full();
  const changesRead = changedEntries(git, active.commitSha, commit);
  changesRead.catch(() => undefined); // awaited below unless history was rewritten
  if (reachable === null && !(await isAncestor(git, active.commitSha, commit))) return full();
  const changes = await changesRead;
  // Attributes decide which files are vendored or generated: when they change, look at every file again.
  if (changes.some((change) => change.path === ATTRIBUTES)) return full();
  const paths = changes.map((change) => change.path);
  const [candidates, replaced, attributes] = await Promise.all([
    withSizes(
      git,
      changes.flatMap((change) => (change.entry ? [change.entry] : [])),
    ),
    blobsAtPaths(options.prisma, { snapshotId: active.id, paths }),
    options.blobs.rootFile(commit, ATTRIBUTES),
    copyFiles(options.prisma, { from: active.id, to: options.snapshot.id, exceptPaths: paths }),
  ]);
  return { mode: 'incremental', attributes, candidates, replaced };
}

const ATTRIBUTES = '.gitattributes';

/** What building a snapshot did; `replaced` as planFiles says (null after a full run). */
type BuildResult = {
  progress: IndexProgress;
  filesRead: number;
  skipped: Partial<Record<SkipReason, number>>;
  replaced: BlobVariant[] | null;
};

async function buildSnapshot(options: BuildOptions): Promise<BuildResult> {
  const { prisma, embedder, projectId } = options;
  const snapshotId = options.snapshot.id;
  const { mode, attributes, candidates, replaced } = await planFiles(options);
  const filter = createFileFilter({
    maxBytes: options.maxFileBytes,
    exclusions: options.exclusions,
    gitattributes: attributes ? await readText(options.blobs, attributes.blob) : null,
  });
  const skipped: Partial<Record<SkipReason, number>> = {};
  const skip = (reason: SkipReason) => (skipped[reason] = (skipped[reason] ?? 0) + 1);
  const selected = await selectFiles(candidates, filter, (path) => variantOf(path, options.snapshot.chunkerVersion, embedder), skip);
  await placeVectors(options, { mode, bytes: selected.reduce((sum, file) => sum + file.size, 0) });
  const progress: IndexProgress = {
    phase: 'indexing',
    mode,
    filesTotal: selected.length,
    filesDone: 0,
    chunks: 0,
    embedded: 0,
    bytesRead: 0,
  };
  await prisma.codeIndex.update({ where: { id: options.snapshot.indexId }, data: { filesTotal: selected.length, filesIndexed: 0 } });
  options.onProgress?.(progress);
  let filesRead = 0;
  const batchFiles = options.batchFiles ?? 200;
  const pipeline = options.pipeline ?? true;
  const batches: Selected[][] = [];
  // Pipelined, the database waits for the first batch to be read and chunked: the first batches are
  // small (FIRST_BATCH_FILES, then twice as many each time up to batchFiles), and large files come
  // last, so its writes start soon. No stored row changes: the paths of one blob have one size, so
  // they keep their order, and the first of them is still the one whose chunks are cut.
  const ordered = pipeline
    ? [...selected.filter((file) => file.size <= LARGE_FILE_BYTES), ...selected.filter((file) => file.size > LARGE_FILE_BYTES)]
    : selected;
  const batchBytes = options.batchBytes ?? BATCH_BYTES;
  for (let start = 0, size = pipeline ? Math.min(batchFiles, FIRST_BATCH_FILES) : batchFiles; start < ordered.length;) {
    let end = start + 1;
    for (let bytes = ordered[start].size; end < ordered.length && end - start < size && bytes + ordered[end].size <= batchBytes; end += 1)
      bytes += ordered[end].size;
    batches.push(ordered.slice(start, end));
    start = end;
    size = Math.min(batchFiles, size * 2);
  }
  // Blob variants (cut one way) that an earlier batch of this run chunks, claimed when that batch is
  // planned, and their chunk counts once it is chunked. That batch is stored before any later one
  // is, so a later batch lists their paths as it lists those of blobs an earlier run stored.
  const claimedInRun = new Set<string>();
  const chunkedInRun = new Map<string, number>();
  const plan = async (batch: Selected[]): Promise<PlannedBatch> => {
    const known = await knownBlobVariants(
      prisma,
      projectId,
      batch.filter((file) => !claimedInRun.has(keyOf(file))),
    );
    const isStored = (file: Selected) => claimedInRun.has(keyOf(file)) || known.has(keyOf(file));
    const reuse = batch.filter(isStored);
    const fresh = batch.filter((file) => !isStored(file));
    const read = await readFreshFiles({ ...options, filter, files: fresh, skip });
    for (const file of read.toChunk) claimedInRun.add(keyOf(file));
    const chunking = chunkReadFiles(options, read);
    // Awaited later; until then a failure must not count as unhandled.
    chunking.catch(() => undefined);
    return { batch, reuse, known, fresh, chunking };
  };
  // A planned batch is awaited in a later turn of the loop, or never when the run ends first (an
  // abort, a failed write): its failure (the run's blob reader closed under it) must not count as
  // unhandled, which would end the process.
  const planned = (batch: Selected[]) => {
    const promise = plan(batch);
    promise.catch(() => undefined);
    return promise;
  };
  // Pipelined, a batch is planned (its stored blobs looked up, its files read, its chunking handed to
  // the threads) as soon as the one before it is, not once that one is chunked: the threads find the
  // next batch's files queued when they finish one, instead of waiting for git and the look-up after
  // it (rxjs: 1.66 → 1.79 MB/s, docs/performance.md). A look-up may run beside an earlier batch's
  // writes, on another connection: it leaves out the claimed blobs, so it needs not see them. Only
  // the batch being written and the next one are held.
  let next: Promise<PlannedBatch> | null = batches.length ? planned(batches[0]) : null;
  for (let position = 0; next; position += 1) {
    options.signal?.throwIfAborted();
    const current: PlannedBatch = await next;
    const planFollowing = position + 1 < batches.length ? () => planned(batches[position + 1]) : null;
    next = pipeline ? (planFollowing?.() ?? null) : null;
    const chunked = await current.chunking;
    for (const group of chunked.groups) chunkedInRun.set(group.key, group.blobChunks.length);
    // A stored blob another branch's run collected since the look-up is read and chunked again here.
    const lost = new Set((await addFiles(prisma, { projectId, snapshotId, files: current.reuse.map(toFileRow) })).map((file) => file.path));
    const stored = await storeChunkedFiles({ ...options, chunked });
    if (lost.size) {
      const again = current.reuse.filter((file) => lost.has(file.path));
      const rechunked = await chunkReadFiles(options, await readFreshFiles({ ...options, filter, files: again, skip }));
      for (const group of rechunked.groups) chunkedInRun.set(group.key, group.blobChunks.length);
      const restored = await storeChunkedFiles({ ...options, chunked: rechunked });
      stored.embedded += restored.embedded;
      filesRead += again.length;
      progress.bytesRead += rechunked.bytes;
      options.logger.info({ event: 'index_blobs_collected_meanwhile', projectId, files: again.length }, 'stored blobs read again');
    }
    filesRead += current.fresh.length;
    progress.filesDone += current.batch.length;
    const storedChunks = (file: Selected) => chunkedInRun.get(keyOf(file)) ?? current.known.get(keyOf(file)) ?? 0;
    progress.chunks += stored.chunks + current.reuse.reduce((sum, file) => sum + storedChunks(file), 0);
    progress.embedded += stored.embedded;
    progress.bytesRead += chunked.bytes;
    await prisma.codeIndex.update({
      where: { id: options.snapshot.indexId },
      data: { filesIndexed: progress.filesDone, chunkCount: progress.chunks, embeddedCount: progress.embedded },
    });
    options.onProgress?.({ ...progress });
    if (!pipeline) next = planFollowing?.() ?? null;
  }
  return { progress, filesRead, skipped, replaced };
}

/** Source bytes per chunk, for the estimate placeVectors makes before a run writes (rxjs: 760; fewer chunks than real is safe). */
const BYTES_PER_CHUNK = 1_000;

/**
 * A project that holds, or is about to hold, vectorGraphMinChunks chunks keeps its vectors in the
 * HNSW graph (VECTOR_GRAPH_MIN_CHUNKS says why smaller ones do not). Checked before a run writes, with
 * the chunks its files will make estimated from their size, so that the first index of a large
 * repository writes each vector once; and after the run (incoming null), with the chunks counted.
 * A full run's files replace what its ref had (garbage collection drops the rest): about as many
 * chunks as the larger of the two, where an incremental run's add to what is stored.
 */
async function placeVectors(
  options: IndexRepositoryOptions,
  incoming: { mode: 'full' | 'incremental'; bytes: number } | null,
): Promise<void> {
  const { prisma, projectId } = options;
  const threshold = options.vectorGraphMinChunks ?? VECTOR_GRAPH_MIN_CHUNKS;
  const state = await vectorGraphState(prisma, projectId);
  const added = incoming ? incoming.bytes / BYTES_PER_CHUNK : 0;
  const expected = incoming?.mode === 'full' ? Math.max(state.chunks, added) : state.chunks + added;
  if (state.graph || expected < threshold) return;
  if (await promoteToVectorGraph(prisma, projectId))
    options.logger.info({ event: 'vector_graph_joined', projectId, chunks: state.chunks }, "the project's vectors joined the HNSW graph");
}

/** The first batch of a pipelined run, and the files it writes last (see buildSnapshot). */
const FIRST_BATCH_FILES = 25;
const BATCH_BYTES = 8 * 2 ** 20;
const LARGE_FILE_BYTES = 65_536;

const keyOf = (file: Pick<Selected, 'blob' | 'variant'>) => `${file.blob}|${file.variant}`;

const toFileRow = (file: Selected): FileRow => ({ path: file.path, blob: file.blob, variant: file.variant, role: fileRole(file.path) });

/**
 * A batch of files: those whose chunks are stored (by an earlier run, or by an earlier batch before
 * this one is written), the chunk counts an earlier run stored, and the chunking of the others.
 */
type PlannedBatch = {
  batch: Selected[];
  reuse: Selected[];
  known: ReadonlyMap<string, number>;
  fresh: Selected[];
  chunking: Promise<ChunkedFiles>;
};

/** Fresh files read, filtered and chunked: what storeChunkedFiles writes. */
type ChunkedFiles = {
  /** The files that passed the content filter (manifest lines to write). */
  indexed: Selected[];
  groups: WriteGroup[];
  /** Each distinct chunk of the batch once, by id. */
  chunksById: Map<string, EmbeddedChunk>;
  bytes: number;
};

/** Fresh files read and filtered: the first file of each blob variant to chunk, with its text. */
type ReadFiles = {
  /** The files that passed the content filter (manifest lines to write). */
  indexed: Selected[];
  toChunk: Array<Selected & { text: string }>;
  bytes: number;
};

/**
 * Reads and filters by content the files whose blobs the project has not chunked yet. No database
 * statement: it runs while an earlier batch is being written.
 */
async function readFreshFiles(
  options: BuildOptions & { blobs: BlobReader; filter: FileFilter; files: Selected[]; skip: (reason: SkipReason) => void },
): Promise<ReadFiles> {
  const { files } = options;
  if (!files.length) return { indexed: [], toChunk: [], bytes: 0 };
  const blobs = [...new Set(files.map((file) => file.blob))];
  const contents = new Map<string, Buffer | null>();
  let bytes = 0;
  for (const { blob, content } of await options.blobs.read(blobs)) {
    contents.set(blob, content);
    bytes += content?.length ?? 0;
  }
  const indexed: Selected[] = [];
  // The first file of each (blob, variant): the others share its chunks.
  const toChunk: ReadFiles['toChunk'] = [];
  const seenVariants = new Set<string>();
  for (const file of files) {
    const content = contents.get(file.blob);
    if (!content) continue;
    // Decoded once: the filter reads the text, and the chunker gets it.
    const text = content.toString('utf8');
    const reason = options.filter.byContent(content, text);
    if (reason) {
      options.skip(reason);
      continue;
    }
    indexed.push(file);
    const key = keyOf(file);
    if (seenVariants.has(key)) continue;
    seenVariants.add(key);
    toChunk.push({ ...file, text });
  }
  return { indexed, toChunk, bytes };
}

/** Chunks and (lexically) embeds read files: the CPU-bound part, in a worker thread (chunk-pool.ts). */
async function chunkReadFiles(options: BuildOptions, read: ReadFiles): Promise<ChunkedFiles> {
  const { indexed, toChunk, bytes } = read;
  const chunksById = new Map<string, EmbeddedChunk>();
  if (!toChunk.length) return { indexed, groups: [], chunksById, bytes };
  const chunker = options.chunker ?? inProcessChunker;
  const texts = toChunk.map((file) => ({ path: file.path, content: file.text }));
  const chunked = await chunker.chunkAndEmbed(texts, chunkEmbedSpec(options.embedder, options.chunkStrategy), { signal: options.signal });
  const groups: WriteGroup[] = [];
  toChunk.forEach((file, position) => {
    const blobChunks: BlobChunkRow[] = [];
    const ids: string[] = [];
    chunked[position].forEach((chunk, seq) => {
      if (!chunksById.has(chunk.id)) {
        chunksById.set(chunk.id, chunk);
        ids.push(chunk.id);
      }
      blobChunks.push({
        blob: file.blob,
        variant: file.variant,
        seq,
        chunkId: chunk.id,
        startLine: chunk.startLine,
        endLine: chunk.endLine,
        kind: chunk.kind,
        symbol: chunk.symbol,
        language: chunk.language,
      });
    });
    groups.push({ key: keyOf(file), ids, blobChunks });
  });
  return { indexed, groups, chunksById, bytes };
}

/** Embeds (with a model) the chunks of a chunked batch the project lacks, and stores them with the blobs' rows and manifest lines. */
async function storeChunkedFiles(options: BuildOptions & { chunked: ChunkedFiles }): Promise<{ chunks: number; embedded: number }> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await storeChunkedFilesOnce(options);
    } catch (error) {
      // A chunk looked up as stored was collected (another branch's run) before the batch took the lock: look again.
      if (!(error instanceof ChunksCollectedError) || attempt >= STORE_ATTEMPTS) throw error;
    }
  }
}

/** Times a batch is stored again when chunks it counted on were collected meanwhile (each time, a run on another branch replaced them). */
const STORE_ATTEMPTS = 3;

async function storeChunkedFilesOnce(options: BuildOptions & { chunked: ChunkedFiles }): Promise<{ chunks: number; embedded: number }> {
  const { prisma, embedder, projectId } = options;
  const { groups, chunksById, indexed } = options.chunked;
  if (!groups.length && !indexed.length) return { chunks: 0, embedded: 0 };
  const existing = await knownChunkIds(prisma, projectId, [...chunksById.keys()]);
  const missing = [...chunksById.values()].filter((chunk) => !existing.has(chunk.id));
  // Vectors the chunker could not make (a model's): embedded here, only for chunks the project lacks.
  const unembedded = missing.filter((chunk) => chunk.vector === null);
  // Sizes of the vectors made here; the chunker's (lexical) ones have the embedder's.
  const dims = new Map<string, number>();
  if (unembedded.length) {
    const vectors = await embedder.embed(
      unembedded.map((chunk) => chunkEmbeddingText(chunk)),
      { signal: options.signal },
    );
    unembedded.forEach((chunk, position) => {
      chunk.vector = vectorBinary(vectors[position]);
      dims.set(chunk.id, vectors[position].length);
    });
  }
  const newChunks = new Map<string, NewChunk>(
    missing.map((chunk) => [
      chunk.id,
      {
        id: chunk.id,
        embedderVersion: embedder.version,
        dims: dims.get(chunk.id) ?? embedder.dimensions,
        vector: chunk.vector!,
        content: chunk.content,
        searchDocument: chunk.searchDocument,
      },
    ]),
  );
  await storeGroups(prisma, {
    projectId,
    snapshotId: options.snapshot.id,
    groups,
    newChunks,
    files: indexed,
    maxChunks: options.transactionChunks ?? DEFAULT_TRANSACTION_CHUNKS,
    signal: options.signal,
  });
  return { chunks: groups.reduce((sum, group) => sum + group.blobChunks.length, 0), embedded: newChunks.size };
}

/** The chunks a blob cut one way brings: its rows, and the chunk ids it is the first in the batch to use. */
type WriteGroup = { key: string; ids: string[]; blobChunks: BlobChunkRow[] };

/**
 * Chunks per write transaction. Each transaction holds the project's lock, and the embedded
 * database is one session (PGlite, in its own thread): every request waits for the transaction in
 * progress. Short transactions keep both waits short.
 */
const DEFAULT_TRANSACTION_CHUNKS = 64;

/**
 * Writes a batch in short transactions: each one a few blobs' new chunks, their rows and the
 * manifest lines that use them, so what one commits is complete on its own (garbage collection
 * never sees a chunk without the blob rows that reference it, nor rows without a manifest line).
 */
async function storeGroups(
  prisma: PrismaClient,
  options: {
    projectId: number;
    snapshotId: bigint;
    groups: readonly WriteGroup[];
    newChunks: ReadonlyMap<string, NewChunk>;
    files: readonly Selected[];
    maxChunks: number;
    signal?: AbortSignal;
  },
): Promise<void> {
  const filesByKey = new Map<string, FileRow[]>();
  for (const file of options.files) {
    const key = `${file.blob}|${file.variant}`;
    filesByKey.set(key, [...(filesByKey.get(key) ?? []), toFileRow(file)]);
  }
  let chunks: NewChunk[] = [];
  let blobChunks: BlobChunkRow[] = [];
  let files: FileRow[] = [];
  const flush = async () => {
    if (!files.length && !blobChunks.length && !chunks.length) return;
    options.signal?.throwIfAborted();
    await storeBatch(prisma, { projectId: options.projectId, snapshotId: options.snapshotId, chunks, blobChunks, files });
    chunks = [];
    blobChunks = [];
    files = [];
    // Lets waiting requests run between two transactions.
    await new Promise((resolve) => setImmediate(resolve));
  };
  for (const group of options.groups) {
    const fresh = group.ids.map((id) => options.newChunks.get(id)).filter((chunk): chunk is NewChunk => chunk !== undefined);
    if (chunks.length && chunks.length + fresh.length > options.maxChunks) await flush();
    chunks.push(...fresh);
    blobChunks.push(...group.blobChunks);
    files.push(...(filesByKey.get(group.key) ?? []));
  }
  await flush();
}

/** Makes a complete snapshot the one search reads and drops the older ones, in one transaction. */
export async function activateSnapshot(prisma: PrismaClient, options: { indexId: number; projectId: number; snapshot: CodeIndexSnapshot }) {
  const counts = await snapshotCounts(prisma, { projectId: options.projectId, snapshotId: options.snapshot.id });
  await prisma.$transaction([
    prisma.codeIndexSnapshot.update({ where: { id: options.snapshot.id }, data: { complete: true } }),
    prisma.codeIndex.update({
      where: { id: options.indexId },
      data: {
        activeSnapshotId: options.snapshot.id,
        commitSha: options.snapshot.commitSha,
        state: 'ready',
        lastError: null,
        finishedAt: new Date(),
        filesIndexed: counts.files,
        chunkCount: counts.chunks,
        embeddedCount: counts.embedded,
      },
    }),
    prisma.codeIndexSnapshot.deleteMany({ where: { indexId: options.indexId, id: { not: options.snapshot.id } } }),
  ]);
  return counts;
}

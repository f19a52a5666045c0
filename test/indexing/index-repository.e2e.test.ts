import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PrismaClient } from '../../src/db/prisma';
import { snapshotFiles } from '../../src/db/code-chunks';
import { inProcessChunker, type FileChunker } from '../../src/indexing/chunk-pool';
import { indexRepository, type IndexRepositoryOptions, type IndexRunResult } from '../../src/indexing/index-repository';
import type { Embedder } from '../../src/llm/embedders/embedder';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { createLogger } from '../../src/logger';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { unique } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';

/** The lexical embedder, counting what it is asked to embed (and able to fail on demand). */
class CountingEmbedder implements Embedder {
  readonly name = 'lexical';
  readonly inner: LexicalEmbedder;
  texts: string[] = [];
  failAfter: number | null = null;
  constructor(readonly version = 'lexical-v1-512') {
    this.inner = new LexicalEmbedder({ dimensions: 512 });
  }
  get dimensions() {
    return this.inner.dimensions;
  }
  async embed(texts: readonly string[]) {
    if (this.failAfter !== null && this.texts.length + texts.length > this.failAfter) throw new Error('embedding provider went away');
    this.texts.push(...texts);
    return this.inner.embed(texts);
  }
}

describe('indexRepository (real git, PostgreSQL and pgvector)', () => {
  let database: TestDatabase;
  let prisma: PrismaClient;
  let dataDir: string;
  let groupPath: string;
  const logger = createLogger('silent');
  const repos: GitRepo[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-index-'));
    groupPath = (await createGroup(prisma, { path: unique('group'), plan: 'ultimate' })).fullPath;
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
    for (const repo of repos) repo.destroy();
  });

  async function setup(files: Record<string, string | Buffer> = SAMPLE_FILES, exclusions: string[] = []) {
    const repo = createGitRepo(files);
    repos.push(repo);
    const { project } = await createProject(prisma, { fullPath: `${groupPath}/${unique('p')}`, repository: repo.path });
    if (exclusions.length) await prisma.project.update({ where: { id: project.id }, data: { contextExclusions: exclusions } });
    const embedder = new CountingEmbedder();
    const run = (options: Partial<IndexRepositoryOptions> = {}) =>
      indexRepository({ prisma, embedder, logger, dataDir, projectId: project.id, ref: 'main', ...options }) as Promise<
        Extract<IndexRunResult, { outcome: 'indexed' | 'unchanged' }>
      >;
    const manifest = async (ref = 'main') => {
      const index = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref } } });
      return snapshotFiles(prisma, index.activeSnapshotId!);
    };
    const symbols = async (ref = 'main') => {
      const index = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref } } });
      const rows = await prisma.$queryRawUnsafe<Array<{ path: string; symbol: string | null }>>(
        `SELECT f.path, b.symbol FROM code_index_files f JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND
        b.variant = f.variant
          JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id WHERE f.snapshot_id = $1::bigint ORDER BY f.path, b.seq`,
        index.activeSnapshotId,
      );
      return rows.map((row) => `${row.path}#${row.symbol ?? ''}`);
    };
    return { repo, project, embedder, run, manifest, symbols };
  }

  /** Rows nothing references any more (garbage), and chunks a live manifest line needs but lacks (over-collection). */
  async function integrity(projectId: number) {
    const [row] = await prisma.$queryRawUnsafe<Array<{ blobChunks: bigint; chunks: bigint; missing: bigint }>>(
      `SELECT (SELECT count(*) FROM code_blob_chunks b WHERE b.project_id = $1 AND NOT EXISTS
              (SELECT 1 FROM code_index_files f WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant = b.variant)) AS "blobChunks",
            (SELECT count(*) FROM code_chunks c WHERE c.project_id = $1 AND NOT EXISTS
              (SELECT 1 FROM code_blob_chunks b WHERE b.project_id = $1 AND b.chunk_id = c.id)) AS chunks,
            (SELECT count(*) FROM code_index_files f
               JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
               LEFT JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
              WHERE f.project_id = $1 AND c.id IS NULL) AS missing`,
      projectId,
    );
    return { unreferencedBlobChunks: Number(row.blobChunks), unreferencedChunks: Number(row.chunks), missingChunks: Number(row.missing) };
  }

  it('indexes a repository fully the first time: chunks with symbols, vectors and counts', async () => {
    const { project, run, symbols, embedder } = await setup();
    const result = await run();
    expect(result).toMatchObject({ outcome: 'indexed', mode: 'full', files: 4 });
    expect(result.chunks).toBeGreaterThanOrEqual(4);
    expect(embedder.texts.length).toBe(result.chunksEmbedded);
    // Small neighbours merge into one module chunk; a lone class keeps its name.
    expect(await symbols()).toEqual(
      expect.arrayContaining(['src/connection.ts#', 'src/retry.py#', 'lib/invoice.rb#InvoiceMailer', 'docs/guide.md#']),
    );
    const index = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
    expect(index).toMatchObject({
      state: 'ready',
      filesIndexed: 4,
      chunkCount: result.chunks,
      embeddedCount: result.chunks,
      filesTotal: 4,
      lastError: null,
    });
    expect(index.finishedAt!.getTime()).toBeGreaterThanOrEqual(index.startedAt!.getTime());
    const [vector] = await prisma.$queryRawUnsafe<Array<{ dims: number; embedder_version: string }>>(
      'SELECT dims, embedder_version FROM code_chunks WHERE project_id = $1 LIMIT 1',
      project.id,
    );
    expect(vector).toEqual({ dims: 512, embedder_version: 'lexical-v1-512' });
  });

  it('writes the same index whether the next batch is chunked while one is written or after, with copies across batches', async () => {
    // The same blob under several paths, in different batches of one file each, and an empty file.
    const files = {
      ...SAMPLE_FILES,
      'a/copy.ts': SAMPLE_FILES['src/connection.ts'],
      'z/copy.ts': SAMPLE_FILES['src/connection.ts'],
      'empty.ts': '',
    };
    const outcomes = [];
    for (const pipeline of [true, false]) {
      const { run, manifest, symbols, embedder } = await setup(files);
      const result = await run({ batchFiles: 1, pipeline });
      outcomes.push({
        result: { ...result, commitSha: null },
        manifest: [...(await manifest())],
        symbols: await symbols(),
        embedded: embedder.texts.length,
      });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(outcomes[0].result).toMatchObject({ outcome: 'indexed', mode: 'full', files: 7 });
    expect(outcomes[0].symbols.filter((symbol) => symbol.endsWith('copy.ts#'))).toHaveLength(2);
  });

  it('cuts batches by their source bytes too (one larger file alone), and writes the same index', async () => {
    const outcomes = [];
    for (const batchBytes of [undefined, 60]) {
      const { run, manifest, symbols } = await setup();
      const calls: number[] = [];
      const chunker: FileChunker = {
        chunkAndEmbed: (files, spec) => {
          calls.push(files.length);
          return inProcessChunker.chunkAndEmbed(files, spec);
        },
      };
      const result = await run({ batchBytes, chunker });
      outcomes.push({ result: { ...result, commitSha: null }, manifest: [...(await manifest())], symbols: await symbols(), calls });
    }
    expect(outcomes[0].calls).toEqual([4]);
    // Every sample file is over 60 bytes: a batch each.
    expect(outcomes[1].calls).toEqual([1, 1, 1, 1]);
    expect({ ...outcomes[1], calls: null }).toEqual({ ...outcomes[0], calls: null });
  });

  it('pipelined, hands the next batch to the chunker while the one before is still being chunked (not once it is done)', async () => {
    /** A chunker that holds its first call until a second one arrives (at most 1 s), and says whether it did. */
    const holdingChunker = () => {
      let calls = 0;
      let firstDone = false;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const seen = { secondWhileFirstRan: false };
      const chunker: FileChunker = {
        chunkAndEmbed: async (files, spec) => {
          calls += 1;
          const call = calls;
          if (call === 1) await Promise.race([held, new Promise((resolve) => setTimeout(resolve, 1000))]);
          else {
            if (!firstDone) seen.secondWhileFirstRan = true;
            release();
          }
          const chunks = await inProcessChunker.chunkAndEmbed(files, spec);
          if (call === 1) firstDone = true;
          return chunks;
        },
      };
      return { chunker, seen };
    };
    for (const pipeline of [true, false]) {
      const { run } = await setup();
      const { chunker, seen } = holdingChunker();
      const result = await run({ batchFiles: 1, pipeline, chunker });
      expect(result).toMatchObject({ outcome: 'indexed', files: 4 });
      expect(seen.secondWhileFirstRan).toBe(pipeline);
    }
  });

  it('reads only what changed: add, modify, delete and rename, and a second run of the same commit does nothing', async () => {
    const { repo, project, run, manifest, embedder, symbols } = await setup();
    await run();
    const renamed = (await symbols()).filter((entry) => entry.startsWith('lib/invoice.rb#'));
    expect(renamed.length).toBeGreaterThan(0);
    expect(await run()).toMatchObject({ outcome: 'unchanged', filesRead: 0 });
    embedder.texts = [];
    repo.write(
      'src/new-feature.ts',
      'export function computeInvoiceTotal(lines: number[]): number {\n  return lines.reduce((sum, line) => sum + line, 0);\n}\n',
    );
    repo.write('src/retry.py', SAMPLE_FILES['src/retry.py'].replace('base_delay=0.5', 'base_delay=1.5'));
    repo.remove('docs/guide.md');
    repo.write('lib/billing/invoice_mailer.rb', SAMPLE_FILES['lib/invoice.rb']);
    repo.remove('lib/invoice.rb');
    repo.commit('several changes');
    const result = await run();
    // The rename keeps its blob: it is neither read nor embedded again.
    expect(result).toMatchObject({ outcome: 'indexed', mode: 'incremental', filesRead: 2, files: 4 });
    expect(embedder.texts.join('\n')).toContain('computeInvoiceTotal');
    expect(embedder.texts.join('\n')).not.toContain('InvoiceMailer');
    expect(embedder.texts.join('\n')).not.toContain('ConnectionPool');
    const files = await manifest();
    expect([...files.keys()].sort()).toEqual(['lib/billing/invoice_mailer.rb', 'src/connection.ts', 'src/new-feature.ts', 'src/retry.py']);
    // Chunks of the deleted and the old version of the modified file are gone from the project.
    const stale = await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(
      "SELECT count(*) AS n FROM code_chunks WHERE project_id = $1 AND (content LIKE '%MAILER_HOST%' OR content LIKE '%base_delay=0.5%')",
      project.id,
    );
    expect(Number(stale[0].n)).toBe(0);
    // The renamed file's blob was at a path that went: a candidate for collection, still used by the new path.
    expect((await symbols()).filter((entry) => entry.startsWith('lib/billing/invoice_mailer.rb#'))).toEqual(
      renamed.map((entry) => entry.replace('lib/invoice.rb#', 'lib/billing/invoice_mailer.rb#')),
    );
    // Collected by looking at what the run replaced only: nothing left over, nothing a live line needs taken.
    expect(await integrity(project.id)).toEqual({ unreferencedBlobChunks: 0, unreferencedChunks: 0, missingChunks: 0 });
  });

  it('keeps a chunk the replaced file shared with a file that stays (chunks are content-addressed)', async () => {
    const body = (name: string, factor: number) =>
      `export function ${name}(values: number[]): number {\n` +
      Array.from({ length: 14 }, (_, line) => `  const step${line} = values.length * ${factor} + ${line};\n`).join('') +
      `  return values.reduce((sum, value) => sum + value * step13, 0);\n}\n`;
    const shared = body('sharedWeightedSum', 3);
    const { repo, project, run, symbols } = await setup({
      'src/one.ts': `${shared}\n${body('oneOnly', 5)}`,
      'src/two.ts': `${shared}\n${body('twoOnly', 7)}`,
    });
    await run();
    const [sharedChunk] = await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(
      `SELECT count(DISTINCT b.blob) AS n FROM code_blob_chunks b WHERE b.project_id = $1 AND b.symbol = 'sharedWeightedSum'
         AND b.chunk_id IN (SELECT chunk_id FROM code_blob_chunks WHERE project_id = $1 GROUP BY chunk_id HAVING count(DISTINCT blob) = 2)`,
      project.id,
    );
    expect(Number(sharedChunk.n)).toBe(2); // one chunk, in both files' blobs
    repo.write('src/one.ts', `${shared}\n${body('oneOnly', 11)}`);
    repo.commit('one.ts changes beside the shared function');
    expect(await run()).toMatchObject({ outcome: 'indexed', mode: 'incremental' });
    expect((await symbols()).filter((entry) => entry.endsWith('#sharedWeightedSum'))).toEqual([
      'src/one.ts#sharedWeightedSum',
      'src/two.ts#sharedWeightedSum',
    ]);
    expect(await integrity(project.id)).toEqual({ unreferencedBlobChunks: 0, unreferencedChunks: 0, missingChunks: 0 });
  });

  it('looks at the whole project after a run whose snapshot never got the covers_project mark (it died before collecting)', async () => {
    const { repo, project, run } = await setup();
    await run();
    // Garbage such a run leaves: a chunk nothing references, and an active snapshot without the mark.
    await prisma.$executeRawUnsafe(
      `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
       SELECT project_id, 'left-by-a-dead-run', embedder_version, dims, embedding, content, search_text FROM code_chunks
        WHERE project_id = $1 LIMIT 1`,
      project.id,
    );
    await prisma.$executeRawUnsafe(
      `UPDATE code_index_snapshots SET covers_project = false
        WHERE id IN (SELECT active_snapshot_id FROM code_indexes WHERE project_id = $1)`,
      project.id,
    );
    expect(await integrity(project.id)).toMatchObject({ unreferencedChunks: 1 });
    repo.write('src/new-feature.ts', 'export function applyDiscount(total: number): number {\n  return total * 0.9;\n}\n');
    repo.commit('a push');
    expect(await run()).toMatchObject({ outcome: 'indexed', mode: 'incremental' });
    expect(await integrity(project.id)).toEqual({ unreferencedBlobChunks: 0, unreferencedChunks: 0, missingChunks: 0 });
  });

  it("collects a dead run's chunks at the next incremental run, and keeps a replaced file's chunks another path still uses", async () => {
    const { repo, project, run, manifest, embedder, symbols } = await setup();
    await run();
    const moved = (await symbols()).filter((entry) => entry.startsWith('src/connection.ts#'));
    expect(moved.length).toBeGreaterThan(0);
    for (let index = 0; index < 12; index += 1)
      repo.write(`src/doomed_${index}.ts`, `export function doomed${index}(input: number) {\n  return input - ${index};\n}\n`);
    repo.commit('files a dead run writes');
    embedder.failAfter = embedder.texts.length + 6;
    await expect(run({ batchFiles: 3 })).rejects.toThrow('embedding provider went away');
    embedder.failAfter = null;
    // The next commit drops those files again, and moves connection.ts to a new path under a copy.
    for (let index = 0; index < 12; index += 1) repo.remove(`src/doomed_${index}.ts`);
    repo.write('lib/connection-copy.ts', SAMPLE_FILES['src/connection.ts']);
    repo.remove('src/connection.ts');
    repo.commit('dropped again');
    const result = await run();
    expect(result).toMatchObject({ outcome: 'indexed', mode: 'incremental' });
    expect((await manifest()).has('lib/connection-copy.ts')).toBe(true);
    // The blob at the path that went is a candidate, and the copy still needs every one of its chunks.
    expect((await symbols()).filter((entry) => entry.startsWith('lib/connection-copy.ts#'))).toEqual(
      moved.map((entry) => entry.replace('src/connection.ts#', 'lib/connection-copy.ts#')),
    );
    expect(await integrity(project.id)).toEqual({ unreferencedBlobChunks: 0, unreferencedChunks: 0, missingChunks: 0 });
  });

  it('sizes the files an incremental run reads: a changed file over the limit is skipped, a small one indexed', async () => {
    const { repo, run, manifest, embedder } = await setup();
    await run({ maxFileBytes: 4_000 });
    embedder.texts = [];
    const big = `export function hugeTable(): number[] {\n  return [${Array.from({ length: 900 }, (_, index) => index).join(', ')}];\n}\n`;
    expect(big.length).toBeGreaterThan(4_000);
    repo.write('src/huge-table.ts', big);
    repo.write('src/small-helper.ts', 'export function formatCents(cents: number): string {\n  return (cents / 100).toFixed(2);\n}\n');
    repo.commit('one file too large, one small');
    const result = await run({ maxFileBytes: 4_000 });
    expect(result).toMatchObject({ outcome: 'indexed', mode: 'incremental', filesRead: 1, skipped: { too_large: 1 } });
    expect(embedder.texts.join('\n')).toContain('formatCents');
    expect(embedder.texts.join('\n')).not.toContain('hugeTable');
    const files = await manifest();
    expect(files.has('src/small-helper.ts')).toBe(true);
    expect(files.has('src/huge-table.ts')).toBe(false);
  });

  it('rebuilds fully after a force-push and drops what the rewritten history no longer has', async () => {
    const { repo, run, manifest } = await setup();
    repo.write('src/experiment.ts', 'export const experiment = true;\n');
    repo.commit('experiment');
    await run();
    repo.git('reset', '-q', '--hard', 'HEAD~1');
    repo.write('src/other.ts', 'export const other = 1;\n');
    repo.commit('rewritten');
    const result = await run();
    expect(result.mode).toBe('full');
    // Unchanged blobs are still not read again: their chunks are stored under their content.
    expect(result.filesRead).toBe(1);
    expect([...(await manifest()).keys()]).not.toContain('src/experiment.ts');
    expect([...(await manifest()).keys()]).toContain('src/other.ts');
  });

  it('indexes a new branch without embedding anything it shares with main, and drops a deleted branch', async () => {
    const { repo, project, run, manifest, embedder } = await setup();
    // Whether main's snapshot is marked as holding every chunk of the project (search then skips its scope check).
    const mainCovers = async () => {
      const index = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
      return (await prisma.codeIndexSnapshot.findUniqueOrThrow({ where: { id: index.activeSnapshotId! } })).coversProject;
    };
    await run();
    expect(await mainCovers()).toBe(true);
    embedder.texts = [];
    repo.git('checkout', '-q', '-b', 'feature/login');
    repo.write('src/login.ts', 'export function login(user: string) {\n  return user.length > 0;\n}\n');
    repo.commit('login');
    const branch = await run({ ref: 'feature/login' });
    expect(branch).toMatchObject({ mode: 'full', files: 5, filesRead: 1 });
    expect(embedder.texts).toHaveLength(branch.chunksEmbedded);
    expect(embedder.texts.join('\n')).toContain('login');
    expect([...(await manifest('main')).keys()]).not.toContain('src/login.ts');
    // The branch stored a chunk main's snapshot lacks.
    expect(await mainCovers()).toBe(false);
    repo.git('checkout', '-q', 'main');
    repo.git('branch', '-q', '-D', 'feature/login');
    expect(await run({ ref: 'feature/login', deleted: true })).toEqual({ outcome: 'dropped' });
    expect(await prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId: project.id, ref: 'feature/login' } } })).toBeNull();
    const orphans = await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(
      "SELECT count(*) AS n FROM code_chunks WHERE project_id = $1 AND content LIKE '%function login%'",
      project.id,
    );
    expect(Number(orphans[0].n)).toBe(0);
    expect((await manifest('main')).size).toBe(4);
    // Dropped and collected: main's snapshot holds every chunk left again.
    expect(await mainCovers()).toBe(true);
  });

  it('skips exclusions, vendored, generated, lockfiles, binaries and minified files, in an incremental run too', async () => {
    const minified = `var a=${'x'.repeat(5000)};`;
    const { repo, run, manifest } = await setup(
      {
        ...SAMPLE_FILES,
        'secrets/keys.ts': 'export const key = "do not index";\n',
        'node_modules/dep/index.js': 'module.exports = 1;\n',
        'package-lock.json': '{}\n',
        'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]),
        'data/blob.dat': Buffer.from([1, 2, 0, 4, 5]),
        'public/app.js': minified,
        'gen/api.ts': 'export const generated = 1;\n',
        '.gitattributes': 'gen/** linguist-generated\n',
      },
      ['secrets/'],
    );
    const result = await run();
    expect(result.skipped).toMatchObject({ excluded: 1, vendored: 1, lockfile: 1, binary: 2, minified: 1, generated: 1 });
    expect([...(await manifest()).keys()].sort()).toEqual([
      '.gitattributes',
      'docs/guide.md',
      'lib/invoice.rb',
      'src/connection.ts',
      'src/retry.py',
    ]);
    // The next push leaves the attributes as they are: the incremental run still reads them.
    repo.write('gen/more.ts', 'export const alsoGenerated = 2;\n');
    repo.write('src/new.ts', 'export const written = 3;\n');
    repo.commit('more');
    const next = await run();
    expect(next).toMatchObject({ mode: 'incremental', filesRead: 1, skipped: { generated: 1 } });
    expect([...(await manifest()).keys()].sort()).toEqual([
      '.gitattributes',
      'docs/guide.md',
      'lib/invoice.rb',
      'src/connection.ts',
      'src/new.ts',
      'src/retry.py',
    ]);
  });

  it('keeps serving the previous complete index when a run dies midway, and the next run finishes the job', async () => {
    const { repo, project, run, manifest, embedder } = await setup();
    await run();
    const before = await manifest();
    const many: Record<string, string> = {};
    for (let index = 0; index < 30; index += 1)
      many[`src/generated_${index}.ts`] = `export function handler${index}(input: number) {\n  return input * ${index};\n}\n`;
    for (const [file, content] of Object.entries(many)) repo.write(file, content);
    const next = repo.commit('many files');
    embedder.failAfter = embedder.texts.length + 10;
    await expect(run({ batchFiles: 5 })).rejects.toThrow('embedding provider went away');
    const failed = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
    expect(failed.state).toBe('failed');
    expect(failed.lastError).toMatch(/retried/);
    expect(failed.commitSha).not.toBe(next);
    expect(await manifest()).toEqual(before);
    embedder.failAfter = null;
    const result = await run({ batchFiles: 5 });
    expect(result).toMatchObject({ outcome: 'indexed', commitSha: next, files: 34 });
    expect(await prisma.codeIndexSnapshot.count({ where: { index: { projectId: project.id } } })).toBe(1);
  });

  it('ends an aborted run with the abort, and the batch it had started planning fails nowhere unhandled', async () => {
    const { project, run } = await setup();
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const controller = new AbortController();
      // Aborted at the first progress report: the first batch is being planned (read through the
      // run's blob reader), and the reader is closed as the run ends.
      const aborted = run({ batchFiles: 1, signal: controller.signal, onProgress: () => controller.abort() });
      await expect(aborted).rejects.toThrow(/abort/i);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
    const index = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
    expect(index).toMatchObject({ state: 'failed', activeSnapshotId: null });
    await expect(run()).resolves.toMatchObject({ outcome: 'indexed' });
  });

  it('re-embeds everything into a new snapshot when the embedder changes, serving the old one until then', async () => {
    const { project, run } = await setup();
    await run();
    const other = new CountingEmbedder('lexical-v1-512-b');
    const result = await run({ embedder: other });
    expect(result).toMatchObject({ mode: 'full', chunksEmbedded: result.chunks });
    const versions = await prisma.$queryRawUnsafe<Array<{ embedder_version: string }>>(
      'SELECT DISTINCT embedder_version FROM code_chunks WHERE project_id = $1',
      project.id,
    );
    expect(versions).toEqual([{ embedder_version: 'lexical-v1-512-b' }]);
  });

  it('fails with a message the user can act on when the repository cannot be read', async () => {
    const { project, run, repo } = await setup();
    await prisma.project.update({ where: { id: project.id }, data: { repositoryUrl: path.join(repo.path, 'missing') } });
    await expect(run()).rejects.toThrow();
    const index = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
    expect(index.state).toBe('failed');
    expect(index.lastError).toMatch(/does not exist or is not a directory/);
    await prisma.project.update({ where: { id: project.id }, data: { repositoryUrl: repo.path } });
    await expect(run({ ref: 'no-such-branch' })).rejects.toThrow(/does not exist/);
  });

  it('clones an http(s) remote into a cache and fetches it again on the next run', async () => {
    const { project, run, repo } = await setup();
    // git's dumb http protocol served by a tiny static server is enough for clone and fetch.
    repo.git('update-server-info');
    const { createServer } = await import('node:http');
    const { readFile } = await import('node:fs/promises');
    const server = createServer(async (request, response) => {
      try {
        response.end(await readFile(path.join(repo.path, '.git', decodeURIComponent(new URL(request.url!, 'http://x').pathname))));
      } catch {
        response.statusCode = 404;
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address() as { port: number };
      await prisma.project.update({ where: { id: project.id }, data: { repositoryUrl: `http://127.0.0.1:${address.port}/` } });
      expect(await run()).toMatchObject({ outcome: 'indexed', files: 4 });
      repo.write('src/added.ts', 'export const added = 1;\n');
      const next = repo.commit('added');
      repo.git('update-server-info');
      expect(await run()).toMatchObject({ outcome: 'indexed', mode: 'incremental', commitSha: next, filesRead: 1 });
    } finally {
      server.close();
    }
  });

  it("counts and collects a project the statistics do not know yet by hash joins, not loops over the other side's rows", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 150 }, (_, index) => [
        `src/module${index}.ts`,
        `export function first${index}(value: number): number {\n  return value + ${index};\n}\n\n` +
          `export function second${index}(text: string): string {\n  return text.repeat(${index});\n}\n`,
      ]),
    );
    // Statistics taken while the code tables held another project's rows: the new one is estimated at a row or two.
    expect(await (await setup(files)).run()).toMatchObject({ outcome: 'indexed' });
    await prisma.$executeRawUnsafe('ANALYZE code_index_files, code_blob_chunks, code_chunks, code_chunk_vectors');
    const fresh = await setup(files);
    const sent: Array<{ text: string; values: unknown[] }> = [];
    const query = pg.Client.prototype.query;
    const spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string; values?: unknown[] };
      sent.push(
        typeof config === 'string'
          ? { text: config, values: (args[1] as unknown[]) ?? [] }
          : { text: config.text, values: config.values ?? [] },
      );
      return (query as (...rest: unknown[]) => unknown).apply(this, args);
    });
    try {
      expect(await fresh.run()).toMatchObject({ outcome: 'indexed', mode: 'full' });
    } finally {
      spy.mockRestore();
    }
    // Each whole-project statement, explained after what the run sent before it in its transaction.
    const wholeProject = [
      'SELECT (SELECT count(*) FROM code_index_files',
      'DELETE FROM code_blob_chunks b WHERE',
      'DELETE FROM code_chunks c WHERE',
    ];
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      for (const start of wholeProject) {
        const at = sent.findIndex((statement) => statement.text.trimStart().startsWith(start));
        expect(at).toBeGreaterThan(0);
        const transaction = sent.slice(sent.slice(0, at).findLastIndex((statement) => /^BEGIN/i.test(statement.text)) + 1, at);
        const explain = async (settings: typeof transaction) => {
          await client.query('BEGIN');
          try {
            for (const setting of settings.filter((statement) => /^SET LOCAL/i.test(statement.text))) await client.query(setting.text);
            const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sent[at].text}`, sent[at].values);
            return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
          } finally {
            await client.query('ROLLBACK');
          }
        };
        // The state is the one where plans go wrong: planned alone, the statement nests loops.
        expect(await explain([])).toMatch(/Nested Loop/);
        expect(await explain(transaction)).not.toMatch(/Nested Loop/);
      }
    } finally {
      await client.end();
    }
  });
});

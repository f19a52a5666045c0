import { PrismaPg } from '@prisma/adapter-pg';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PrismaClient } from '../../src/db/prisma';
import { inProcessChunker, type FileChunker } from '../../src/indexing/chunk-pool';
import { indexRepository, type IndexRepositoryOptions } from '../../src/indexing/index-repository';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { createLogger } from '../../src/logger';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { unique } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { filesWithoutChunks } from '../helpers/index-integrity';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';
import { waitUntil } from '../helpers/wait';

/** A chunker that holds the files it is given until released, when one of them is `path`. */
function gatedChunker(path: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const gate = { held: false, release };
  const chunker: FileChunker = {
    chunkAndEmbed: async (files, spec, options) => {
      if (files.some((file) => file.path === path)) {
        gate.held = true;
        await released;
      }
      return inProcessChunker.chunkAndEmbed(files, spec, options);
    },
  };
  return { chunker, gate };
}

// Two index runs of one project at once (INDEX_CONCURRENCY > 1, or two workers): one branch's
// collection must never take what the other's run is about to point its manifest at.
describe('index runs of two branches at once', () => {
  let database: TestDatabase;
  let prisma: PrismaClient;
  let dataDir: string;
  let groupPath: string;
  let repo: GitRepo;
  const logger = createLogger('silent');
  const embedder = new LexicalEmbedder({ dimensions: 512 });

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-runs-'));
    groupPath = (await createGroup(prisma, { path: unique('group'), plan: 'ultimate' })).fullPath;
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
    repo?.destroy();
  });

  it("keeps a file's chunks when another branch's run collects the blob the file reuses", async () => {
    repo = createGitRepo(SAMPLE_FILES);
    const { project } = await createProject(prisma, { fullPath: `${groupPath}/${unique('p')}`, repository: repo.path });
    const run = (ref: string, options: Partial<IndexRepositoryOptions> = {}) =>
      indexRepository({ prisma, embedder, logger, dataDir, projectId: project.id, ref, ...options });
    await run('main');
    // Branch x: main's files (stored: reused) and one of its own (chunked: the run waits there).
    repo.git('checkout', '-q', '-b', 'x');
    repo.write('src/x-only.ts', 'export function onlyOnBranchX(): number {\n  return 42;\n}\n');
    repo.commit('x');
    // main changes src/connection.ts: its run drops the old blob, which nothing else points at yet.
    repo.git('checkout', '-q', 'main');
    repo.write('src/connection.ts', 'export function parseConnection(url: string): URL {\n  return new URL(url);\n}\n');
    repo.commit('main changes a file x reuses');

    const { chunker, gate } = gatedChunker('src/x-only.ts');
    const branchX = run('x', { chunker });
    await waitUntil(() => gate.held, { what: "x's run to chunk its own file" });
    // x has planned its batch: src/connection.ts's old blob is reused. main's run activates and collects.
    await run('main');
    gate.release();
    await expect(branchX).resolves.toMatchObject({ outcome: 'indexed' });

    expect(await filesWithoutChunks(prisma, project.id)).toEqual([]);
    const x = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'x' } } });
    expect(x.state).toBe('ready');
    const connection = await prisma.$queryRawUnsafe<Array<{ content: string }>>(
      `SELECT c.content FROM code_index_files f
         JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
         JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
        WHERE f.snapshot_id = $1::bigint AND f.path = 'src/connection.ts'`,
      x.activeSnapshotId,
    );
    expect(connection.map((row) => row.content).join('\n')).toContain('postgres://user@host:5432/db');
  });

  it('refuses a manifest line whose blob is not stored, and a blob row whose chunk is not', async () => {
    const { project } = await createProject(prisma, { fullPath: `${groupPath}/${unique('p')}`, repository: repo.path });
    const index = await prisma.codeIndex.create({ data: { projectId: project.id, ref: 'main' } });
    const snapshot = await prisma.codeIndexSnapshot.create({
      data: { indexId: index.id, commitSha: 'a'.repeat(40), chunkerVersion: 'v', embedderVersion: 'e', settingsDigest: 'd' },
    });
    await expect(
      prisma.codeIndexFile.create({ data: { snapshotId: snapshot.id, path: 'a.ts', blob: 'gone', variant: 'v', projectId: project.id } }),
    ).rejects.toThrow(/code_index_files_blob_fkey|Foreign key/i);
    await prisma.codeBlob.create({ data: { projectId: project.id, blob: 'kept', variant: 'v' } });
    await expect(
      prisma.codeBlobChunk.create({
        data: { projectId: project.id, blob: 'kept', variant: 'v', seq: 0, chunkId: 'gone', startLine: 1, endLine: 1, kind: 'lines' },
      }),
    ).rejects.toThrow(/code_blob_chunks_chunk_fkey|Foreign key/i);
  });
});

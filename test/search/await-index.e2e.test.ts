import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, type Project } from '../../src/db/prisma';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { awaitIndex, type IndexRunProgress } from '../../src/search/await-index';
import { unique } from '../helpers/fixtures';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';

// The bounded wait for a ref's first index, against a real database: the rows a run writes are
// written here by hand, as a worker in another process would write them.
describe('awaitIndex', () => {
  let database: TestDatabase;
  let prisma: PrismaClient;
  let project: Project;

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
    const group = await createGroup(prisma, { path: unique('group') });
    project = (await createProject(prisma, { fullPath: `${group.fullPath}/${unique('project')}` })).project;
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await database.drop();
  });

  const ref = () => unique('ref');
  const setRun = (branch: string, data: { state: 'pending' | 'indexing' | 'failed'; filesIndexed?: number; filesTotal?: number | null }) =>
    prisma.codeIndex.upsert({
      where: { projectId_ref: { projectId: project.id, ref: branch } },
      create: { projectId: project.id, ref: branch, ...data },
      update: data,
    });
  const activate = async (branch: string) => {
    const index = await prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: branch } } });
    const snapshot = await prisma.codeIndexSnapshot.create({
      data: {
        indexId: index.id,
        commitSha: 'a'.repeat(40),
        chunkerVersion: 'c',
        embedderVersion: 'e',
        settingsDigest: 's',
        complete: true,
      },
    });
    await prisma.codeIndex.update({ where: { id: index.id }, data: { state: 'ready', activeSnapshotId: snapshot.id } });
  };

  it('reports the progress as it changes and returns the index once it is searchable', async () => {
    const branch = ref();
    await setRun(branch, { state: 'pending' });
    const seen: IndexRunProgress[] = [];
    const waiting = awaitIndex({
      prisma,
      projectId: project.id,
      ref: branch,
      timeoutMs: 20_000,
      pollMs: 50,
      onProgress: (p) => void seen.push(p),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await setRun(branch, { state: 'indexing', filesIndexed: 0, filesTotal: 40 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await setRun(branch, { state: 'indexing', filesIndexed: 20, filesTotal: 40 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await activate(branch);
    const result = await waiting;
    expect(result.outcome).toBe('ready');
    expect(seen).toEqual([
      { state: 'pending', filesIndexed: 0, filesTotal: null },
      { state: 'indexing', filesIndexed: 0, filesTotal: 40 },
      { state: 'indexing', filesIndexed: 20, filesTotal: 40 },
    ]);
  });

  it('gives up at once on a run too large to end in time, with how far it is and how long it would take', async () => {
    const branch = ref();
    await setRun(branch, { state: 'indexing', filesIndexed: 100, filesTotal: 50_000 });
    const started = Date.now();
    const result = await awaitIndex({ prisma, projectId: project.id, ref: branch, timeoutMs: 30_000, filesPerSecond: 50 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toEqual({
      outcome: 'too_slow',
      progress: { state: 'indexing', filesIndexed: 100, filesTotal: 50_000 },
      remainingMs: expect.any(Number),
    });
    // 49,900 files at 50 a second: about 1,000 s.
    expect((result as { remainingMs: number }).remainingMs).toBeGreaterThan(900_000);
  });

  it('gives up on a run whose own pace is too slow for the bound', async () => {
    const branch = ref();
    // 300 files fit 30 s at the assumed pace; the run shows 1 file a second.
    await setRun(branch, { state: 'indexing', filesIndexed: 0, filesTotal: 300 });
    const ticking = setInterval(() => {
      // Prisma runs a query only once it is awaited (or then'd).
      void prisma.codeIndex
        .updateMany({ where: { projectId: project.id, ref: branch }, data: { filesIndexed: { increment: 1 } } })
        .then(() => undefined);
    }, 1_000);
    try {
      const started = Date.now();
      const result = await awaitIndex({ prisma, projectId: project.id, ref: branch, timeoutMs: 30_000, pollMs: 100, filesPerSecond: 50 });
      expect(result.outcome).toBe('too_slow');
      // Decided once the pace was measured (5 s and more), long before the bound.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      clearInterval(ticking);
    }
  });

  it('waits for a run that has not listed its files until the bound, and returns a failed run at once', async () => {
    const branch = ref();
    await setRun(branch, { state: 'indexing', filesIndexed: 0, filesTotal: null });
    const started = Date.now();
    const result = await awaitIndex({ prisma, projectId: project.id, ref: branch, timeoutMs: 400, pollMs: 50 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(result).toEqual({ outcome: 'too_slow', progress: { state: 'indexing', filesIndexed: 0, filesTotal: null }, remainingMs: null });
    await setRun(branch, { state: 'failed' });
    expect((await awaitIndex({ prisma, projectId: project.id, ref: branch, timeoutMs: 10_000 })).outcome).toBe('failed');
  });

  it('stops when the answer it waits for is superseded', async () => {
    const branch = ref();
    await setRun(branch, { state: 'pending' });
    const controller = new AbortController();
    const waiting = awaitIndex({ prisma, projectId: project.id, ref: branch, timeoutMs: 20_000, pollMs: 5_000, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    controller.abort();
    expect(await waiting).toEqual({ outcome: 'aborted' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

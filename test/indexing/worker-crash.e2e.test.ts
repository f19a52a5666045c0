import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Project } from '../../src/db/prisma';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { createProject } from '../../src/namespaces/namespaces.service';
import { ABANDONED_RUN_ERROR } from '../../src/indexing/code-index.service';
import { groupWithSeat, unique } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { spawnWorker } from '../helpers/worker-process';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

/** An OpenAI-compatible /v1/embeddings server answering slowly, with lexical vectors. */
async function startSlowEmbeddings(delayMs: number) {
  const lexical = new LexicalEmbedder({ dimensions: 512 });
  let requests = 0;
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', async () => {
      requests += 1;
      const input = JSON.parse(body).input as string[];
      const vectors = await lexical.embed(input);
      setTimeout(() => {
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            object: 'list',
            data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
            model: 'slow',
          }),
        );
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// An index worker process killed in the middle of a run: search keeps the previous complete index,
// another worker takes the job over and finishes it, and nothing of the dead run stays behind.
describe('an index worker killed mid-run', () => {
  let api: TestService;
  let embeddings: Awaited<ReturnType<typeof startSlowEmbeddings>>;
  let env: Record<string, string>;
  let repo: GitRepo;
  let project: Project;
  const workers: ChildProcess[] = [];

  const startWorker = () => {
    const child = spawnWorker(env);
    workers.push(child);
    return child;
  };

  const index = () => api.prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
  const until = <T>(read: () => Promise<T>, predicate: (value: T) => boolean, timeoutMs = 30_000) =>
    waitUntil(read, { until: predicate, timeoutMs });

  beforeAll(async () => {
    embeddings = await startSlowEmbeddings(400);
    const settings = {
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_BASE_URL: embeddings.url,
      EMBEDDINGS_MODEL: 'slow',
      EMBEDDINGS_DIMENSIONS: '512',
      INDEX_DEBOUNCE_MS: '0',
    };
    api = await startTestService({ role: 'api', env: settings });
    env = {
      ...settings,
      DATABASE_URL: api.running.services.config.databaseUrl!,
      REDIS_PREFIX: api.redisPrefix,
      DATA_DIR: api.running.services.config.dataDir,
      LOG_LEVEL: 'warn',
      JOB_LOCK_MS: '1000',
    };
    repo = createGitRepo(SAMPLE_FILES);
    const group = await groupWithSeat(api.prisma, { plan: 'ultimate' });
    project = (await createProject(api.prisma, { fullPath: `${group}/${unique('crash')}`, repository: repo.path })).project;
  });
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await api?.close();
    await embeddings?.close();
    repo?.destroy();
  });

  it('leaves the previous index serving, and the next worker finishes the run', async () => {
    const first = startWorker();
    await api.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api' });
    const ready = await until(index, (row) => row?.state === 'ready');
    const before = { commitSha: ready!.commitSha, snapshot: ready!.activeSnapshotId, files: ready!.filesIndexed };

    // 800 new files: four batches of 200, each waiting 400 ms on the embeddings server.
    for (let file = 0; file < 800; file += 1)
      repo.write(
        `src/generated/module_${file}.ts`,
        `export function handler${file}(value: number): number {\n  return value * ${file} + ${file % 7};\n}\n`,
      );
    const next = repo.commit('many modules');
    await api.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api', commitSha: next });
    await until(index, (row) => row?.state === 'indexing' && row.filesIndexed >= 200);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    // Nothing of the dead run is visible: the same snapshot, the same commit.
    const during = (await index())!;
    expect({ commitSha: during.commitSha, snapshot: during.activeSnapshotId }).toEqual({
      commitSha: before.commitSha,
      snapshot: before.snapshot,
    });
    const visible = await api.prisma.codeIndexFile.count({ where: { snapshotId: before.snapshot! } });
    expect(visible).toBe(before.files);

    startWorker();
    const done = await until(index, (row) => row?.state === 'ready' && row.commitSha === next, 45_000);
    expect(done!.filesIndexed).toBe(before.files + 800);
    expect(await api.prisma.codeIndexSnapshot.count({ where: { indexId: done!.id } })).toBe(1);
    expect(embeddings.requests()).toBeGreaterThan(4);
  }, 90_000);

  it('is marked failed, not indexing forever, when its workers died more often than allowed', async () => {
    // Only this test's workers: the one left from the test before would take the job over.
    for (const worker of workers) worker.kill('SIGKILL');
    const ready = (await index())!;
    for (let file = 0; file < 800; file += 1) repo.write(`src/more/part_${file}.ts`, `export const part${file} = ${file};\n`);
    const next = repo.commit('more modules');
    let worker = startWorker();
    await api.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api', commitSha: next });
    let startedAt = 0;
    for (let death = 0; death < 2; death += 1) {
      // A run of this job in progress (the first, then the one that took it over), a batch in.
      const running = await until(
        index,
        (row) =>
          row?.state === 'indexing' && (row.startedAt?.getTime() ?? 0) > startedAt && row.filesTotal !== null && row.filesIndexed >= 200,
        45_000,
      );
      startedAt = running!.startedAt!.getTime();
      worker.kill('SIGKILL');
      await new Promise((resolve) => worker.once('exit', resolve));
      worker = startWorker();
    }
    const failed = await until(index, (row) => row?.state === 'failed', 45_000);
    expect(failed).toMatchObject({ lastError: ABANDONED_RUN_ERROR, commitSha: ready.commitSha, activeSnapshotId: ready.activeSnapshotId });
    // A later request is a run of its own: it indexes the commit.
    await api.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api', commitSha: next });
    const done = await until(index, (row) => row?.state === 'ready' && row.commitSha === next, 60_000);
    expect(done!.lastError).toBeNull();
  }, 180_000);
});

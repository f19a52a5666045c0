/**
 * @jest-environment ./test/helpers/onnx-test-environment.js
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startTestService, type TestService } from '../helpers/test-service';
import { writeTinyOnnxModel } from '../helpers/tiny-onnx-model';
import { waitForIndex } from '../helpers/wait';

// EMBEDDINGS_PROVIDER=onnx through the whole service: the model loads at start, a worker indexes
// with it (vectors of the model's size get their own HNSW index), and codebaseSearch embeds the
// question with it.
describe('indexing and searching with a local ONNX model', () => {
  let root: string;
  let service: TestService;
  let repo: GitRepo;
  let project: Project;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'onnx-index-'));
    const modelDir = await writeTinyOnnxModel({ directory: path.join(root, 'tiny-bert') });
    service = await startTestService({
      role: 'all',
      env: { EMBEDDINGS_PROVIDER: 'onnx', EMBEDDINGS_MODEL_DIR: modelDir, INDEX_DEBOUNCE_MS: '0' },
    });
    repo = createGitRepo(BILLING_FILES);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    project = (await createProject(service.prisma, { fullPath: `${group}/${unique('onnx')}`, repository: repo.path })).project;
  });
  afterAll(async () => {
    await service?.close();
    repo?.destroy();
    await rm(root, { recursive: true, force: true });
  });

  it('indexes with the model and answers codebaseSearch', async () => {
    await service.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api' });
    await waitForIndex(service.prisma, { projectId: project.id, timeoutMs: 30_000 });
    const vectors = await service.prisma.$queryRawUnsafe<Array<{ embedder_version: string; dims: number }>>(
      'SELECT DISTINCT embedder_version, dims FROM code_chunks WHERE project_id = $1',
      project.id,
    );
    expect(vectors).toEqual([{ embedder_version: expect.stringMatching(/^onnx-tiny-bert-[0-9a-f]{12}-16$/), dims: 16 }]);
    const indexes = await service.prisma.$queryRawUnsafe<Array<{ indexname: string }>>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'code_chunks' AND indexname = 'code_chunks_embedding_16_idx'",
    );
    expect(indexes).toHaveLength(1);

    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    const { body } = await service.graphql<{ codebaseSearch: Array<{ path: string }> }>(
      `query($p: ID!) { codebaseSearch(projectPath: $p, query: "compute vat amount") { path } }`,
      {
        token: user.token,
        variables: { p: project.fullPath },
      },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data!.codebaseSearch[0].path).toBe('src/billing/tax.ts');
  }, 60_000);
});

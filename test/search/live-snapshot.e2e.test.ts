import type { Project } from '../../src/db/prisma';
import { indexRepository } from '../../src/indexing/index-repository';
import { createLogger } from '../../src/logger';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

const SEARCH = `query($path: ID!, $query: String!) { codebaseSearch(projectPath: $path, query: $query) { path } }`;

// A push indexed while a search is under way: the search read the ref's snapshot, then the run
// activated a new one and deleted the old. The search must answer from a whole snapshot, never with
// nothing because the index was replaced under it.
describe('a search while a push is indexed', () => {
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;
  const logger = createLogger('silent');

  const index = () =>
    indexRepository({
      prisma: service.prisma,
      embedder: service.running.services.embedder,
      logger,
      dataDir: service.running.services.config.dataDir,
      projectId: project.id,
      ref: 'main',
    });

  beforeAll(async () => {
    // No workers: the test runs the index runs itself, at the moment it chooses.
    service = await startTestService({ role: 'api' });
    repo = createGitRepo(BILLING_FILES);
    user = await userWithToken(service.prisma);
    const groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (await createProject(service.prisma, { fullPath: `${groupPath}/${unique('code')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    await index();
  });
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  it('answers from the new snapshot when the one it read is replaced before its rankings run', async () => {
    // The question's embedding waits until the push is indexed: its vector ranking then runs after the
    // snapshot it read was deleted. No word of it is in the code, so only the vector ranking answers.
    const embedder = service.running.services.embedder;
    const embed = embedder.embed.bind(embedder);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let asked = false;
    embedder.embed = async (texts, options) => {
      if (texts.some((text) => text.includes('wombat'))) {
        asked = true;
        await released;
      }
      return embed(texts, options);
    };
    try {
      const searching = service.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
        variables: { path: project.fullPath, query: 'wombat zebra' },
        token: user.token,
      });
      await waitUntil(() => asked, { what: 'the search to embed its question' });
      repo.write('src/billing/tax.ts', 'export const VAT_RATE = 21;\n');
      repo.commit('push during a search');
      const before = await service.prisma.codeIndex.findFirstOrThrow({ where: { projectId: project.id } });
      await index();
      const after = await service.prisma.codeIndex.findFirstOrThrow({ where: { projectId: project.id } });
      expect(after.activeSnapshotId).not.toBe(before.activeSnapshotId);
      release();
      const response = await searching;
      expect(response.body.errors).toBeUndefined();
      expect(response.body.data!.codebaseSearch.length).toBeGreaterThan(0);
    } finally {
      release();
      embedder.embed = embed;
    }
  });
});

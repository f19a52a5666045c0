import type { Project } from '../../src/db/prisma';
import { addMember, assignSeat, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';

const SEARCH = `query($path: ID!, $query: String!) { codebaseSearch(projectPath: $path, query: $query) { path content } }`;
const CODE_INDEX = `query($path: ID!) { project(fullPath: $path) { id codeIndex { state commitSha lastError } } }`;
const CHAT = `mutation($question: String!, $additionalContext: [AiAdditionalContextInput!]) {
  aiAction(input: { chat: { content: $question, additionalContext: $additionalContext, skipGatekeeper: true }, platformOrigin:
  "vs_code_extension" }) { requestId errors }
}`;

// Threat: a Guest (or a stranger) reads a private project's code. GitLab's read_code needs
// Reporter (20)+ on private projects, a signed-in user on internal ones; whoever may not read the
// code gets exactly the answer a missing project gets, on every way code leaves the server.
describe('read_code: who may read a project code', () => {
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let internal: Project;
  let groupPath: string;
  let guest: UserWithToken;
  let reporter: UserWithToken;
  let stranger: UserWithToken;

  const search = (path: string, token: string) =>
    service.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, { variables: { path, query: 'compute the vat amount' }, token });
  const semantic = (id: string, token: string) =>
    fetch(`${service.url}/api/v4/projects/${id}/search/semantic?q=${encodeURIComponent('compute the vat amount')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
  const chat = (projectPath: string, token: string) =>
    service.graphql<{ aiAction: { requestId: string } }>(CHAT, {
      token,
      variables: {
        question: 'What does the billing code do?',
        additionalContext: [{ category: 'REPOSITORY', id: projectPath, content: '', metadata: {} }],
      },
    });

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '0' } });
    repo = createGitRepo(BILLING_FILES);
    [guest, reporter, stranger] = await Promise.all([
      userWithToken(service.prisma),
      userWithToken(service.prisma),
      userWithToken(service.prisma),
    ]);
    groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise' });
    for (const user of [guest, reporter, stranger])
      await assignSeat(service.prisma, { groupPath, addOn: 'duo_enterprise', username: user.username });
    project = (
      await createProject(service.prisma, { fullPath: `${groupPath}/${unique('private')}`, repository: repo.path, visibility: 'private' })
    ).project;
    internal = (
      await createProject(service.prisma, { fullPath: `${groupPath}/${unique('internal')}`, repository: repo.path, visibility: 'internal' })
    ).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: guest.username, accessLevel: 'guest' });
    await addMember(service.prisma, { fullPath: project.fullPath, username: reporter.username, accessLevel: 'reporter' });
    // The reporter's first search starts indexing; wait until the index serves.
    const started = Date.now();
    for (;;) {
      const response = await service.graphql<{ project: { codeIndex: { state: string } | null } }>(CODE_INDEX, {
        variables: { path: project.fullPath },
        token: reporter.token,
      });
      if (response.body.data?.project?.codeIndex?.state === 'READY') break;
      if (response.body.data?.project?.codeIndex === null) await search(project.fullPath, reporter.token);
      if (Date.now() - started > 30_000) throw new Error(`index never ready: ${JSON.stringify(response.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  });
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  it('codebaseSearch: a Guest gets what a missing project gets; a Reporter gets code', async () => {
    const asGuest = await search(project.fullPath, guest.token);
    const missing = await search(`${groupPath}/does-not-exist`, guest.token);
    expect(asGuest.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(asGuest.body).toEqual(missing.body);
    const asReporter = await search(project.fullPath, reporter.token);
    expect(asReporter.body.errors).toBeUndefined();
    expect(asReporter.body.data!.codebaseSearch.length).toBeGreaterThan(0);
  });

  it('REST semantic search: a Guest gets the 404 of a missing project; a Reporter gets code', async () => {
    const asGuest = await semantic(String(project.id), guest.token);
    const missing = await semantic('999999', guest.token);
    expect(asGuest.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await readJson(asGuest)).toEqual(await readJson(missing));
    const byPath = await semantic(encodeURIComponent(project.fullPath), guest.token);
    expect(byPath.status).toBe(404);
    const asReporter = await semantic(encodeURIComponent(project.fullPath), reporter.token);
    expect(asReporter.status).toBe(200);
    expect((await readJson(asReporter)).results.length).toBeGreaterThan(0);
  });

  it('REPOSITORY chat context: a Guest is refused like for a missing project, and nothing is stored', async () => {
    const before = await service.prisma.aiMessage.count({ where: { userId: guest.id } });
    const asGuest = await chat(project.fullPath, guest.token);
    const missing = await chat(`${groupPath}/does-not-exist`, guest.token);
    expect(asGuest.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(asGuest.body.errors?.[0]?.message).toBe(missing.body.errors?.[0]?.message);
    expect(await service.prisma.aiMessage.count({ where: { userId: guest.id } })).toBe(before);
    const asReporter = await chat(project.fullPath, reporter.token);
    expect(asReporter.body.errors).toBeUndefined();
  });

  it('DIRECTORY chat context: the same for a Guest, by path and by numeric id', async () => {
    const directory = (projectRef: Record<string, unknown>, token: string) =>
      service.graphql(CHAT, {
        token,
        variables: {
          question: 'What does the billing code do?',
          additionalContext: [{ category: 'DIRECTORY', id: 'src/billing', content: '', metadata: projectRef }],
        },
      });
    const byPath = await directory({ projectPath: project.fullPath }, guest.token);
    const byId = await directory({ projectId: String(project.id) }, guest.token);
    const missing = await directory({ projectPath: `${groupPath}/does-not-exist` }, guest.token);
    expect(byPath.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(byPath.body.errors?.[0]?.message).toBe(missing.body.errors?.[0]?.message);
    expect(byId.body.errors?.[0]?.message).toBe(missing.body.errors?.[0]?.message);
    expect((await directory({ projectPath: project.fullPath }, reporter.token)).body.errors).toBeUndefined();
  });

  it('a numeric project id beyond any row id (int4) gets the answer a missing project gets, not a server error', async () => {
    const missing = await search(`${groupPath}/does-not-exist`, reporter.token);
    expect((await search('2147483648', reporter.token)).body).toEqual(missing.body);
    expect((await search('99999999999999', reporter.token)).body).toEqual(missing.body);
    const rest = await semantic('2147483648', reporter.token);
    expect(rest.status).toBe(404);
    expect(await readJson(rest)).toEqual(await readJson(await semantic('999999', reporter.token)));
    const asChat = await chat('gid://gitlab/Project/2147483648', reporter.token);
    expect(asChat.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(asChat.body.errors?.[0]?.message).toBe((await chat(`${groupPath}/does-not-exist`, reporter.token)).body.errors?.[0]?.message);
  });

  it('codeIndex (commit, errors) is null for a Guest, as for a never-indexed ref; a Reporter sees it', async () => {
    const asGuest = await service.graphql<{ project: { codeIndex: unknown } }>(CODE_INDEX, {
      variables: { path: project.fullPath },
      token: guest.token,
    });
    expect(asGuest.body.data!.project).toMatchObject({ codeIndex: null });
    const asReporter = await service.graphql<{ project: { codeIndex: { state: string; commitSha: string } } }>(CODE_INDEX, {
      variables: { path: project.fullPath },
      token: reporter.token,
    });
    expect(asReporter.body.data!.project.codeIndex).toMatchObject({ state: 'READY', commitSha: expect.stringMatching(/^[0-9a-f]{40}$/) });
  });

  it('internal projects: any signed-in user may read the code; a private project stays hidden from a stranger', async () => {
    const onInternal = await search(internal.fullPath, stranger.token);
    // Not refused: the first search starts indexing (CONFLICT) or finds code.
    expect(onInternal.body.errors?.[0]?.extensions?.code ?? 'OK').not.toBe('NOT_FOUND');
    const onPrivate = await search(project.fullPath, stranger.token);
    expect(onPrivate.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

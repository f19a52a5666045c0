import { errorCodeOf } from '../../src/resolvers/ai-message.mapper';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { createGitRepo, BILLING_FILES, type GitRepo } from '../helpers/git-repo';
import { groupWithSeat, projectIn, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

// The fields GitLab's clients read before and around the first chat, over HTTP.

describe('fields GitLab clients read', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;
  let noSeat: UserWithToken;
  let groupPath: string;
  let repo: GitRepo;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'status', status: 400 } });
    service = await startTestService({
      role: 'all',
      env: {
        EXTERNAL_URL: 'https://duo.example.com/',
        FEATURE_FLAGS: 'code_suggestions_context,my_flag',
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: stub.url,
        LLM_MODEL: 'stub',
        LLM_MAX_RETRIES: '0',
        GATEKEEPER: 'false',
        INDEX_DEBOUNCE_MS: '0',
      },
    });
    alice = await userWithToken(service.prisma);
    noSeat = await userWithToken(service.prisma);
    groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: alice.username });
    repo = createGitRepo(BILLING_FILES);
  });
  afterAll(async () => {
    await service?.close();
    await stub?.close();
    repo?.destroy();
  });

  it('currentUser: avatarUrl and webUrl from EXTERNAL_URL, as REST /user says too', async () => {
    const { body } = await service.graphql<{ currentUser: { avatarUrl: string; webUrl: string } }>('{ currentUser { avatarUrl webUrl } }', {
      token: alice.token,
    });
    expect(body.data!.currentUser).toEqual({
      avatarUrl: `https://duo.example.com/uploads/-/system/user/avatar/${alice.id}/avatar.svg`,
      webUrl: `https://duo.example.com/${alice.username}`,
    });
    const rest = (await (await fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${alice.token}` } })).json()) as {
      web_url: string;
      avatar_url: string;
    };
    expect(rest.web_url).toBe(body.data!.currentUser.webUrl);
    expect(rest.avatar_url).toBe(body.data!.currentUser.avatarUrl);
  });

  it('serves the avatar it points at, and 404 for a user that does not exist', async () => {
    const path = `/uploads/-/system/user/avatar/${alice.id}/avatar.svg`;
    const response = await fetch(`${service.url}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await response.text()).toContain(`>${alice.username[0].toUpperCase()}</text>`);
    expect((await fetch(`${service.url}/uploads/-/system/user/avatar/999999/avatar.svg`)).status).toBe(404);
    expect((await fetch(`${service.url}/uploads/-/system/user/avatar/x1/avatar.svg`)).status).toBe(404);
    expect((await fetch(`${service.url}/uploads/-/system/user/avatar/9999999999/avatar.svg`)).status).toBe(404); // beyond int4
  });

  it('codeSuggestionsContexts: GitLab names with a seat and the instance flag, none without a seat', async () => {
    const query = '{ currentUser { codeSuggestionsContexts } }';
    const withSeat = await service.graphql<{ currentUser: { codeSuggestionsContexts: string[] } }>(query, { token: alice.token });
    expect(withSeat.body.data!.currentUser.codeSuggestionsContexts).toEqual(['open_tabs', 'imports']);
    const without = await service.graphql<{ currentUser: { codeSuggestionsContexts: string[] } }>(query, { token: noSeat.token });
    expect(without.body.data!.currentUser.codeSuggestionsContexts).toEqual([]);
  });

  it('metadata: version, configured flags on, every other name off; null when signed out', async () => {
    const query = 'query($names: [String!]!) { metadata { version revision enterprise featureFlags(names: $names) { name enabled } } }';
    const { body } = await service.graphql<{ metadata: { version: string; revision: string; featureFlags: unknown[] } }>(query, {
      token: alice.token,
      variables: { names: ['my_flag', 'advanced_context_resolver', 'no_such_flag', 'my_flag'] },
    });
    expect(body.data!.metadata.version).toBe('17.11.0');
    expect(body.data!.metadata.featureFlags).toEqual([
      { name: 'my_flag', enabled: true },
      { name: 'advanced_context_resolver', enabled: false },
      { name: 'no_such_flag', enabled: false },
    ]);
    const anonymous = await service.graphql<{ metadata: null }>(query, { variables: { names: ['my_flag'] } });
    expect(anonymous.body.data!.metadata).toBeNull();
  });

  it("featureFlagEnabled (deprecated in 17.4): the language server's query up to 7.9.0, answered as metadata.featureFlags", async () => {
    // Byte for byte what those language servers send, once per instance flag they know.
    const query = '\n  query featureFlagsEnabled($name: String!) {\n    featureFlagEnabled(name: $name)\n  }\n';
    const names = ['advanced_context_resolver', 'code_suggestions_context', 'duo_additional_context', 'my_flag'];
    const answers = [];
    for (const name of names) {
      const { status, body } = await service.graphql<{ featureFlagEnabled: boolean }>(query, { token: alice.token, variables: { name } });
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      answers.push({ name, enabled: body.data!.featureFlagEnabled });
    }
    const { body } = await service.graphql<{ metadata: { featureFlags: unknown[] } }>(
      'query($names: [String!]!) { metadata { featureFlags(names: $names) { name enabled } } }',
      { token: alice.token, variables: { names } },
    );
    expect(answers).toEqual(body.data!.metadata.featureFlags);
    expect(answers.map((answer) => answer.enabled)).toEqual([false, true, false, true]);
    const anonymous = await service.graphql<{ featureFlagEnabled: boolean }>(query, { variables: { name: 'my_flag' } });
    expect(anonymous.body.data!.featureFlagEnabled).toBe(false);
    const introspection = await service.graphql<{ __type: { fields: Array<{ name: string; deprecationReason: string }> } }>(
      '{ __type(name: "Query") { fields(includeDeprecated: true) { name deprecationReason } } }',
    );
    expect(introspection.body.data!.__type.fields).toContainEqual({
      name: 'featureFlagEnabled',
      deprecationReason: 'Replaced with metadata.featureFlags. Deprecated in GitLab 17.4.',
    });
  });

  it('metadata.featureFlags refuses too many names or too long a name, naming the argument', async () => {
    const query = 'query($names: [String!]!) { metadata { featureFlags(names: $names) { name enabled } } }';
    const many = await service.graphql(query, {
      token: alice.token,
      variables: { names: Array.from({ length: 101 }, (_, index) => `flag_${index}`) },
    });
    expect(many.body.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(many.body.errors![0].message).toMatch(/names is too long/);
    const long = await service.graphql(query, { token: alice.token, variables: { names: ['a'.repeat(256)] } });
    expect(long.body.errors![0].message).toMatch(/names\[0\] is too long/);
  });

  it('Project: webUrl, description and group (with its full name), as the VS Code extension reads them', async () => {
    const sub = await createGroup(service.prisma, { path: unique('sub'), name: 'Backend', parentPath: groupPath });
    const { project } = await createProject(service.prisma, { fullPath: `${sub.fullPath}/${unique('api')}` });
    const top = await service.prisma.group.findUniqueOrThrow({ where: { fullPath: groupPath } });
    const query =
      'query($fullPath: ID!) { project(fullPath: $fullPath) { id description webUrl group { id name fullName fullPath webUrl } } }';
    const admin = await userWithToken(service.prisma, { admin: true });
    const { body } = await service.graphql<{ project: unknown }>(query, { token: admin.token, variables: { fullPath: project.fullPath } });
    expect(body.data!.project).toEqual({
      id: `gid://gitlab/Project/${project.id}`,
      description: null,
      webUrl: `https://duo.example.com/${project.fullPath}`,
      group: {
        id: `gid://gitlab/Group/${sub.id}`,
        name: 'Backend',
        fullName: `${top.name} / Backend`,
        fullPath: sub.fullPath,
        webUrl: `https://duo.example.com/${sub.fullPath}`,
      },
    });
  });

  it('projects(ids:) answers only the projects the user may read; without ids it lists them', async () => {
    const mine = await projectIn(service.prisma, groupPath, { member: { username: alice.username, accessLevel: 'developer' } });
    const hidden = await projectIn(service.prisma, groupPath);
    const query = 'query($ids: [ID!]) { projects(ids: $ids) { nodes { id duoFeaturesEnabled } } }';
    const { body } = await service.graphql<{ projects: { nodes: unknown[] } }>(query, {
      token: alice.token,
      variables: {
        ids: [`gid://gitlab/Project/${mine.id}`, `gid://gitlab/Project/${hidden.id}`, 'gid://gitlab/Project/999999', 'not-a-gid'],
      },
    });
    expect(body.data!.projects.nodes).toEqual([{ id: `gid://gitlab/Project/${mine.id}`, duoFeaturesEnabled: true }]);
    const listed = await service.graphql<{ projects: { nodes: Array<{ id: string }> } }>(query, { token: alice.token });
    const ids = listed.body.data!.projects.nodes.map((node) => node.id);
    expect(ids).toContain(`gid://gitlab/Project/${mine.id}`);
    expect(ids).not.toContain(`gid://gitlab/Project/${hidden.id}`);
  });

  it('AiMessage.errorCode: the code of a failed answer, null otherwise', async () => {
    expect(errorCodeOf(["I'm sorry, I couldn't respond in time. Please try again. Error code: A1000"])).toBe('A1000');
    expect(errorCodeOf([])).toBeNull();
    const mutation =
      'mutation($q: String!) { aiAction(input: { chat: { content: $q }, conversationType: DUO_CHAT }) { requestId threadId errors } }';
    const sent = await service.graphql<{ aiAction: { requestId: string; threadId: string } }>(mutation, {
      token: alice.token,
      variables: { q: 'Why is the sky blue?' },
    });
    const { requestId, threadId } = sent.body.data!.aiAction;
    const read =
      'query($threadId: AiConversationThreadID!) { aiMessages(threadId: $threadId) { nodes { requestId role errors errorCode } } }';
    let answer: { role: string; errors: string[]; errorCode: string | null } | undefined;
    const deadline = Date.now() + 20_000;
    while (!answer && Date.now() < deadline) {
      const { body } = await service.graphql<{
        aiMessages: { nodes: Array<{ requestId: string; role: string; errors: string[]; errorCode: string | null }> };
      }>(read, { token: alice.token, variables: { threadId } });
      answer = body.data!.aiMessages.nodes.find((node) => node.requestId === requestId && node.role === 'ASSISTANT');
      if (!answer) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answer!.errors[0]).toMatch(/Error code: A9999$/);
    expect(answer!.errorCode).toBe('A9999');
    const { body } = await service.graphql<{ aiMessages: { nodes: Array<{ role: string; errorCode: string | null }> } }>(read, {
      token: alice.token,
      variables: { threadId },
    });
    expect(body.data!.aiMessages.nodes.find((node) => node.role === 'USER')!.errorCode).toBeNull();
  });

  it("aiChatContextPresets: questions from an indexed project's code; general ones for a hidden or unindexed project", async () => {
    const query =
      'query($projectId: ProjectID, $questionCount: Int) { aiChatContextPresets(projectId: $projectId, questionCount: $questionCount) { ' +
      'questions } }';
    const { project } = await createProject(service.prisma, { fullPath: `${groupPath}/${unique('shop')}`, repository: repo.path });
    await service.prisma.projectMember.create({ data: { projectId: project.id, userId: alice.id, accessLevel: 30 } });
    const ask = async (token: string, variables: Record<string, unknown>) =>
      (await service.graphql<{ aiChatContextPresets: { questions: string[] } | null }>(query, { token, variables })).body;

    const unindexed = await ask(alice.token, { projectId: `gid://gitlab/Project/${project.id}` });
    expect(unindexed.data!.aiChatContextPresets!.questions).toHaveLength(4);
    expect(unindexed.data!.aiChatContextPresets!.questions[0]).toBe('What can you help me with?');

    await service.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api' });
    const deadline = Date.now() + 30_000;
    while (
      (await service.prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } }))?.state !== 'ready'
    ) {
      if (Date.now() > deadline) throw new Error('index never ready');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const indexed = await ask(alice.token, { projectId: `gid://gitlab/Project/${project.id}`, questionCount: 3 });
    const questions = indexed.data!.aiChatContextPresets!.questions;
    // By category as GitLab answers them: the project's own questions first (contextual), then the topics; no count applies.
    const categoriesQuery =
      'query($projectId: ProjectID, $namespaceId: NamespaceID) { aiChatContextPresets(projectId: $projectId, namespaceId: $namespaceId, ' +
      'questionCount: 1, foundationalAgentReference: "duo_planner") { questions questionCategories { key title contextual questions } } }';
    type Categories = {
      aiChatContextPresets: {
        questions: string[];
        questionCategories: Array<{ key: string; title: string; contextual: boolean; questions: string[] }>;
      };
    };
    const group = await service.prisma.group.findUniqueOrThrow({ where: { fullPath: groupPath } });
    const categories = await service.graphql<Categories>(categoriesQuery, {
      token: alice.token,
      variables: { projectId: `gid://gitlab/Project/${project.id}`, namespaceId: `gid://gitlab/Group/${group.id}` },
    });
    expect(categories.body.errors).toBeUndefined();
    const presets = categories.body.data!.aiChatContextPresets;
    expect(presets.questions).toHaveLength(1);
    expect(presets.questionCategories[0]).toMatchObject({ key: 'project', title: project.fullPath, contextual: true });
    expect(presets.questionCategories[0].questions.slice(0, 3)).toEqual(questions);
    expect(presets.questionCategories.slice(1).every((category) => !category.contextual && category.questions.length > 0)).toBe(true);
    const unindexedCategories = await service.graphql<Categories>(categoriesQuery, { token: alice.token, variables: {} });
    expect(unindexedCategories.body.data!.aiChatContextPresets.questionCategories.some((category) => category.contextual)).toBe(false);
    expect(questions).toHaveLength(3);
    const named = /^What does `(.+)` do\?$/.exec(questions[0])?.[1];
    expect(Object.keys(BILLING_FILES)).toContain(named);
    expect(named).not.toMatch(/\.(md|json|ya?ml)$|test|spec/);
    expect(questions.join('\n')).toContain(project.name);

    // Someone who may not read the project gets the same as for a project that does not exist; so does a Guest, who
    // sees the project but not its code (the questions name its files).
    const outsider = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: outsider.username });
    const hidden = await ask(outsider.token, { projectId: `gid://gitlab/Project/${project.id}` });
    const missing = await ask(outsider.token, { projectId: 'gid://gitlab/Project/999999' });
    expect(hidden.data).toEqual(missing.data);
    expect(JSON.stringify(hidden.data)).not.toContain('src/');
    const guest = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: guest.username });
    await service.prisma.projectMember.create({ data: { projectId: project.id, userId: guest.id, accessLevel: 10 } });
    const asGuest = await ask(guest.token, { projectId: `gid://gitlab/Project/${project.id}` });
    expect(asGuest.data).toEqual((await ask(guest.token, { projectId: 'gid://gitlab/Project/999999' })).data);

    // A file the project's Duo context exclusions name is not suggested, even from a snapshot built before the rule.
    await service.prisma.project.update({ where: { id: project.id }, data: { contextExclusions: [named!] } });
    const afterRule = (await ask(alice.token, { projectId: `gid://gitlab/Project/${project.id}`, questionCount: 3 })).data!
      .aiChatContextPresets!.questions;
    expect(afterRule.join('\n')).not.toContain(`\`${named}\``);
    expect(afterRule[0]).toMatch(/^What does `.+` do\?$/);

    const tooMany = await ask(alice.token, { questionCount: 11 });
    expect(tooMany.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect((await ask(noSeat.token, {})).data!.aiChatContextPresets).toBeNull();
  });

  it("Project.userPermissions: the abilities of the viewer's role, as the language server reads them", async () => {
    const { project } = await createProject(service.prisma, { fullPath: `${groupPath}/${unique('perm')}`, repository: repo.path });
    const query =
      'query($path: ID!) { project(fullPath: $path) { userPermissions { readProject downloadCode pushCode adminProject removeProject ' +
      'readAiCatalogItem adminAiCatalogItem } } }';
    type Permissions = Record<string, boolean>;
    const permissionsOf = async (accessLevel: number | null) => {
      const user = await userWithToken(service.prisma);
      if (accessLevel !== null)
        await service.prisma.projectMember.create({ data: { projectId: project.id, userId: user.id, accessLevel } });
      const { body } = await service.graphql<{ project: { userPermissions: Permissions } | null }>(query, {
        token: user.token,
        variables: { path: project.fullPath },
      });
      expect(body.errors).toBeUndefined();
      return body.data!.project?.userPermissions ?? null;
    };
    const none = { readAiCatalogItem: false, adminAiCatalogItem: false };
    expect(await permissionsOf(10)).toEqual({
      readProject: true,
      downloadCode: false,
      pushCode: false,
      adminProject: false,
      removeProject: false,
      ...none,
    });
    expect(await permissionsOf(20)).toMatchObject({ downloadCode: true, pushCode: false });
    expect(await permissionsOf(30)).toMatchObject({ downloadCode: true, pushCode: true, adminProject: false });
    expect(await permissionsOf(40)).toMatchObject({ pushCode: true, adminProject: true, removeProject: false });
    expect(await permissionsOf(50)).toEqual({
      readProject: true,
      downloadCode: true,
      pushCode: true,
      adminProject: true,
      removeProject: true,
      ...none,
    });
    // A private project a user is no member of is not there for them at all.
    expect(await permissionsOf(null)).toBeNull();
    // A public one is: to read, not to push.
    await service.prisma.project.update({ where: { id: project.id }, data: { visibility: 'public' } });
    expect(await permissionsOf(null)).toMatchObject({ readProject: true, downloadCode: true, pushCode: false });
  });

  it("currentUser.ide.codeSuggestionsEnabled: the VS Code extension's probe, true with a seat", async () => {
    const query = '{ currentUser { ide { codeSuggestionsEnabled } duoCodeSuggestionsAvailable } }';
    type Answer = { currentUser: { ide: { codeSuggestionsEnabled: boolean }; duoCodeSuggestionsAvailable: boolean } };
    const withSeat = await service.graphql<Answer>(query, { token: alice.token });
    expect(withSeat.body.data!.currentUser).toEqual({ ide: { codeSuggestionsEnabled: true }, duoCodeSuggestionsAvailable: true });
    const without = await service.graphql<Answer>(query, { token: noSeat.token });
    expect(without.body.data!.currentUser).toEqual({ ide: { codeSuggestionsEnabled: false }, duoCodeSuggestionsAvailable: false });
  });
});

import { parse, validate } from 'graphql';
import { stripIntroducedFields } from '../../src/graphql/gl-introduced';
import { buildGraphQLSchema } from '../../src/resolvers/schema';
import { GITLAB_VERSION } from '../../src/instance';
import { STAND_IN_GITLAB_VERSION } from '../helpers/gitlab-stand-in';
import { subscribe, wsClient } from '../helpers/chat-client';
import type { UserWithToken } from '../helpers/fixtures';
import type { TestService } from '../helpers/test-service';
import { startConformanceService, type ConformanceService } from './conformance-service';
import { compareVersions, failedChecks, fill, loadFixtures, sentAt, type Fixture } from './fixture-format';

// Every GraphQL document GitLab's clients send (fixtures in ./graphql), against the real service:
// each validates against our schema and, sent over HTTP with a real token, gets a sensible answer.
// The ones the clients send at the version we report must pass; the others are reported.

const fixtures = loadFixtures('graphql');
const atOurVersion = fixtures.filter((fixture) => sentAt(fixture, GITLAB_VERSION));
const otherVersions = fixtures.filter((fixture) => !sentAt(fixture, GITLAB_VERSION));
const schema = buildGraphQLSchema();

// As every transport validates: without the nodes @gl_introduced tags with a version above ours.
const schemaErrors = (fixture: Fixture) =>
  validate(schema, parse(stripIntroducedFields(fixture.document!)?.query ?? fixture.document!)).map((error) => error.message);

const GREETING = {
  id: 'src/greeting.ts',
  category: 'FILE',
  content: 'export const greet = (name: string) => `Hello, ${name}`;',
  metadata: { relativePath: 'src/greeting.ts', enabled: true },
};
const SEED_CHAT = `mutation seed($question: String!, $clientSubscriptionId: String, $conversationType:
AiConversationsThreadsConversationType, $additionalContext: [AiAdditionalContextInput!]) {
  aiAction(input: { chat: { content: $question, additionalContext: $additionalContext }, clientSubscriptionId: $clientSubscriptionId,
  conversationType: $conversationType, platformOrigin: "vs_code_extension" }) { requestId threadId errors }
}`;

// Standalone, and connected to GitLab (the stand-in): the same documents, the same answers.
describe.each([
  ['standalone', false],
  ['connected to GitLab', true],
])('GraphQL conformance with GitLab clients (%s)', (_mode, connected) => {
  let world: ConformanceService;
  let service: TestService;
  let alice: UserWithToken;
  let values: Record<string, unknown>;

  beforeAll(async () => {
    world = await startConformanceService('duo_enterprise', {}, { gitlab: connected });
    ({ service, alice } = world);
    const { project, group } = world;
    // One message in the legacy conversation (the language server's), one in a Duo Chat thread (the web's), and the
    // threads the Quick Chat follow-up and the thread deletion need.
    const seed = async (conversationType: string | null) => {
      const { body } = await service.graphql<{ aiAction: { requestId: string; threadId: string | null; errors: string[] } }>(SEED_CHAT, {
        token: alice.token,
        variables: {
          question: 'What does greet return?',
          clientSubscriptionId: crypto.randomUUID(),
          conversationType,
          additionalContext: [GREETING],
        },
      });
      if (!body.data?.aiAction) throw new Error(`seeding the chat failed: ${JSON.stringify(body.errors)}`);
      return body.data.aiAction;
    };
    // The answer's id (feedback is given on answers) once the worker stored it; waiting also keeps
    // the threads' order by last update the order they were seeded in.
    const answerOf = async (requestId: string) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const answer = await service.prisma.aiMessage.findFirst({ where: { requestId, role: 'assistant' } });
        if (answer) return answer.id;
        if (Date.now() > deadline) throw new Error(`no answer stored for the seeded request ${requestId}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const legacy = await seed(null);
    await answerOf(legacy.requestId);
    // VS Code's Quick Chat thread, and a Duo Chat thread that deleteConversationThread deletes.
    const quickChat = await seed('DUO_QUICK_CHAT');
    await answerOf(quickChat.requestId);
    const deletable = await seed('DUO_CHAT');
    await answerOf(deletable.requestId);
    const threaded = await seed('DUO_CHAT');
    const answerId = await answerOf(threaded.requestId);
    values = {
      'user.id': alice.id,
      'user.gid': `gid://gitlab/User/${alice.id}`,
      'user.username': alice.username,
      token: alice.token,
      'project.id': project.id,
      'project.gid': `gid://gitlab/Project/${project.id}`,
      'project.fullPath': project.fullPath,
      'project.pathEncoded': encodeURIComponent(project.fullPath),
      'group.id': group.id,
      'group.gid': `gid://gitlab/Group/${group.id}`,
      'group.fullPath': group.fullPath,
      // Web URLs: GitLab's pages in connected mode.
      baseUrl: world.gitlab?.url ?? service.url,
      requestId: legacy.requestId,
      threadId: threaded.threadId,
      messageId: answerId,
      quickChatThreadId: quickChat.threadId,
      deletableThreadId: deletable.threadId,
      version: GITLAB_VERSION,
    };
  });
  afterAll(async () => world?.close());
  afterEach(() => expect(world.gitlab?.violations ?? []).toEqual([]));

  it('has documents from each client, each with its source and version window', () => {
    const clients = new Set(fixtures.map((fixture) => fixture.client));
    expect([...clients].sort()).toEqual(['gitlab-lsp', 'gitlab-vscode-extension', 'gitlab-web']);
    for (const fixture of fixtures) {
      expect(fixture.kind).toBe('graphql');
      expect(fixture.source.repository).toMatch(/^gitlab-org\//);
      expect(fixture.document).toBeTruthy();
      expect(fixture.file).toContain(`graphql/${fixture.client}/`);
      for (const bound of [fixture.versions.since, fixture.versions.until])
        if (bound !== null) expect(bound).toMatch(/^\d+\.\d+\.\d+(-pre)?$/);
    }
  });

  it.each(atOurVersion.map((fixture) => [fixture.file, fixture] as const))('%s validates against our schema', (_file, fixture) => {
    expect(schemaErrors(fixture)).toEqual([]);
  });

  /** POSTs a fixture's document as its client does and checks the answer makes sense. */
  async function expectSensibleAnswer(fixture: Fixture): Promise<void> {
    const variables = fill({ ...fixture.variables }, { ...values, clientSubscriptionId: crypto.randomUUID() });
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${alice.token}`,
        'user-agent': `conformance (${fixture.client})`,
      },
      body: JSON.stringify({ query: fixture.document, variables, operationName: fixture.operationName ?? undefined }),
    });
    const body = (await response.json()) as { data?: unknown; errors?: unknown[] };
    expect(response.status).toBe(fixture.expect.status ?? 200);
    if (fixture.expect.noErrors !== false) expect(body.errors).toBeUndefined();
    expect(failedChecks(body, fill(fixture.expect.checks, values))).toEqual([]);
  }

  const overHttp = atOurVersion.filter((fixture) => fixture.transport !== 'subscription');
  it.each(overHttp.map((fixture) => [fixture.file, fixture] as const))('%s gets a sensible answer over HTTP', async (_file, fixture) =>
    expectSensibleAnswer(fixture),
  );

  // Queries that later versions send and our schema takes answer sensibly already (mutations and
  // subscriptions of later versions are chained in threads.e2e.test.ts).
  const laterQueries = otherVersions.filter(
    (fixture) =>
      fixture.versions.since !== null &&
      compareVersions(fixture.versions.since, GITLAB_VERSION) > 0 &&
      /^\s*query\b/.test(fixture.document!) &&
      schemaErrors(fixture).length === 0,
  );
  it.each(laterQueries.map((fixture) => [fixture.file, fixture] as const))(
    "%s (a later version's query our schema takes) answers sensibly over HTTP too",
    async (_file, fixture) => expectSensibleAnswer(fixture),
  );

  const subscriptions = atOurVersion.filter((fixture) => fixture.transport === 'subscription');
  it.each(subscriptions.map((fixture) => [fixture.file, fixture] as const))(
    '%s streams a chat answer over graphql-ws',
    async (_file, fixture) => {
      const clientSubscriptionId = crypto.randomUUID();
      const client = wsClient(service.url, alice.token);
      const stream = await subscribe(client, fill({ ...fixture.variables }, { ...values, clientSubscriptionId }), fixture.document);
      try {
        const { body } = await service.graphql<{ aiAction: { requestId: string } }>(SEED_CHAT, {
          token: alice.token,
          variables: { question: 'Say hello', clientSubscriptionId, conversationType: null, additionalContext: [] },
        });
        const messages = await stream.untilFinal(body.data!.aiAction.requestId, 20_000);
        expect(stream.errors).toEqual([]);
        const final = messages.find((message) => message.role === 'ASSISTANT' && message.chunkId === null)!;
        expect(final.content).toContain('Say hello');
        // A subscription with the client's id gets the chunks too; one without gets the final message only.
        const chunks = messages.filter((message) => message.chunkId !== null);
        if (
          fixture.document!.includes('clientSubscriptionId: $clientSubscriptionId') &&
          'clientSubscriptionId' in (fixture.variables ?? {})
        ) {
          expect(chunks.map((chunk) => chunk.content).join('')).toBe(final.content);
        } else {
          expect(chunks).toEqual([]);
        }
      } finally {
        stream.stop();
        await client.dispose();
      }
    },
  );

  it("reports the same version over GraphQL as over REST (GitLab's own in connected mode)", async () => {
    const rest = (await (await fetch(`${service.url}/api/v4/version`, { headers: { authorization: `Bearer ${alice.token}` } })).json()) as {
      version: string;
    };
    const { body } = await service.graphql<{ metadata: { version: string } }>('{ metadata { version } }', { token: alice.token });
    const expected = connected ? STAND_IN_GITLAB_VERSION : GITLAB_VERSION;
    expect(body.data!.metadata.version).toBe(expected);
    expect(rest.version).toBe(expected);
  });

  it('keeps documents of other versions in the suite and says which of them our schema takes', () => {
    // Not asserted to pass: clients do not send them to an instance reporting our version. The
    // list shows what a higher reported version would need (see the version rule in docs/endpoints.md).
    const report = otherVersions.map((fixture) => {
      const errors = schemaErrors(fixture);
      return (
        `${fixture.file} [${fixture.versions.since ?? '*'} .. ${fixture.versions.until ?? '*'}): ` +
        `${errors.length === 0 ? 'validates' : errors.join('; ')}`
      );
    });
    const newer = otherVersions.filter(
      (fixture) => fixture.versions.since !== null && compareVersions(fixture.versions.since, GITLAB_VERSION) > 0,
    );
    console.info(
      `Reported version ${GITLAB_VERSION}: ${atOurVersion.length} documents sent at it; ${otherVersions.length} of other ` +
        `versions:\n${report.join('\n')}`,
    );
    expect(otherVersions.every((fixture) => !sentAt(fixture, GITLAB_VERSION))).toBe(true);
    // Something sent only by newer versions does not work yet, which is why the version is not higher.
    expect(newer.some((fixture) => schemaErrors(fixture).length > 0)).toBe(true);
  });
});

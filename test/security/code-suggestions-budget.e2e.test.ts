import type { Client } from 'graphql-ws';
import { RATE_LIMIT_MESSAGE } from '../../src/auth/rate-limits';
import { wsClient } from '../helpers/chat-client';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

// One code suggestions budget per user for everything that starts a generation: requests to
// /code_suggestions/completions and the generations of continuous sessions (whose updates were all
// taken, each making a model call: 90 in 32 s against a budget of 60 a minute).
const BUDGET = 3;
const START = 'mutation($input: CodeSuggestionSessionStartInput!) { codeSuggestionSessionStart(input: $input) { sessionId } }';
const UPDATE = 'mutation($input: CodeSuggestionSessionUpdateInput!) { codeSuggestionSessionUpdate(input: $input) { sessionId revision } }';
const UPDATES = 'subscription($sessionId: ID!) { codeSuggestionUpdates(sessionId: $sessionId) { revision text status reason } }';
const FILE = 'def total(items):\n    result = 0\n    ';

type Update = { revision: number; text: string; status: string; reason: string | null };

describe('the code suggestions budget on every path that starts a generation', () => {
  let stub: StubLlmServer;
  let service: TestService;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['return ', 'sum(items)'] } });
    service = await startTestService({
      env: {
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: stub.url,
        LLM_MODEL: 'stub-coder',
        CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE: String(BUDGET),
      },
    });
  });
  afterAll(async () => {
    await service.close();
    await stub.close();
  });

  async function suggester(): Promise<UserWithToken> {
    const user = await userWithToken(service.prisma, { scopes: ['ai_features'] });
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
    return user;
  }

  const completion = (user: UserWithToken) =>
    fetch(`${service.url}/api/v4/code_suggestions/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ current_file: { file_name: 'a.py', content_above_cursor: FILE }, intent: 'completion' }),
    });

  /** A session over POST /api/graphql, its updates over graphql-ws. */
  async function session(user: UserWithToken) {
    const started = await service.graphql<{ codeSuggestionSessionStart: { sessionId: string } }>(START, {
      token: user.token,
      variables: { input: { fileName: 'app.py', content: FILE, cursorOffset: FILE.length } },
    });
    const sessionId = started.body.data!.codeSuggestionSessionStart.sessionId;
    const client: Client = wsClient(service.url, user.token);
    const updates: Update[] = [];
    const stop = client.subscribe<{ codeSuggestionUpdates: Update }>(
      { query: UPDATES, variables: { sessionId } },
      {
        next: (result) => void (result.data && updates.push(result.data.codeSuggestionUpdates)),
        error: () => undefined,
        complete: () => {},
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    let typed = '';
    return {
      sessionId,
      updates,
      /** One update, and (when taken) the update that ends its generation. */
      type: async (text: string) => {
        typed += text;
        const content = `${FILE}${typed}`;
        const response = await service.graphql<{ codeSuggestionSessionUpdate: { revision: number } }>(UPDATE, {
          token: user.token,
          variables: { input: { sessionId, content, cursorOffset: content.length } },
        });
        const revision = response.body.data?.codeSuggestionSessionUpdate.revision;
        const ended =
          revision === undefined
            ? null
            : await waitUntil(() => updates.find((update) => update.revision === revision && update.status !== 'STREAMING'), {
                what: () => JSON.stringify(updates),
              });
        return { response, ended };
      },
      close: async () => {
        stop();
        await client.dispose();
      },
    };
  }

  it('a session generation takes from the budget; once spent, none starts and updates get GitLab’s 429 words', async () => {
    const user = await suggester();
    const typing = await session(user);
    const calls = stub.requests.length;
    try {
      for (let index = 0; index < BUDGET; index++) expect((await typing.type('r')).ended).toMatchObject({ status: 'COMPLETE' });
      expect(stub.requests.length - calls).toBe(BUDGET);

      // The generation this update would start finds the budget spent: EMPTY, no model call.
      const over = await typing.type('e');
      expect(over.response.body.errors).toBeUndefined();
      expect(over.ended).toMatchObject({ status: 'EMPTY', reason: 'rate_limited', text: '' });
      expect(stub.requests.length - calls).toBe(BUDGET);

      // Later updates are refused as a limit is refused, and write nothing.
      const stored = await service.prisma.codeSuggestionSession.findUniqueOrThrow({ where: { id: typing.sessionId } });
      const refused = await typing.type('s');
      expect(refused.response.body.data).toBeNull();
      expect(refused.response.body.errors).toEqual([
        expect.objectContaining({ message: RATE_LIMIT_MESSAGE, extensions: expect.objectContaining({ code: 'RATE_LIMITED' }) }),
      ]);
      expect(await service.prisma.codeSuggestionSession.findUniqueOrThrow({ where: { id: typing.sessionId } })).toMatchObject({
        revision: stored.revision,
        content: stored.content,
      });

      // The completions endpoint draws on the same budget.
      const limited = await completion(user);
      expect(limited.status).toBe(429);
      expect(await limited.json()).toEqual({ error: RATE_LIMIT_MESSAGE });
      expect(stub.requests.length - calls).toBe(BUDGET);
    } finally {
      await typing.close();
    }
  });

  it('completions spend the budget a session generation then finds spent', async () => {
    const user = await suggester();
    for (let index = 0; index < BUDGET; index++) expect((await completion(user)).status).toBe(200);
    const typing = await session(user);
    const calls = stub.requests.length;
    try {
      expect((await typing.type('r')).ended).toMatchObject({ status: 'EMPTY', reason: 'rate_limited' });
      expect(stub.requests.length).toBe(calls);
    } finally {
      await typing.close();
    }
  });
});

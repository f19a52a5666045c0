import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { wsClient } from '../helpers/chat-client';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

// Kotlin's grammar parses a run of `<a,b>` in quadratic time: 20 KB took 1.6 s, and this (60 KB) about 14 s,
// all of it on the API's event loop while detection ran there. Detection reads it as a small file.
const RUNAWAY_KOTLIN = `fun f() { F${'<a,b>'.repeat(12_000)}() }`;
const GO_COMMENT = 'package main\n\nimport "fmt"\n\nfunc a() {}\nfunc b() {}\nfunc c() {}\n// print the sum of two numbers\n';

describe('code suggestion intent detection on its own thread, within INTENT_TIMEOUT_MS', () => {
  let service: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    service = await startTestService({ env: { INTENT_TIMEOUT_MS: '300' } });
    alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: alice.username });
  });
  afterAll(() => service?.close());

  /** A user with a seat. Each test's runaway files are another user's: a user's runaway puts them in a cooldown. */
  const seatedUser = async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
    return user;
  };
  const complete = (fileName: string, above: string, user: UserWithToken = alice) =>
    fetch(`${service.url}/api/v4/code_suggestions/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ current_file: { file_name: fileName, content_above_cursor: above, content_below_cursor: '' } }),
    });
  const INTENT =
    'query($f: String!, $a: String!) { codeSuggestionIntent(fileName: $f, contentAboveCursor: $a) { intent generationType language } }';

  it('serves other requests while a detection runs, answers a runaway one as a completion, and detects again after', async () => {
    const finished: string[] = [];
    const bob = await seatedUser();
    const runaway = complete('Main.kt', RUNAWAY_KOTLIN, bob).then(async (response) => {
      finished.push('runaway');
      return { status: response.status, body: await readJson(response) };
    });
    // Once the runaway request is parsing, a query is answered beside it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const query = service.graphql('{ currentUser { username } }', { token: alice.token }).then((result) => {
      finished.push('query');
      return result;
    });
    expect((await query).body.data).toEqual({ currentUser: { username: alice.username } });
    expect(await runaway).toMatchObject({ status: 200, body: { intent: 'completion', generation_type: null } });
    expect(finished).toEqual(['query', 'runaway']);

    // The runaway's thread was ended: a new one answers the next detection with its real decision.
    const comment = await complete('main.go', GO_COMMENT);
    expect(await readJson(comment)).toMatchObject({ intent: 'generation', generation_type: 'comment' });
  });

  it('answers codeSuggestionIntent for a runaway file as a completion in its language, and a detection waiting behind it', async () => {
    type Intent = { codeSuggestionIntent: { intent: string; generationType: string | null; language: string | null } };
    const carol = await seatedUser();
    const [runaway, waiting] = await Promise.all([
      service.graphql<Intent>(INTENT, { token: carol.token, variables: { f: 'Main.kt', a: RUNAWAY_KOTLIN } }),
      service.graphql<Intent>(INTENT, { token: alice.token, variables: { f: 'main.go', a: GO_COMMENT } }),
    ]);
    expect(runaway.body).toEqual({ data: { codeSuggestionIntent: { intent: 'completion', generationType: null, language: 'kotlin' } } });
    // It either ran after the runaway's thread was ended, or waited past the limit and is a completion too: never an error.
    expect(['generation', 'completion']).toContain(waiting.body.data?.codeSuggestionIntent.intent);
    const again = await service.graphql(INTENT, { token: alice.token, variables: { f: 'main.go', a: GO_COMMENT } });
    expect(again.body).toEqual({ data: { codeSuggestionIntent: { intent: 'generation', generationType: 'comment', language: 'go' } } });
    // Carol's own detections wait out her cooldown, on every entry point.
    const cooling = await service.graphql(INTENT, { token: carol.token, variables: { f: 'main.go', a: GO_COMMENT } });
    expect(cooling.body).toEqual({ data: { codeSuggestionIntent: { intent: 'completion', generationType: null, language: 'go' } } });
  });

  it("answers a user whose detection ran away without detection for a while; others' do not wait", async () => {
    const mallory = await seatedUser();
    const completeAs = (user: UserWithToken, fileName: string, above: string) =>
      complete(fileName, above, user).then(
        async (response) => (await readJson(response)) as { intent: string; generation_type: string | null },
      );

    expect(await completeAs(mallory, 'Main.kt', RUNAWAY_KOTLIN)).toMatchObject({ intent: 'completion' });
    // Mallory keeps sending the runaway file; each time Alice asks just after. Were Mallory's files
    // still detected, Alice's detection would wait behind each one past the limit and be a completion.
    for (let round = 0; round < 3; round += 1) {
      const malloryAnswer = completeAs(mallory, 'Main.kt', RUNAWAY_KOTLIN);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await completeAs(alice, 'main.go', GO_COMMENT)).toMatchObject({ intent: 'generation', generation_type: 'comment' });
      expect(await malloryAnswer).toMatchObject({ intent: 'completion', generation_type: null });
    }
    // Mallory's ordinary files are not detected either while it lasts: the rule is per user.
    expect(await completeAs(mallory, 'main.go', GO_COMMENT)).toMatchObject({ intent: 'completion' });
  });

  it("keeps the cooldown in a user's continuous suggestion sessions too", async () => {
    const dave = await seatedUser();
    expect(await readJson(await complete('Main.kt', RUNAWAY_KOTLIN, dave))).toMatchObject({ intent: 'completion' });
    type Update = { revision: number; intent: string | null; status: string };
    // The intent a session's first generation was made with (no model here: it ends EMPTY, with its intent).
    const sessionIntent = async (user: UserWithToken) => {
      const started = await service.graphql<{ codeSuggestionSessionStart: { sessionId: string } }>(
        'mutation($input: CodeSuggestionSessionStartInput!) { codeSuggestionSessionStart(input: $input) { sessionId } }',
        { token: user.token, variables: { input: { fileName: 'main.go', content: GO_COMMENT, cursorOffset: GO_COMMENT.length } } },
      );
      const sessionId = started.body.data!.codeSuggestionSessionStart.sessionId;
      const client = wsClient(service.url, user.token);
      const updates: Update[] = [];
      try {
        client.subscribe<{ codeSuggestionUpdates: Update }>(
          {
            query: 'subscription($id: ID!) { codeSuggestionUpdates(sessionId: $id) { revision intent status } }',
            variables: { id: sessionId },
          },
          {
            next: (result) => void (result.data && updates.push(result.data.codeSuggestionUpdates)),
            error: () => undefined,
            complete: () => undefined,
          },
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        const updated = await service.graphql(
          'mutation($input: CodeSuggestionSessionUpdateInput!) { codeSuggestionSessionUpdate(input: $input) { revision } }',
          { token: user.token, variables: { input: { sessionId, content: `${GO_COMMENT}`, cursorOffset: GO_COMMENT.length } } },
        );
        expect(updated.body.errors).toBeUndefined();
        const done = await waitUntil(() => updates.find((update) => update.status === 'EMPTY' || update.status === 'COMPLETE'), {
          timeoutMs: 5_000,
          what: () => JSON.stringify(updates),
        });
        return done!.intent;
      } finally {
        await client.dispose();
      }
    };
    expect(await sessionIntent(dave)).toBe('completion');
    expect(await sessionIntent(alice)).toBe('generation');
  });
});

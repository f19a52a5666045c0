import { groupWithSeat, projectIn, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { readJson } from '../helpers/http';
import { sentStatements } from '../helpers/sent-statements';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

const PYTHON_FILE = [
  'import os',
  'import sys',
  'import json',
  'import time',
  '',
  'def load(path):',
  '    with open(path) as handle:',
  '        return json.load(handle)',
  '',
  '',
].join('\n');

describe('POST /api/v4/code_suggestions/completions', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['return ', 'value'] } });
    service = await startTestService({ env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub-coder' } });
    alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: alice.username });
  });
  afterAll(async () => {
    await service?.close();
    await stub?.close();
  });
  afterEach(() => stub.reset());

  const post = (body: unknown, options: { token?: string; headers?: Record<string, string>; path?: string } = {}) =>
    fetch(`${service.url}/api/v4/code_suggestions/${options.path ?? 'completions'}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token ?? alice.token}`, ...options.headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  // What GitLab's language server sends (reference section 7).
  const lspBody = (above: string, below = '', extra: Record<string, unknown> = {}) => ({
    prompt_version: 1,
    project_path: '',
    project_id: -1,
    current_file: { file_name: 'src/app.py', content_above_cursor: above, content_below_cursor: below },
    choices_count: 1,
    ...extra,
  });

  it("answers a completion in GitLab's shape, with the decision, after asking the model with prefix and suffix", async () => {
    const response = await post(
      lspBody(
        `${PYTHON_FILE}def total(items):\n    result = 0\n    for item in items:\n        result += item\n    `,
        '\n\nprint(total([1]))\n',
      ),
    );
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body).toMatchObject({
      object: 'text_completion',
      model: { engine: 'openai', name: 'stub-coder', lang: 'python' },
      choices: [{ text: 'return value', index: 0, finish_reason: 'length' }],
      intent: 'completion',
      generation_type: null,
    });
    expect(typeof body.id).toBe('string');
    expect(typeof body.created).toBe('number');
    const sent = String(stub.requests[0].body.messages!.at(-1)!.content);
    expect(sent).toContain('<prefix>');
    expect(sent).toContain('print(total([1]))');
  });

  it.each([
    [
      'an explicit completion wins over everything',
      { intent: 'completion', user_instruction: 'write it', generation_type: 'small_file' },
      'completion',
      null,
    ],
    ['user_instruction means generation', { user_instruction: 'parse the config' }, 'generation', null],
    ['a given generation_type', { generation_type: 'empty_function' }, 'generation', 'empty_function'],
    ['intent generation means a comment generation', { intent: 'generation' }, 'generation', 'comment'],
  ])('%s', async (_name, extra, intent, generationType) => {
    const body = await readJson(await post(lspBody(`${PYTHON_FILE}x = 1\n`, '', extra)));
    expect({ intent: body.intent, generation_type: body.generation_type }).toEqual({ intent, generation_type: generationType });
  });

  it('detects a comment above the cursor and sends it to the model as the instruction', async () => {
    const body = await readJson(await post(lspBody(`${PYTHON_FILE}# read the settings file and return a dict of its keys\n`)));
    expect(body).toMatchObject({ intent: 'generation', generation_type: 'comment' });
    expect(String(stub.requests[0].body.messages!.at(-1)!.content)).toContain(
      'Instruction: read the settings file and return a dict of its keys',
    );
  });

  it('detects a small file', async () => {
    const body = await readJson(await post(lspBody('import os\n')));
    expect(body).toMatchObject({ intent: 'generation', generation_type: 'small_file' });
  });

  it('streams a generation as server-sent events when the client supports them', async () => {
    stub.script({ kind: 'stream', pieces: ['def ', 'parse():', '\n    pass'] });
    const response = await post(lspBody(`${PYTHON_FILE}# parse the arguments\n`, '', { stream: true, intent: 'generation' }), {
      headers: { 'X-Supports-Sse-Streaming': 'true' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-streaming-format')).toBe('sse');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    const events = text
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((block) => {
        const [eventLine, dataLine] = block.split('\r\n');
        return { event: eventLine.replace('event: ', ''), data: JSON.parse(dataLine.replace('data: ', '')) };
      });
    expect(events[0]).toMatchObject({ event: 'stream_start', data: { metadata: { model: { engine: 'openai', name: 'stub-coder' } } } });
    expect(
      events
        .slice(1, -1)
        .map((event) => event.data.choices[0].delta.content)
        .join(''),
    ).toBe('def parse():\n    pass');
    expect(events.at(-1)).toEqual({ event: 'stream_end', data: null });
  });

  describe('refuses bad requests, naming the field', () => {
    it.each([
      ['no current_file', {}, 400, 'current_file is missing'],
      ['no file name', { current_file: { content_above_cursor: '' } }, 400, 'current_file[file_name] is missing'],
      ['no content above', { current_file: { file_name: 'a.py' } }, 400, 'current_file[content_above_cursor] is missing'],
      [
        'a long file name',
        { current_file: { file_name: 'x'.repeat(256), content_above_cursor: '' } },
        400,
        'current_file[file_name] is too long',
      ],
      [
        'content over 400,000',
        { current_file: { file_name: 'a.py', content_above_cursor: 'x'.repeat(400_001) } },
        400,
        'current_file[content_above_cursor] is too long',
      ],
      [
        'an unknown intent',
        { current_file: { file_name: 'a.py', content_above_cursor: '' }, intent: 'guess' },
        400,
        'intent does not have a valid value',
      ],
      [
        'a context item without a name',
        { current_file: { file_name: 'a.py', content_above_cursor: '' }, context: [{ type: 'file', name: '', content: 'x' }] },
        400,
        'context[0][name] is empty',
      ],
    ])('%s', async (_name, body, status, message) => {
      const response = await post(body);
      expect(response.status).toBe(status);
      expect(JSON.stringify(await readJson(response))).toContain(message);
    });

    it('a body over 600,000 bytes gets 413', async () => {
      const response = await post({
        current_file: { file_name: 'a.py', content_above_cursor: 'x'.repeat(350_000), content_below_cursor: 'y'.repeat(350_000) },
      });
      expect(response.status).toBe(413);
    });
  });

  it('refuses users without a seat (401 from the monolith) and read_api tokens (403)', async () => {
    const nobody = await userWithToken(service.prisma);
    const noSeat = await post(lspBody('x'), { token: nobody.token });
    expect(noSeat.status).toBe(401);
    expect(noSeat.headers.get('x-gitlab-error-origin')).toBe('monolith');
    const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: reader.username });
    // The scope first, as GitLab checks it with the token: a token that may not call the endpoint costs no seat look-up.
    const { result: scoped, texts } = await sentStatements(() => post(lspBody('x'), { token: reader.token }));
    expect(scoped.status).toBe(403);
    expect(await readJson(scoped)).toMatchObject({ error: 'insufficient_scope', scope: 'api ai_features' });
    expect(texts.length).toBeGreaterThan(0); // the token's look-up: the spy sees this service's statements
    expect(texts.filter((text) => text.includes('seat_assignments'))).toEqual([]);
  });

  it("limits each user to 60 requests a minute with GitLab's message", async () => {
    const busy = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: busy.username });
    const statuses: number[] = [];
    for (let index = 0; index < 61; index += 1)
      statuses.push((await post(lspBody('x = 1', '', { intent: 'completion' }), { token: busy.token })).status);
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);
    const limited = await post(lspBody('x'), { token: busy.token });
    expect(limited.status).toBe(429);
    expect(await readJson(limited)).toEqual({ error: 'This endpoint has been requested too many times. Try again later.' });
  }, 60_000);

  it('answers direct_access with 403 and enabled by project', async () => {
    expect((await post({}, { path: 'direct_access' })).status).toBe(403);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    const on = await projectIn(service.prisma, group, { member: { username: alice.username, accessLevel: 'developer' } });
    const off = await projectIn(service.prisma, group, { member: { username: alice.username, accessLevel: 'developer' } });
    await service.prisma.project.update({ where: { id: off.id }, data: { duoFeaturesEnabled: false } });
    const hidden = await projectIn(service.prisma, group);
    expect((await post({ project_path: on.fullPath }, { path: 'enabled' })).status).toBe(200);
    expect((await post({ project_path: off.fullPath }, { path: 'enabled' })).status).toBe(403);
    expect((await post({ project_path: hidden.fullPath }, { path: 'enabled' })).status).toBe(404);
    expect((await post({ project_path: `${group}/nothing` }, { path: 'enabled' })).status).toBe(404);
  });
});

describe('code suggestions with no model configured', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it('answers with empty choices and says why in a header', async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const response = await fetch(`${service.url}/api/v4/code_suggestions/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ current_file: { file_name: 'a.ts', content_above_cursor: 'const a = ' }, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-duo-slice-notice')).toMatch(/no language model is configured/);
    expect(await readJson(response)).toMatchObject({ choices: [], object: 'text_completion' });
  });
});

describe('codeSuggestionIntent (GraphQL)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  const QUERY =
    'query($f: String!, $a: String!, $b: String) { codeSuggestionIntent(fileName: $f, contentAboveCursor: $a, contentBelowCursor: $b) { ' +
    'intent generationType userInstruction language } }';

  it("returns the REST API's lower-case decision", async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const comment = await service.graphql(QUERY, {
      token: user.token,
      variables: {
        f: 'main.go',
        a: 'package main\n\nimport "fmt"\n\nfunc a() {}\nfunc b() {}\nfunc c() {}\n// print the sum of two numbers\n',
        b: '',
      },
    });
    expect(comment.body.data).toEqual({
      codeSuggestionIntent: {
        intent: 'generation',
        generationType: 'comment',
        userInstruction: 'print the sum of two numbers',
        language: expect.any(String),
      },
    });
    const completion = await service.graphql(QUERY, {
      token: user.token,
      variables: { f: 'main.go', a: 'package main\n\nimport "fmt"\n\nfunc a() {}\nfunc b() {}\nfunc c() {\n\tfmt.Println(', b: ')\n}\n' },
    });
    expect(completion.body.data).toEqual({
      codeSuggestionIntent: { intent: 'completion', generationType: null, userInstruction: null, language: expect.any(String) },
    });
  });

  it('refuses users without a seat', async () => {
    const user = await userWithToken(service.prisma);
    const { body } = await service.graphql(QUERY, { token: user.token, variables: { f: 'a.ts', a: '' } });
    expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE', () => {
  let service: TestService;
  afterAll(async () => service?.close());

  it("sets the per-user limit, as GitLab's code_suggestions_api_rate_limit does", async () => {
    service = await startTestService({ env: { CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE: '3' } });
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
    const body = JSON.stringify({ current_file: { file_name: 'a.py', content_above_cursor: 'x = ', content_below_cursor: '' } });
    const post = () =>
      fetch(`${service.url}/api/v4/code_suggestions/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
        body,
      });
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1) statuses.push((await post()).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { openRawCable } from '../helpers/cable-clients';
import { subscribe, wsClient, type Collector } from '../helpers/chat-client';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { readJson } from '../helpers/http';
import { getFrom, parseScrape, valueOf, type Sample } from '../helpers/prometheus';
import { runCli } from '../helpers/run-cli';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

const CHAT = `mutation($content: String!, $c: String, $skip: Boolean) {
  aiAction(input: { chat: { content: $content, skipGatekeeper: $skip }, clientSubscriptionId: $c }) { requestId errors }
}`;
const SUBSCRIPTION = `subscription($userId: UserID, $c: String) { aiCompletionResponse(userId: $userId, aiAction: CHAT,
clientSubscriptionId: $c) {
  requestId content errors role chunkId
} }`;
const CODE_INDEX = `query($path: ID!) { project(fullPath: $path) { codeIndex(ref: "main") { state filesIndexed } } }`;
const INDEX = `mutation($input: ProjectCodeIndexCreateInput!) { projectCodeIndexCreate(input: $input) { jobId errors } }`;

// Metrics as Prometheus reads them: scraped over HTTP after real requests, a chat, an index run and refusals.
describe('GET /-/metrics', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let user: UserWithToken;
  let repo: GitRepo;
  let projectPath: string;
  let client: Client;
  let stream: Collector;
  const clientSubscriptionId = randomUUID();

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    service = await startTestService({
      role: 'all',
      env: {
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: stub.url,
        LLM_MODEL: 'stub-model',
        LLM_MAX_RETRIES: '1',
        INDEX_DEBOUNCE_MS: '0',
        METRICS_ALLOWED_CIDRS: '127.0.0.1/32, ::1',
      },
    });
    user = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    repo = createGitRepo(SAMPLE_FILES);
    projectPath = `${group}/${unique('shop')}`;
    await createProject(service.prisma, { fullPath: projectPath, repository: repo.path });
    await addMember(service.prisma, { fullPath: projectPath, username: user.username, accessLevel: 'maintainer' });
    client = wsClient(service.url, user.token);
    stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, c: clientSubscriptionId }, SUBSCRIPTION);
  });
  afterAll(async () => {
    stream?.stop();
    await client?.dispose();
    await service?.close();
    await stub?.close();
    repo?.destroy();
  });

  async function scrape(): Promise<Sample[]> {
    const response = await fetch(`${service.url}/-/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseScrape(await response.text());
  }

  async function ask(content: string, skip = false): Promise<string> {
    const { body } = await service.graphql<{ aiAction: { requestId: string } }>(CHAT, {
      token: user.token,
      variables: { content, c: clientSubscriptionId, skip },
    });
    const requestId = body.data!.aiAction.requestId;
    await stream.untilFinal(requestId, 20_000);
    return requestId;
  }

  /** Queue counters move when the worker's `completed` event fires, a moment after the answer is out. */
  async function scrapeUntil(predicate: (samples: Sample[]) => boolean, timeoutMs = 5_000): Promise<Sample[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const samples = await scrape();
      if (predicate(samples) || Date.now() > deadline) return samples;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('serves the process, build and instance figures to loopback', async () => {
    const samples = await scrape();
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'duo_db_pool_connections',
    ]) {
      expect({ name, present: samples.some((sample) => sample.name === name) }).toEqual({ name, present: true });
    }
    expect(valueOf(samples, 'duo_build_info', { version: '17.11.0' })).toBe(1);
    expect(valueOf(samples, 'duo_embedder_info', { provider: 'lexical' })).toBe(1);
    expect(valueOf(samples, 'duo_llm_info', { provider: 'openai', model: 'stub-model' })).toBe(1);
    expect(valueOf(samples, 'duo_reranker_info', { provider: 'none', model: 'none' })).toBe(1);
    for (const queue of ['chat', 'indexing', 'maintenance'])
      expect(valueOf(samples, 'duo_queue_workers', { queue })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'duo_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
  });

  it('refuses other addresses with a 404, forwarded ones included, and counts the refusal', async () => {
    const fromOther = await getFrom(`${service.url}/-/metrics`, { localAddress: '127.0.0.2' });
    expect(fromOther.status).toBe(404);
    expect(fromOther.body).not.toMatch(/duo_/);
    // Behind a proxy on loopback the forwarded client is the one that counts.
    const forwarded = await getFrom(`${service.url}/-/metrics`, { headers: { 'X-Forwarded-For': '203.0.113.7' } });
    expect(forwarded.status).toBe(404);
    const samples = await scrape();
    expect(valueOf(samples, 'duo_http_requests_total', { method: 'GET', route: '/-/metrics', status: '404' })).toBe(2);
  });

  it('counts HTTP requests by route pattern and status, and GraphQL operations by root field and error code', async () => {
    const before = await scrape();
    expect((await fetch(`${service.url}/api/v4/version`, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(200);
    expect((await fetch(`${service.url}/api/v4/user`, { headers: { authorization: 'Bearer glpat-wrongwrongwrongwrong' } })).status).toBe(
      401,
    );
    // A project that does not exist: one that does would start an index run here.
    const semantic = await fetch(
      `${service.url}/api/v4/projects/${encodeURIComponent(`${projectPath}-missing`)}/search/semantic?q=connection`,
      { headers: { authorization: `Bearer ${user.token}` } },
    );
    expect(semantic.status).toBe(404);
    const named = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query: 'query SomeClientChosenName { currentUser { username } }', operationName: 'SomeClientChosenName' }),
    });
    expect(named.status).toBe(200);
    const unauthenticated = await service.graphql(CHAT, { variables: { content: 'hello' } });
    expect(unauthenticated.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const invalid = await service.graphql('{ noSuchField }', { token: user.token });
    expect(invalid.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('duo_http_requests_total', { route: '/api/v4/version', status: '200' })).toBe(1);
    expect(delta('duo_http_request_duration_seconds_count', { route: '/api/v4/version', status: '200' })).toBe(1);
    expect(delta('duo_http_requests_total', { route: '/api/v4/*', status: '401' })).toBe(1);
    expect(delta('duo_http_requests_total', { route: '/api/v4/projects/:id/search/semantic', status: '404' })).toBe(1);
    expect(delta('duo_http_requests_total', { method: 'POST', route: '/api/graphql', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(delta('duo_graphql_requests_total', { operation_type: 'query', operation: 'currentUser', outcome: 'ok' })).toBe(1);
    expect(delta('duo_graphql_errors_total', { operation: 'aiAction', code: 'UNAUTHENTICATED' })).toBe(1);
    expect(delta('duo_graphql_errors_total', { operation: 'invalid', code: 'GRAPHQL_VALIDATION_FAILED' })).toBe(1);
  });

  it('counts open WebSocket connections and subscriptions per transport', async () => {
    // A subscription counts once graphql-ws has started streaming it (after its resolver subscribed to Redis).
    const before = await scrapeUntil((samples) => valueOf(samples, 'duo_websocket_subscriptions', { transport: 'graphql_ws' }) === 1);
    expect(valueOf(before, 'duo_websocket_connections', { transport: 'graphql_ws' })).toBe(1);
    expect(valueOf(before, 'duo_websocket_subscriptions', { transport: 'graphql_ws' })).toBe(1);
    const second = wsClient(service.url, user.token);
    const secondStream = await subscribe(second, { userId: `gid://gitlab/User/${user.id}`, c: randomUUID() }, SUBSCRIPTION);
    const two = await scrapeUntil((samples) => valueOf(samples, 'duo_websocket_subscriptions', { transport: 'graphql_ws' }) === 2);
    expect(valueOf(two, 'duo_websocket_connections', { transport: 'graphql_ws' })).toBe(2);
    expect(valueOf(two, 'duo_websocket_subscriptions', { transport: 'graphql_ws' })).toBe(2);
    secondStream.stop();
    await second.dispose();
    const one = await scrapeUntil(
      (samples) =>
        valueOf(samples, 'duo_websocket_connections', { transport: 'graphql_ws' }) === 1 &&
        valueOf(samples, 'duo_websocket_subscriptions', { transport: 'graphql_ws' }) === 1,
    );
    expect(valueOf(one, 'duo_websocket_connections', { transport: 'graphql_ws' })).toBe(1);
    expect(valueOf(one, 'duo_websocket_subscriptions', { transport: 'graphql_ws' })).toBe(1);
    const cable = await openRawCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, { token: user.token });
    expect(await cable.take()).toEqual({ type: 'welcome' });
    const identifier = JSON.stringify({
      channel: 'GraphqlChannel',
      query: SUBSCRIPTION,
      variables: { userId: `gid://gitlab/User/${user.id}`, c: randomUUID() },
    });
    cable.send({ command: 'subscribe', identifier });
    expect(await cable.take()).toMatchObject({ type: 'confirm_subscription' });
    const open = await scrape();
    expect(valueOf(open, 'duo_websocket_connections', { transport: 'action_cable' })).toBe(1);
    expect(valueOf(open, 'duo_websocket_subscriptions', { transport: 'action_cable' })).toBe(1);
    await cable.close();
    const closed = await scrapeUntil((samples) => valueOf(samples, 'duo_websocket_connections', { transport: 'action_cable' }) === 0);
    expect(valueOf(closed, 'duo_websocket_connections', { transport: 'action_cable' })).toBe(0);
    expect(valueOf(closed, 'duo_websocket_subscriptions', { transport: 'action_cable' })).toBe(0);
  });

  it('after a chat: time to first chunk and to final, outcome, model latency and tokens, the chat queue', async () => {
    const before = await scrape();
    await ask('Explain what a binary search does and when to use it', true);
    const after = await scrapeUntil(
      (samples) =>
        valueOf(samples, 'duo_queue_jobs_processed_total', { queue: 'chat', status: 'completed' }) >
        valueOf(before, 'duo_queue_jobs_processed_total', { queue: 'chat', status: 'completed' }),
    );
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('duo_chat_answers_total', { outcome: 'answered', error_code: '' })).toBe(1);
    expect(delta('duo_chat_first_chunk_seconds_count')).toBe(1);
    expect(delta('duo_chat_first_chunk_seconds_sum')).toBeGreaterThan(0);
    expect(delta('duo_chat_answer_seconds_count', { outcome: 'answered' })).toBe(1);
    expect(delta('duo_llm_request_duration_seconds_count', { provider: 'openai', outcome: 'ok' })).toBe(1);
    expect(delta('duo_llm_first_token_seconds_count', { provider: 'openai' })).toBe(1);
    expect(delta('duo_llm_tokens_total', { provider: 'openai', direction: 'input' })).toBeGreaterThan(0);
    expect(delta('duo_llm_tokens_total', { provider: 'openai', direction: 'output' })).toBe(3);
    expect(delta('duo_queue_jobs_processed_total', { queue: 'chat', status: 'completed' })).toBe(1);
    expect(delta('duo_queue_job_duration_seconds_count', { queue: 'chat', status: 'completed' })).toBe(1);
    expect(delta('duo_queue_job_wait_seconds_count', { queue: 'chat' })).toBe(1);
  }, 30_000);

  it('after gatekeeper answers and a model failure: verdicts, calls saved, retries and the error code', async () => {
    const before = await scrape();
    await ask('help');
    stub.script({ kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const failed = await ask('Explain what a binary search does and when to use it', true);
    const final = stream.messages.find(
      (message) => message.requestId === failed && message.chunkId === null && message.role.toLowerCase() === 'assistant',
    );
    expect(final?.errors[0]).toMatch(/A9999/);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('duo_chat_gatekeeper_verdicts_total', { status: 'NEEDS_CLARIFICATION' })).toBe(1);
    expect(delta('duo_chat_gatekeeper_llm_calls_saved_total')).toBe(1);
    expect(delta('duo_chat_answers_total', { outcome: 'gatekeeper' })).toBe(1);
    expect(delta('duo_chat_answers_total', { outcome: 'error', error_code: 'A9999' })).toBe(1);
    expect(delta('duo_llm_retries_total', { provider: 'openai', kind: 'http' })).toBe(1);
    expect(delta('duo_llm_request_duration_seconds_count', { provider: 'openai', outcome: 'http' })).toBe(2);
  }, 30_000);

  it('counts an answer a newer request superseded', async () => {
    const before = await scrape();
    stub.script({ kind: 'hang' });
    const calls = stub.requests.length;
    const first = await service.graphql<{ aiAction: { requestId: string } }>(CHAT, {
      token: user.token,
      variables: { content: 'Explain what a hash map is', c: clientSubscriptionId, skip: true },
    });
    expect(first.body.data?.aiAction.requestId).toBeDefined();
    // Once the model has the first request, its generation is registered and the newer one cancels it.
    const deadline = Date.now() + 10_000;
    while (stub.requests.length === calls && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await ask('Explain what a linked list is', true);
    const after = await scrapeUntil(
      (samples) =>
        valueOf(samples, 'duo_chat_answers_total', { outcome: 'superseded' }) >
        valueOf(before, 'duo_chat_answers_total', { outcome: 'superseded' }),
    );
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('duo_chat_answers_total', { outcome: 'superseded' })).toBe(1);
    expect(delta('duo_chat_answers_total', { outcome: 'answered' })).toBe(1);
    expect(delta('duo_llm_request_duration_seconds_count', { provider: 'openai', outcome: 'aborted' })).toBe(1);
  }, 30_000);

  it('after an index run: runs by outcome, files, chunks and bytes, duration, indexes by state', async () => {
    const before = await scrape();
    const started = await service.graphql<{ projectCodeIndexCreate: { jobId: string; errors: string[] } }>(INDEX, {
      token: user.token,
      variables: { input: { projectPath } },
    });
    expect(started.body.data?.projectCodeIndexCreate.errors).toEqual([]);
    const deadline = Date.now() + 20_000;
    let state: unknown = null;
    while (state !== 'ready' && Date.now() < deadline) {
      const { body } = await service.graphql<{ project: { codeIndex: { state: string } | null } }>(CODE_INDEX, {
        token: user.token,
        variables: { path: projectPath },
      });
      state = body.data?.project.codeIndex?.state?.toLowerCase();
      if (state !== 'ready') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(state).toBe('ready');
    // The run's counters move inside the job; the job's own counter when BullMQ's `completed` event
    // fires, after the processor has returned and the job was moved to completed in Redis: wait for both.
    const moved = (samples: Sample[], name: string, labels: Record<string, string>) =>
      valueOf(samples, name, labels) > valueOf(before, name, labels);
    const after = await scrapeUntil(
      (samples) =>
        moved(samples, 'duo_index_runs_total', { outcome: 'indexed' }) &&
        moved(samples, 'duo_queue_jobs_processed_total', { queue: 'indexing', status: 'completed' }),
    );
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('duo_index_runs_total', { outcome: 'indexed' })).toBe(1);
    expect(delta('duo_index_run_duration_seconds_count', { outcome: 'indexed' })).toBe(1);
    expect(delta('duo_index_run_files_sum')).toBe(Object.keys(SAMPLE_FILES).length);
    expect(delta('duo_index_run_chunks_embedded_sum')).toBeGreaterThan(0);
    expect(delta('duo_index_run_bytes_sum')).toBeGreaterThan(0);
    expect(valueOf(after, 'duo_code_indexes', { state: 'ready' })).toBe(1);
    expect(valueOf(after, 'duo_code_indexes', { state: 'failed' })).toBe(0);
    expect(delta('duo_queue_jobs_processed_total', { queue: 'indexing', status: 'completed' })).toBeGreaterThanOrEqual(1);
  }, 40_000);

  it('keeps labels bounded: no user input, paths or users, however many distinct requests come', async () => {
    const distinct = (samples: Sample[]) =>
      new Set(samples.filter((sample) => sample.name.startsWith('duo_')).map((sample) => `${sample.name}${JSON.stringify(sample.labels)}`))
        .size;
    // Warm up each shape once so only new values could add series.
    const shapes = (index: number) => [
      fetch(`${service.url}/api/v4/projects/${encodeURIComponent(`${projectPath}-${index}`)}/search/semantic?q=x${index}`, {
        headers: { authorization: `Bearer ${user.token}` },
      }),
      fetch(`${service.url}/api/v4/no-such-endpoint-${index}`),
      fetch(`${service.url}/-/no-such-page-${index}`),
      fetch(`${service.url}/somewhere-${index}`),
      service.graphql(`query Client${index}Operation { currentUser { username } }`, { token: user.token }),
      service.graphql(`query { field${index} }`, { token: user.token }),
    ];
    await Promise.all(shapes(0));
    const before = distinct(await scrape());
    for (let index = 1; index <= 20; index += 1) await Promise.all(shapes(index));
    const samples = await scrape();
    expect(distinct(samples)).toBe(before);
    const values = samples.flatMap((sample) => Object.values(sample.labels));
    for (const forbidden of [projectPath, user.username, user.token, 'Client1Operation', 'no-such-endpoint', 'somewhere-', 'field1']) {
      expect({ forbidden, found: values.filter((value) => value.includes(forbidden)) }).toEqual({ forbidden, found: [] });
    }
  }, 60_000);

  it('readiness says every check passed, in GitLab shape', async () => {
    const ready = await fetch(`${service.url}/-/readiness`);
    expect(ready.status).toBe(200);
    expect(await readJson(ready)).toEqual({
      status: 'ok',
      master_check: [{ status: 'ok' }],
      db_check: [{ status: 'ok' }],
      redis_check: [{ status: 'ok' }],
      queue_workers_check: [{ status: 'ok' }],
    });
  });

  it('admin status summarises the same instance from a shell', async () => {
    const config = service.running.services.config;
    const env = {
      DATABASE_URL: config.databaseUrl!,
      REDIS_URL: config.redisUrl,
      REDIS_PREFIX: config.redisPrefix,
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'stub-model',
      LLM_BASE_URL: stub.url,
    };
    const text = await runCli('admin', ['status'], env);
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/^duo-slice 17\.11\.0/m);
    expect(text.stdout).toMatch(/^database\s+ok/m);
    expect(text.stdout).toMatch(/^redis\s+ok/m);
    expect(text.stdout).toMatch(/^model\s+openai stub-model/m);
    expect(text.stdout).toMatch(/^reranker\s+none configured \(RERANK_PROVIDER\)$/m);
    expect(text.stdout).toMatch(/^indexes\s+.*ready 1/m);
    const json = await runCli('admin', ['status', '--json'], env);
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout);
    expect(status).toMatchObject({
      version: '17.11.0',
      database: { status: 'ok' },
      redis: { status: 'ok' },
      indexes: { ready: 1, failed: 0 },
      model: { provider: 'openai', model: 'stub-model' },
      reranker: { provider: 'none', model: null },
    });
    expect(status.queues.map((queue: { name: string }) => queue.name).sort()).toEqual(['chat', 'indexing', 'maintenance']);
    expect(status.queues.find((queue: { name: string }) => queue.name === 'chat').workers).toBeGreaterThanOrEqual(1);
    expect(status.gatekeeper.llmCallsSaved).toBeGreaterThanOrEqual(1);
    // Nothing listens on port 1: Redis is reported as failed at once, the rest is still shown, and the exit says so.
    const reranked = await runCli('admin', ['status'], {
      ...env,
      RERANK_PROVIDER: 'cohere',
      RERANK_URL: 'http://127.0.0.1:1/v1',
      RERANK_MODEL: 'bge-reranker-v2-m3',
    });
    expect(reranked.stdout).toMatch(/^reranker\s+cohere bge-reranker-v2-m3$/m);
    const down = await runCli('admin', ['status'], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^redis\s+FAILED: Redis did not answer$/m);
    expect(down.stdout).toMatch(/^database\s+ok/m);
    expect(down.stdout).toMatch(/^indexes\s+.*ready 1/m);
    expect(down.stderr).toMatch(/a dependency did not answer/);
  }, 60_000);
});

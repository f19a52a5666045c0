import { readJson } from '../helpers/http';
import { getIntrospectionQuery } from 'graphql';
import { startTestService, type TestService } from '../helpers/test-service';

describe('GraphiQL playground at GET /api/graphql', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it('serves the page to browsers, loading nothing from other hosts', async () => {
    const response = await fetch(`${service.url}/api/graphql`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    // It links to the chat page; everything else it names is its own asset.
    expect(html).toContain('<a class="duo-chat-link" href="/-/duo-chat">');
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]).filter((source) => source !== '/-/duo-chat');
    expect(sources.length).toBeGreaterThanOrEqual(5);
    for (const source of sources) expect(source).toMatch(/^\/-\/graphiql\//);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    expect(html).toContain('isHeadersEditorEnabled');
    for (const source of sources) {
      const asset = await fetch(`${service.url}${source}`);
      expect({ source, status: asset.status }).toEqual({ source, status: 200 });
      expect(Number(asset.headers.get('content-length'))).toBeGreaterThan(1000);
    }
  });

  it('lets GraphiQL introspect the schema within the depth and cost limits', async () => {
    const { body } = await service.graphql(getIntrospectionQuery());
    expect(body.errors).toBeUndefined();
    expect(body.data).toHaveProperty('__schema.queryType.name', 'Query');
  });

  it('answers liveness, and readiness naming the dependency that is missing: no worker runs for this API', async () => {
    expect(await readJson(await fetch(`${service.url}/-/liveness`))).toEqual({ status: 'ok' });
    const ready = await fetch(`${service.url}/-/readiness`);
    expect(ready.status).toBe(503);
    expect(await readJson(ready)).toEqual({
      status: 'failed',
      master_check: [{ status: 'failed' }],
      db_check: [{ status: 'ok' }],
      redis_check: [{ status: 'ok' }],
      queue_workers_check: [{ status: 'failed', message: 'no worker listens on the maintenance, chat, indexing queues' }],
    });
  });
});

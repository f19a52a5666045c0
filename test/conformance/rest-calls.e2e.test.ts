import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

/** One check of an answer: a dot path into the JSON body ('' = the whole body, text when not JSON) or a header, and one test. */
type Check = ({ path: string } | { header: string }) & {
  equals?: unknown;
  matches?: string;
  includes?: unknown;
  length?: number;
  minLength?: number;
  type?: 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null';
};

/** A REST fixture in the suite's shared format (test/conformance/README.md, kind "rest"). */
type RestFixture = {
  name: string;
  kind: 'rest';
  client: string;
  source: { repository: string; path: string; ref?: string };
  versions: { since: string | null; until: string | null };
  notes?: string;
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  auth?: 'token' | 'none';
  expect: { status?: number; checks?: Check[] };
};

const FIXTURES_DIR = path.join(__dirname, 'rest');

function loadFixtures(): Array<RestFixture & { file: string }> {
  return readdirSync(FIXTURES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((directory) =>
      readdirSync(path.join(FIXTURES_DIR, directory.name))
        .filter((file) => file.endsWith('.json'))
        .sort()
        .map((file) => ({
          ...(JSON.parse(readFileSync(path.join(FIXTURES_DIR, directory.name, file), 'utf8')) as RestFixture),
          file: `${directory.name}/${file}`,
        })),
    );
}

/** a.b[0].c into the value; undefined when any step is missing. */
function valueAt(root: unknown, dotPath: string): unknown {
  if (!dotPath) return root;
  return dotPath
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean)
    .reduce<unknown>(
      (value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined),
      root,
    );
}

/** Dotted version compare: -1, 0, 1. */
function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let index = 0; index < Math.max(pa.length, pb.length); index += 1) {
    const difference = (pa[index] ?? 0) - (pb[index] ?? 0);
    if (difference) return Math.sign(difference);
  }
  return 0;
}

function inWindow(versions: RestFixture['versions'], version: string): boolean {
  return (
    (!versions.since || compareVersions(version, versions.since) >= 0) && (!versions.until || compareVersions(version, versions.until) < 0)
  );
}

const fixtures = loadFixtures();

// Every REST call of GitLab's clients, kept as data, run over HTTP against the real service with a
// real token: a user with a Duo Enterprise seat, Developer of a private project indexed by the real
// worker, a stub model behind code suggestions.
describe('REST calls of GitLab clients (conformance fixtures)', () => {
  let service: TestService;
  let stub: StubLlmServer;
  let repo: GitRepo;
  let user: UserWithToken;
  let project: Project;
  let groupPath: string;
  let version: string;
  const outcomes: Array<{ client: string; name: string; inWindow: boolean; passed: boolean }> = [];

  function placeholders(): Record<string, unknown> {
    return {
      'user.id': user.id,
      'user.gid': `gid://gitlab/User/${user.id}`,
      'user.username': user.username,
      token: user.token,
      'project.id': project.id,
      'project.gid': `gid://gitlab/Project/${project.id}`,
      'project.fullPath': project.fullPath,
      'project.pathEncoded': encodeURIComponent(project.fullPath),
      'group.fullPath': groupPath,
      baseUrl: service.url,
      clientSubscriptionId: crypto.randomUUID(),
      version,
    };
  }

  /** Fills {{name}}: a string that is exactly one placeholder takes the value with its type. */
  function fill<T>(value: T): T {
    const values = placeholders();
    const replace = (text: string): unknown => {
      const whole = /^\{\{([\w.]+)\}\}$/.exec(text);
      if (whole && whole[1] in values) return values[whole[1]];
      return text.replace(/\{\{([\w.]+)\}\}/g, (match, name: string) => (name in values ? String(values[name]) : match));
    };
    const walk = (node: unknown): unknown => {
      if (typeof node === 'string') return replace(node);
      if (Array.isArray(node)) return node.map(walk);
      if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([key, inner]) => [key, walk(inner)]));
      return node;
    };
    return walk(value) as T;
  }

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['return ', 'sum;'] } });
    service = await startTestService({
      role: 'all',
      env: { INDEX_DEBOUNCE_MS: '0', LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub-coder' },
    });
    repo = createGitRepo(BILLING_FILES);
    user = await userWithToken(service.prisma, { scopes: ['api'] });
    groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (
      await createProject(service.prisma, { fullPath: `${groupPath}/${unique('shop')}`, repository: repo.path, visibility: 'private' })
    ).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    version = ((await (await fetch(`${service.url}/api/v4/version`)).json()) as { version: string }).version;
    // The first semantic search starts indexing (422 until it is done), as on GitLab.
    const search = () =>
      fetch(`${service.url}/api/v4/projects/${project.id}/search/semantic?q=ready`, { headers: { authorization: `Bearer ${user.token}` } });
    const started = Date.now();
    while ((await search()).status !== 200) {
      if (Date.now() - started > 30_000) throw new Error('the project was never indexed');
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  });
  afterAll(async () => {
    await service?.close();
    await stub?.close();
    repo?.destroy();
    const summary = new Map<string, { total: number; passed: number; inWindow: number }>();
    for (const outcome of outcomes) {
      const entry = summary.get(outcome.client) ?? { total: 0, passed: 0, inWindow: 0 };
      entry.total += 1;
      entry.passed += outcome.passed ? 1 : 0;
      entry.inWindow += outcome.inWindow ? 1 : 0;
      summary.set(outcome.client, entry);
    }
    process.stdout.write(
      `REST conformance at ${version}: ` +
        `${[...summary]
          .map(([client, entry]) => `${client} ${entry.passed}/${entry.total} pass (${entry.inWindow} sent at this version)`)
          .join('; ')}\n`,
    );
  });

  it('has well-formed fixtures: a source, a version window and an expected status each, unique names per client', () => {
    expect(fixtures.length).toBeGreaterThan(0);
    const names = new Set<string>();
    for (const fixture of fixtures) {
      expect({ file: fixture.file, kind: fixture.kind }).toEqual({ file: fixture.file, kind: 'rest' });
      expect(fixture.file.startsWith(`${fixture.client}/`)).toBe(true);
      expect(fixture.source.repository).toMatch(/^[\w.-]+\/[\w./-]+$/);
      expect(fixture.source.path.length).toBeGreaterThan(0);
      expect(Object.keys(fixture.versions).sort()).toEqual(['since', 'until']);
      for (const bound of [fixture.versions.since, fixture.versions.until]) if (bound !== null) expect(bound).toMatch(/^\d+\.\d+\.\d+$/);
      expect(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).toContain(fixture.method);
      expect(names.has(`${fixture.client}/${fixture.name}`)).toBe(false);
      names.add(`${fixture.client}/${fixture.name}`);
    }
  });

  it.each(fixtures.map((fixture) => [`${fixture.client}/${fixture.name}`, fixture] as const))('%s', async (_label, fixture) => {
    const filled = fill(fixture);
    const url = new URL(`${service.url}${filled.path}`);
    for (const [key, value] of Object.entries(filled.query ?? {})) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { ...(filled.headers ?? {}) };
    if ((filled.auth ?? 'token') === 'token') headers.Authorization = `Bearer ${user.token}`;
    if (filled.body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/json';
    let passed = false;
    try {
      const response = await fetch(url, {
        method: filled.method,
        headers,
        body: filled.body === undefined ? (filled.method === 'POST' ? '{}' : undefined) : JSON.stringify(filled.body),
      });
      const text = await response.text();
      const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
      const body: unknown = isJson && text ? JSON.parse(text) : text;
      expect({ status: response.status, body: response.status === (filled.expect.status ?? 200) ? 'ok' : body }).toEqual({
        status: filled.expect.status ?? 200,
        body: 'ok',
      });
      for (const check of filled.expect.checks ?? []) {
        const where = 'header' in check ? `header ${check.header}` : `path "${check.path}"`;
        const actual = 'header' in check ? response.headers.get(check.header) : valueAt(body, check.path);
        const subject = { where, actual };
        if ('equals' in check) expect(subject).toEqual({ where, actual: check.equals });
        if (check.matches !== undefined) expect(subject).toEqual({ where, actual: expect.stringMatching(new RegExp(check.matches)) });
        if ('includes' in check) expect(subject).toEqual({ where, actual: expect.arrayContaining([check.includes]) });
        if (check.length !== undefined)
          expect({ where, length: (actual as unknown[] | undefined)?.length }).toEqual({ where, length: check.length });
        if (check.minLength !== undefined)
          expect({ where, atLeast: ((actual as unknown[] | undefined)?.length ?? -1) >= check.minLength }).toEqual({
            where,
            atLeast: true,
          });
        if (check.type !== undefined) {
          const type = actual === null ? 'null' : Array.isArray(actual) ? 'array' : typeof actual;
          expect({ where, type }).toEqual({ where, type: check.type });
        }
      }
      passed = true;
    } finally {
      outcomes.push({ client: fixture.client, name: fixture.name, inWindow: inWindow(fixture.versions, version), passed });
    }
  });
});

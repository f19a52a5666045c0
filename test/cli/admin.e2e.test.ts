import { createTestDatabase, type TestDatabase } from '../helpers/test-database';
import { runCli } from '../helpers/run-cli';
import { startTestService, type TestService } from '../helpers/test-service';

// The admin commands as an operator runs them: a process, flags, one JSON line or a clear error.
describe('npm run admin', () => {
  let database: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    env = { DATABASE_URL: database.url };
  });
  afterAll(() => database.drop());

  const admin = (...args: string[]) => runCli('admin', args, env);

  it('sets up a user with a Duo seat and a project, step by step', async () => {
    for (const args of [
      ['create-user', '--username', 'dana', '--name', 'Dana Scully', '--email', 'dana@example.com'],
      ['create-group', '--path', 'fbi', '--plan', 'ultimate'],
      ['buy-addon', '--group', 'fbi', '--add-on', 'duo_enterprise', '--seats', '2'],
      ['assign-seat', '--group', 'fbi', '--add-on', 'duo_enterprise', '--username', 'dana'],
      ['create-project', '--path', 'fbi/x-files', '--repository', '/tmp/x-files.git', '--visibility', 'private'],
      ['add-member', '--path', 'fbi/x-files', '--username', 'dana', '--access-level', 'maintainer'],
    ]) {
      const result = await admin(...args);
      expect({ args, stderr: result.stderr, code: result.code }).toEqual({ args, stderr: '', code: 0 });
    }
    const created = await admin('create-token', '--username', 'dana', '--scopes', 'api,ai_features', '--expires-at', '2099-01-01');
    expect(created.code).toBe(0);
    const answer = JSON.parse(created.stdout);
    expect(answer).toMatchObject({
      token: expect.stringMatching(/^glpat-[\w-]{20}$/),
      scopes: ['api', 'ai_features'],
      expires_at: '2099-01-01',
    });

    const service: TestService = await startTestService({ env: { DATABASE_URL: database.url } });
    try {
      const { body } = await service.graphql('{ currentUser { username duoChatAvailable } project(fullPath: "fbi/x-files") { name } }', {
        token: answer.token,
      });
      expect(body.data).toEqual({ currentUser: { username: 'dana', duoChatAvailable: true }, project: { name: 'x-files' } });
      const revoked = await admin('revoke-token', '--id', String(answer.id));
      expect(revoked.code).toBe(0);
      // Another process revoked it: the service's token cache (AUTH_CACHE_MS, 3 s) lets it go within seconds.
      const deadline = Date.now() + 15_000;
      let status = 200;
      while (status !== 401 && Date.now() < deadline) {
        status = (await service.graphql('{ currentUser { username } }', { token: answer.token })).status;
        if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(status).toBe(401);
    } finally {
      // The whole close: also the service's Redis keys (its queues' meta keys were left behind).
      await service.close();
    }
  }, 60_000);

  it.each([
    [['create-user'], /--username is required/],
    [['create-user', '--username', 'bad name'], /username must start with/],
    [['create-user', '--username', 'x', '--unknown', 'y'], /Unknown option '--unknown'/],
    [['create-token', '--username', 'nobody'], /User nobody not found/],
    [['create-token', '--username', 'dana', '--scopes', 'sudo'], /scopes must be one of: api, read_api, ai_features/],
    [['create-token', '--username', 'dana', '--expires-at', '2001-01-01'], /expires_at must be in the future/],
    [['create-group', '--path', 'g2', '--plan', 'gold'], /plan must be one of: free, premium, ultimate/],
    [['buy-addon', '--group', 'fbi', '--add-on', 'duo_pro', '--seats', '0'], /seats must be a positive whole number/],
    [['add-member', '--path', 'fbi', '--username', 'dana', '--access-level', '35'], /access level must be one of/],
    [['no-such-command'], /Unknown command "no-such-command"/],
  ])('refuses %j with a clear message and a non-zero exit', async (args, message) => {
    const result = await admin(...args);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('changes a project: repository, exclusions, Duo switch and a new webhook secret', async () => {
    await admin('create-group', '--path', 'ops', '--plan', 'premium');
    expect((await admin('create-project', '--path', 'ops/site')).code).toBe(0);
    const updated = await admin(
      'update-project',
      '--path',
      'ops/site',
      '--repository',
      '/srv/site.git',
      '--exclusions',
      'secrets/, *.pem',
      '--duo-features-enabled',
      'false',
      '--new-webhook-secret',
    );
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      repository: '/srv/site.git',
      context_exclusions: ['secrets/', '*.pem'],
      duo_features_enabled: false,
      webhook_secret: expect.any(String),
    });
    const cleared = JSON.parse((await admin('update-project', '--path', 'ops/site', '--exclusions', '')).stdout);
    expect(cleared).toMatchObject({ context_exclusions: [] });
    expect(cleared.webhook_secret).toBeUndefined();
    const missing = await admin('update-project', '--path', 'ops/nothing', '--repository', '/x');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/not found/);
  });
});

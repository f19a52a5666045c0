import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from '../src/config';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      redisUrl: 'redis://127.0.0.1:6379',
      logLevel: 'info',
      demoSeed: true,
      disabledContextCategories: [],
      databasePoolSize: 10,
      databaseRequestTimeoutMs: 15_000,
      chatIndexWaitMs: 30_000,
    });
    expect(config.dataDir).toMatch(/\.data$/);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('starts two chunk threads on PostgreSQL (at most the cores), one on the embedded database, or INDEX_THREADS', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://localhost/duo' }).indexing.threads).toBe(Math.min(2, availableParallelism()));
    expect(loadConfig({}).indexing.threads).toBe(1);
    expect(loadConfig({ DATABASE_URL: 'postgresql://localhost/duo', INDEX_THREADS: '0' }).indexing.threads).toBe(0);
    expect(loadConfig({ INDEX_THREADS: '3' }).indexing.threads).toBe(3);
  });

  it('runs a worker-only process at nice 10 unless WORKER_NICE says otherwise', () => {
    expect(loadConfig({}).workerNice).toBe(10);
    expect(loadConfig({ WORKER_NICE: '0' }).workerNice).toBe(0);
    expect(loadConfig({ WORKER_NICE: '19' }).workerNice).toBe(19);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DEMO_SEED: 'maybe' }, 'DEMO_SEED'],
    [{ DUO_DISABLED_CONTEXT_CATEGORIES: 'file,nonsense' }, 'DUO_DISABLED_CONTEXT_CATEGORIES'],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ EXTERNAL_URL: 'duo.example.com' }, 'EXTERNAL_URL'],
    [{ FEATURE_FLAGS: 'good_flag,Bad Flag' }, 'FEATURE_FLAGS'],
    [{ WORKER_NICE: '20' }, 'WORKER_NICE'],
    [{ WORKER_NICE: '-1' }, 'WORKER_NICE'],
    [{ WORKER_NICE: 'low' }, 'WORKER_NICE'],
    [{ CHAT_INDEX_WAIT_MS: '-1' }, 'CHAT_INDEX_WAIT_MS'],
    [{ CHAT_INDEX_WAIT_MS: '300001' }, 'CHAT_INDEX_WAIT_MS'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`${name}:`));
  });

  it('takes EXTERNAL_URL without its trailing slash, and leaves it unset by default (the URL a request came to)', () => {
    expect(loadConfig({ EXTERNAL_URL: 'https://duo.example.com/gitlab/' }).externalUrl).toBe('https://duo.example.com/gitlab');
    expect(loadConfig({}).externalUrl).toBeUndefined();
  });

  it('allows metrics from loopback by default, and refuses a range that is not one, naming it', () => {
    expect(loadConfig({}).metrics.allowedCidrs).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ METRICS_ALLOWED_CIDRS: ' 10.0.0.0/8 , 192.168.1.7,fd00::/8 ' }).metrics.allowedCidrs).toEqual([
      '10.0.0.0/8',
      '192.168.1.7',
      'fd00::/8',
    ]);
    for (const bad of ['10.0.0.0/33', 'prometheus.local', '::1/129', '10.0.0.0/8/1', '10.0.0.0/']) {
      expect(() => loadConfig({ METRICS_ALLOWED_CIDRS: bad })).toThrow(
        new RegExp(`METRICS_ALLOWED_CIDRS: "${bad.replace(/[.*/]/g, '\\$&')}" is not an address or CIDR range`),
      );
    }
  });

  it('names every bad variable at once, and treats blank as unset', () => {
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'y', HOST: '  ' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });

  it('reads EXTERNAL_URL without its trailing slash and FEATURE_FLAGS as a list, with GitLab-client defaults', () => {
    expect(loadConfig({}).externalUrl).toBeUndefined();
    expect(loadConfig({}).featureFlags).toEqual(['advanced_context_resolver', 'code_suggestions_context']);
    const config = loadConfig({ EXTERNAL_URL: 'https://duo.example.com/gitlab/', FEATURE_FLAGS: ' my_flag, other_flag ,my_flag' });
    expect(config.externalUrl).toBe('https://duo.example.com/gitlab');
    expect(config.featureFlags).toEqual(['my_flag', 'other_flag']);
  });

  describe('GitLab (connected mode)', () => {
    it('is standalone without GITLAB_URL, and takes its URL without a trailing slash', () => {
      expect(loadConfig({}).gitlab).toBeNull();
      const config = loadConfig({ GITLAB_URL: 'https://gitlab.example.com/', GITLAB_SERVICE_TOKEN: 'glpat-service' });
      expect(config.gitlab).toEqual({
        url: 'https://gitlab.example.com',
        serviceToken: 'glpat-service',
        timeoutMs: 10_000,
        duoAccess: { kind: 'all' },
        duoAddOn: 'duo_pro',
      });
      const withHooks = loadConfig({ GITLAB_URL: 'https://gitlab.example.com', GITLAB_SYSTEM_HOOK_TOKEN: 'system-hook-secret-0123' });
      expect(withHooks.gitlab?.systemHookToken).toBe('system-hook-secret-0123');
    });

    it.each([
      ['groups:platform, platform/backend ,platform', { kind: 'groups', groups: ['platform', 'platform/backend'] }],
      ['users:alice,bob', { kind: 'users', usernames: ['alice', 'bob'] }],
      ['all', { kind: 'all' }],
    ])('reads DUO_ACCESS=%s', (value, rule) => {
      expect(loadConfig({ GITLAB_URL: 'http://127.0.0.1:8080', GITLAB_SERVICE_TOKEN: 't', DUO_ACCESS: value }).gitlab?.duoAccess).toEqual(
        rule,
      );
    });

    it.each([
      [{ GITLAB_URL: 'ftp://gitlab.example.com' }, /GITLAB_URL: must be a URL starting with http:\/\/ or https:\/\//],
      [{ GITLAB_URL: 'gitlab.example.com' }, /GITLAB_URL:/],
      [{ GITLAB_URL: 'https://root:secret@gitlab.example.com' }, /GITLAB_URL: must be the instance URL alone/],
      [{ GITLAB_URL: 'https://gitlab.example.com/?private_token=x' }, /GITLAB_URL: must be the instance URL alone/],
      [{ GITLAB_SERVICE_TOKEN: 'glpat-x' }, /GITLAB_SERVICE_TOKEN: only applies with GITLAB_URL/],
      [{ DUO_ACCESS: 'all' }, /DUO_ACCESS: only applies with GITLAB_URL/],
      [{ GITLAB_SYSTEM_HOOK_TOKEN: 'system-hook-secret-0123' }, /GITLAB_SYSTEM_HOOK_TOKEN: only applies with GITLAB_URL/],
      [{ GITLAB_URL: 'https://gitlab.example.com', GITLAB_SYSTEM_HOOK_TOKEN: 'short' }, /GITLAB_SYSTEM_HOOK_TOKEN: must be at least 16/],
      [{ GITLAB_URL: 'https://gitlab.example.com', DUO_ACCESS: 'everyone' }, /DUO_ACCESS: "everyone" is not all, groups:/],
      [{ GITLAB_URL: 'https://gitlab.example.com', DUO_ACCESS: 'users:' }, /DUO_ACCESS: users: names no user/],
      [{ GITLAB_URL: 'https://gitlab.example.com', DUO_ACCESS: 'users:a b' }, /DUO_ACCESS: "a b" is not a GitLab username/],
      [{ GITLAB_URL: 'https://gitlab.example.com', DUO_ACCESS: 'groups:platform' }, /DUO_ACCESS: groups: needs GITLAB_SERVICE_TOKEN/],
      [{ GITLAB_URL: 'https://gitlab.example.com', DUO_ADD_ON: 'duo_core' }, /DUO_ADD_ON: must be duo_pro or duo_enterprise/],
    ])('refuses %j', (env, message) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    });
  });
});

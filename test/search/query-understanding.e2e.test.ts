import { indexedProject, searchedFiles } from '../helpers/indexed-project';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startTestService, type TestService } from '../helpers/test-service';

// A client library with a driver per database, named as such libraries name them (pg, not
// postgresql), and a pool whose test suite says "test" and "alive" far more often than the pool does.
const FILES: Record<string, string> = {
  'lib/pg-client.js': `// Speaks the wire protocol of the server through the pg driver.
const { Client } = require('pg');
exports.connect = function connect(options) {
  const client = new Client({ host: options.host, port: options.port || 5432 });
  return client.connect().then(() => client);
};
`,
  'lib/mysql-client.js': `// Speaks the wire protocol of the server through the mysql driver.
const mysql = require('mysql');
exports.connect = function connect(options) {
  const connection = mysql.createConnection({ host: options.host, port: options.port || 3306 });
  return new Promise((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve(connection))));
};
`,
  'lib/pool.js': `class Pool {
  /** Hands out an idle connection; before that it sends a ping, and a connection that does not answer is dropped. */
  async acquire() {
    const connection = this.idle.pop();
    if (!connection) return this.create();
    try {
      await connection.ping();
      return connection;
    } catch (error) {
      connection.destroy();
      return this.acquire();
    }
  }
}
module.exports = Pool;
`,
  'test/pool.test.js': `const Pool = require('../lib/pool');
test('the pool tests that a connection is alive', async () => { expect(await new Pool().acquire()).toBeAlive(); });
test('a connection that is not alive fails the test', async () => { ping.mockRejectedValue(new Error('not alive')); });
test('the test pool hands out a live connection', async () => { expect(connection.alive).toBe(true); });
test('each test gets a pool whose connections are alive', async () => { expect(pool.alive).toBe(true); });
`,
};

// Query understanding through GraphQL code search, on an index built by the real worker.
describe('code search reads the question: abbreviations and the sense of "test"', () => {
  let service: TestService;
  let repo: GitRepo;
  let token: string;
  let projectPath: string;

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '0' } });
    repo = createGitRepo(FILES);
    ({ token, projectPath } = await indexedProject(service, { repository: repo.path, name: 'drivers' }));
  });
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  const paths = (query: string) => searchedFiles(service, { token, projectPath, query, first: 10 });

  it('finds the pg client for a question that says PostgreSQL', async () => {
    expect((await paths('How does it connect to PostgreSQL?'))[0]).toBe('lib/pg-client.js');
    expect((await paths('How does it connect to a postgres server?'))[0]).toBe('lib/pg-client.js');
    expect((await paths('How does it connect to MySQL?'))[0]).toBe('lib/mysql-client.js');
  });

  it('answers "how does the pool test a connection" with the pool, and "the tests for the pool" with its tests', async () => {
    expect((await paths('How does the pool test that a connection is alive?'))[0]).toBe('lib/pool.js');
    expect((await paths('How does the pool test a connection before handing it out?'))[0]).toBe('lib/pool.js');
    expect((await paths('Where are the tests for the pool?'))[0]).toBe('test/pool.test.js');
  });
});

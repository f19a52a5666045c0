import { indexedProject, searchedFiles } from '../helpers/indexed-project';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startTestService, type TestService } from '../helpers/test-service';
// Every file below talks about pinging an idle connection before reuse; the tests, the type
// declarations, the README and the changelog say it more often than the implementation does.
const FILES: Record<string, string> = {
  'src/pool.ts': `export class Pool {
  private idle: Connection[] = [];
  /** Hands out an idle connection, pinging it first; a dead one is dropped and another tried. */
  async acquireConnection(): Promise<Connection> {
    const connection = this.idle.pop();
    if (!connection) return this.connect();
    try { await connection.ping(); return connection; } catch { connection.destroy(); return this.acquireConnection(); }
  }
}
`,
  'src/pool.test.ts': `import { Pool } from './pool';
describe('Pool', () => {
  it('pings an idle connection before reuse', async () => { const pool = new Pool(); await pool.acquireConnection();
  expect(ping).toHaveBeenCalled(); });
  it('drops an idle connection whose ping fails before reuse', async () => { ping.mockRejectedValue(new Error('dead')); await
  pool.acquireConnection(); });
  it('reuses an idle connection after a good ping', async () => { await pool.acquireConnection(); expect(connect).not.toHaveBeenCalled();
  });
});
`,
  'types/pool.d.ts': `export declare class Pool {
  /** Acquire an idle connection; the idle connection is pinged before reuse. */
  acquireConnection(): Promise<Connection>;
}
`,
  'README.md':
    `# pool\n\nThe pool pings an idle connection before reuse, so a connection the server closed is never handed out.\nAn ` +
    `idle connection that fails its ping is dropped.\n`,
  'CHANGELOG.md': `## 2.0.0\n\n- Pool: ping an idle connection before reuse (#12).\n- Pool: drop an idle connection when its ping fails.\n`,
};

// File roles and the file-level ranking through GraphQL, on an index built by the real worker.
describe('code search prefers the implementation unless asked otherwise', () => {
  let service: TestService;
  let repo: GitRepo;
  let token: string;
  let projectPath: string;
  let projectId: number;

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '0' } });
    repo = createGitRepo(FILES);
    ({ token, projectPath, projectId } = await indexedProject(service, { repository: repo.path, name: 'pool' }));
  });
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  const paths = (query: string) => searchedFiles(service, { token, projectPath, query, first: 10 });

  it('records each file’s role in the manifest', async () => {
    const files = await service.prisma.codeIndexFile.findMany({
      where: { projectId },
      select: { path: true, role: true },
      orderBy: { path: 'asc' },
    });
    expect(Object.fromEntries(files.map((file) => [file.path, file.role]))).toEqual({
      'CHANGELOG.md': 'changelog',
      'README.md': 'docs',
      'src/pool.test.ts': 'test',
      'src/pool.ts': 'implementation',
      'types/pool.d.ts': 'types',
    });
  });

  it('answers "how does it work" with the implementation first', async () => {
    expect((await paths('How is an idle connection pinged before reuse?'))[0]).toBe('src/pool.ts');
  });

  it('answers with the tests, the type declarations or the docs when the question asks for them', async () => {
    expect((await paths('Which tests check that an idle connection is pinged before reuse?'))[0]).toBe('src/pool.test.ts');
    expect((await paths('Where are the type declarations for acquiring an idle connection?'))[0]).toBe('types/pool.d.ts');
    expect((await paths('Which documentation explains pinging idle connections before reuse?'))[0]).toBe('README.md');
  });
});

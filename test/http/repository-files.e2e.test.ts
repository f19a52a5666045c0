import { userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

// GitLab's raw file endpoint, as the chat page's file view calls it. The file view's reads
// themselves are tested through the page (test/web/duo-chat-page.e2e.test.ts); this is the route's
// own behaviour when a request is refused before anything is read.
describe('GET /api/v4/projects/:id/repository/files/:file_path/raw', () => {
  let service: TestService;
  let user: UserWithToken;

  beforeAll(async () => {
    service = await startTestService();
    user = await userWithToken(service.prisma);
  });
  afterAll(() => service.close());

  const raw = (filePath: string) =>
    fetch(`${service.url}/api/v4/projects/1/repository/files/${filePath}/raw`, { headers: { authorization: `Bearer ${user.token}` } });

  it('refuses a path outside the repository with 400, and a database failure meanwhile ends nothing', async () => {
    // The viewer's Duo access is looked up beside the file path's check. While the database cannot
    // answer that lookup, a refused path must still be a 400, with the lookup's failure handled: an
    // unhandled rejection would end the process.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    await service.prisma.$executeRawUnsafe('ALTER TABLE seat_assignments RENAME TO seat_assignments_away');
    try {
      const refused = await raw(encodeURIComponent('../etc/passwd'));
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: 'file_path must be a path inside the repository', field: 'file_path' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(unhandled).toEqual([]);
    } finally {
      await service.prisma.$executeRawUnsafe('ALTER TABLE seat_assignments_away RENAME TO seat_assignments');
      process.off('unhandledRejection', record);
    }
    // The service still answers, with the same rule as search: no Duo seat, no code.
    const forbidden = await raw('README.md');
    expect(forbidden.status).toBe(403);
  });
});

import { loadConfig } from '../../src/config';
import { startTestService, type TestService } from '../helpers/test-service';

// A job's statements have a limit too: a database that stops answering fails the job (which is
// retried) instead of holding it, its lock renewed, for as long as the database hangs.
describe('DATABASE_JOB_TIMEOUT_MS', () => {
  let service: TestService;
  afterAll(async () => service?.close());

  it('defaults to 10 minutes', () => {
    expect(loadConfig({}).databaseJobTimeoutMs).toBe(600_000);
  });

  it("limits each statement of a worker process's jobs", async () => {
    service = await startTestService({ role: 'worker', env: { DATABASE_JOB_TIMEOUT_MS: '300' } });
    const started = Date.now();
    await expect(service.prisma.$queryRawUnsafe('SELECT pg_sleep(5)')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});

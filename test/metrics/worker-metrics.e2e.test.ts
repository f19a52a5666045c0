import { createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { getFrom, parseScrape, valueOf, type Sample } from '../helpers/prometheus';
import { startTestService, type TestService } from '../helpers/test-service';

// A worker-only process has no API port: its figures (index runs, jobs) are on WORKER_METRICS_PORT.
describe('metrics of a worker-only process', () => {
  let service: TestService;
  let repo: GitRepo;

  beforeAll(async () => {
    service = await startTestService({ role: 'worker', env: { WORKER_METRICS_PORT: '0', INDEX_DEBOUNCE_MS: '0' } });
    repo = createGitRepo(SAMPLE_FILES);
  });
  afterAll(async () => {
    await service?.close();
    repo?.destroy();
  });

  const scrape = async (): Promise<Sample[]> => {
    const response = await fetch(`${service.running.metricsUrl}/-/metrics`);
    expect(response.status).toBe(200);
    return parseScrape(await response.text());
  };

  it('serves its own index runs and jobs on its metrics port, to loopback only', async () => {
    expect(service.running.url).toBeNull();
    expect(service.running.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique('lib')}`, repository: repo.path });
    await service.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api' });
    const deadline = Date.now() + 20_000;
    let samples = await scrape();
    while (valueOf(samples, 'duo_queue_jobs_processed_total', { queue: 'indexing', status: 'completed' }) < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      samples = await scrape();
    }
    expect(valueOf(samples, 'duo_index_runs_total', { outcome: 'indexed' })).toBe(1);
    expect(valueOf(samples, 'duo_index_run_files_sum')).toBe(Object.keys(SAMPLE_FILES).length);
    expect(valueOf(samples, 'duo_queue_jobs_processed_total', { queue: 'indexing', status: 'completed' })).toBe(1);
    expect(valueOf(samples, 'duo_code_indexes', { state: 'ready' })).toBe(1);
    expect(valueOf(samples, 'duo_queue_workers', { queue: 'indexing' })).toBeGreaterThanOrEqual(1);
    // The default allows loopback (127.0.0.0/8), not a client a local proxy forwards.
    expect((await getFrom(`${service.running.metricsUrl}/-/metrics`, { localAddress: '127.0.0.2' })).status).toBe(200);
    expect((await getFrom(`${service.running.metricsUrl}/-/metrics`, { headers: { 'X-Forwarded-For': '198.51.100.4' } })).status).toBe(404);
  }, 40_000);

  it('counts a failed run, its failed job and the failed index', async () => {
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    const { project } = await createProject(service.prisma, {
      fullPath: `${group}/${unique('gone')}`,
      repository: '/nonexistent/repository.git',
    });
    await service.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api' });
    const deadline = Date.now() + 20_000;
    let samples = await scrape();
    while (valueOf(samples, 'duo_queue_jobs_processed_total', { queue: 'indexing', status: 'failed' }) < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      samples = await scrape();
    }
    // A repository that cannot be read does not retry: one attempt, one failed run.
    expect(valueOf(samples, 'duo_index_runs_total', { outcome: 'failed' })).toBe(1);
    expect(valueOf(samples, 'duo_index_run_duration_seconds_count', { outcome: 'failed' })).toBe(1);
    expect(valueOf(samples, 'duo_queue_jobs_processed_total', { queue: 'indexing', status: 'failed' })).toBe(1);
    expect(valueOf(samples, 'duo_code_indexes', { state: 'failed' })).toBe(1);
    expect(valueOf(samples, 'duo_code_indexes', { state: 'ready' })).toBe(1);
  }, 40_000);
});

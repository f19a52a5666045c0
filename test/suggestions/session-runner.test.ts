import { SessionRunner } from '../../src/suggestions/sessions/session-runner';
import type { SessionState } from '../../src/suggestions/sessions/run-generation';

const state = (revision: number): SessionState => ({
  fileName: 'a.py',
  projectPath: null,
  content: `x${revision}`,
  cursorOffset: 0,
  revision,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SessionRunner', () => {
  it('debounces a burst into one generation of the newest state, and forgets idle sessions', async () => {
    const generated: number[] = [];
    const runner = new SessionRunner({
      debounceMs: 20,
      idleMs: 60,
      generate: async (job) => void generated.push(job.state.revision),
      publish: async () => undefined,
      onError: () => undefined,
    });
    runner.update('s', state(1));
    runner.update('s', state(3));
    runner.update('s', state(2));
    await sleep(40);
    expect(generated).toEqual([3]);
    expect(runner.size).toBe(1);
    await sleep(60);
    expect(runner.size).toBe(0);
    runner.close();
  });
});

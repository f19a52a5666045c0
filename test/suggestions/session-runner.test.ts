import { SessionRunner } from '../../src/suggestions/sessions/session-runner';
import type { SessionState } from '../../src/suggestions/sessions/run-generation';

const state = (revision: number): SessionState => ({
  userId: 1,
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

describe('SessionRunner debounce from arrival', () => {
  const runnerFor = (generated: number[]) =>
    new SessionRunner({
      debounceMs: 40,
      generate: async (job) => void generated.push(job.state.revision),
      publish: async () => undefined,
      onError: () => undefined,
    });

  it('counts the quiet time from when the update arrived, not from when it was taken', async () => {
    const generated: number[] = [];
    const runner = runnerFor(generated);
    // Taken 35 ms after it arrived (its checks and write took that long): 5 ms of quiet time are left.
    runner.update('s', state(1), performance.now() - 35);
    await sleep(15);
    expect(generated).toEqual([1]);
    // Taken later than the debounce: the generation starts at once.
    runner.update('s', state(2), performance.now() - 100);
    await sleep(5);
    expect(generated).toEqual([1, 2]);
    runner.close();
  });

  it('holds an ended debounce while another update of the session is being taken in', async () => {
    const generated: number[] = [];
    const runner = runnerFor(generated);
    runner.update('s', state(1));
    const second = runner.arriving('s');
    await sleep(60);
    expect(generated).toEqual([]);
    // Taken: it restarts the debounce, and the burst makes one generation of the newest.
    runner.update('s', state(2), performance.now() - 10);
    second();
    await sleep(15);
    expect(generated).toEqual([]);
    await sleep(30);
    expect(generated).toEqual([2]);

    runner.update('s', state(3));
    const refused = runner.arriving('s');
    const other = runner.arriving('t');
    await sleep(60);
    expect(generated).toEqual([2]);
    other();
    expect(generated).toEqual([2]);
    // Refused (never taken): the held generation runs now, for the newest state taken.
    refused();
    refused();
    await sleep(5);
    expect(generated).toEqual([2, 3]);
    runner.close();
  });
});

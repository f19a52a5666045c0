import { turnBatch } from '../src/turn-batch';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A batch that records each statement it would run: runMany's groups and runOne's lone inputs. */
function recorded(fails: (inputs: string[]) => boolean = () => false, maxSize?: number) {
  const statements: string[][] = [];
  const run = async (inputs: string[]) => {
    statements.push([...inputs]);
    if (fails(inputs)) throw new Error(`cannot write ${inputs.join(',')}`);
    return inputs.map((input) => input.toUpperCase());
  };
  const call = turnBatch<string, string>({ runMany: run, runOne: async (input) => (await run([input]))[0], maxSize });
  return { call, statements };
}

describe('turnBatch', () => {
  it('runs the calls of one turn as one statement, in order, and those of the next turn apart; each gets its own answer', async () => {
    const { call, statements } = recorded();
    const first = [call('a'), call('b'), call('c')];
    await nextTurn();
    const second = call('d');
    expect(await Promise.all([...first, second])).toEqual(['A', 'B', 'C', 'D']);
    expect(statements).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('runs each member of a failed group again alone: only the bad one fails, with its own error', async () => {
    const { call, statements } = recorded((inputs) => inputs.includes('bad'));
    const outcomes = await Promise.allSettled([call('a'), call('bad'), call('c')]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(new Error('cannot write bad'));
    expect(statements).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('rejects a lone call with its statement error itself, without running it twice', async () => {
    const { call, statements } = recorded(() => true);
    await expect(call('a')).rejects.toThrow('cannot write a');
    expect(statements).toEqual([['a']]);
  });

  it('splits a turn larger than maxSize into groups of at most maxSize', async () => {
    const { call, statements } = recorded(undefined, 2);
    expect(await Promise.all(['a', 'b', 'c', 'd', 'e'].map(call))).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(statements).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });
});

import { turnBatch } from '../../src/db/turn-batch';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('turnBatch', () => {
  it('writes the items of one event-loop turn together, in order, and those of the next turn apart', async () => {
    const writes: string[][] = [];
    const write = turnBatch<string>(async (items) => void writes.push([...items]));
    const first = [write('a'), write('b'), write('c')];
    await nextTurn();
    const second = write('d');
    await Promise.all([...first, second]);
    expect(writes).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('writes each item of a failed batch again on its own: only the bad one fails, with its own error', async () => {
    const writes: string[][] = [];
    const write = turnBatch<string>(async (items) => {
      writes.push([...items]);
      if (items.includes('bad')) throw new Error(`cannot write ${items.join(',')}`);
    });
    const outcomes = await Promise.allSettled([write('a'), write('bad'), write('c')]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(new Error('cannot write bad'));
    expect(writes).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('rejects a lone item with the write error itself, without writing it twice', async () => {
    let calls = 0;
    const write = turnBatch<string>(async () => {
      calls += 1;
      throw new Error('down');
    });
    await expect(write('a')).rejects.toThrow('down');
    expect(calls).toBe(1);
  });
});

/**
 * Group commit for hot statements: the calls made during one turn of the event loop (for chat,
 * the aiActions whose requests reached the same point together, or the chat jobs that started
 * together) run as one statement when there are several, at the end of the turn (setImmediate).
 * Each caller still gets its own answer only once its own row is stored or read.
 *
 * A group's statement is all or nothing, so when it fails each member runs again alone: an error
 * (a unique violation, a row whose user or thread just went away) reaches only the call it
 * belongs to, and the others succeed as they would have alone.
 */
export type TurnBatchOptions<Input, Output> = {
  /** Runs two or more inputs as one statement; answers one output per input, in the inputs' order. */
  runMany: (inputs: Input[]) => Promise<Output[]>;
  /** Runs one input alone: a group of one, and each member of a group whose statement failed. */
  runOne: (input: Input) => Promise<Output>;
  /** At most this many inputs in one statement; more in the same turn make further groups. Default 64. */
  maxSize?: number;
};

type Pending<Input, Output> = { input: Input; resolve: (output: Output) => void; reject: (error: unknown) => void };

export function turnBatch<Input, Output>(options: TurnBatchOptions<Input, Output>): (input: Input) => Promise<Output> {
  const maxSize = options.maxSize ?? 64;
  let pending: Pending<Input, Output>[] = [];

  const runAlone = (member: Pending<Input, Output>) => {
    options.runOne(member.input).then(member.resolve, member.reject);
  };
  const flush = () => {
    const members = pending;
    pending = [];
    for (let start = 0; start < members.length; start += maxSize) {
      const group = members.slice(start, start + maxSize);
      if (group.length === 1) {
        runAlone(group[0]);
        continue;
      }
      options.runMany(group.map((member) => member.input)).then(
        (outputs) => group.forEach((member, index) => member.resolve(outputs[index])),
        () => group.forEach(runAlone),
      );
    }
  };

  return (input) =>
    new Promise<Output>((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ input, resolve, reject });
    });
}

import { MAX_ANALYSED_CHARS } from '../../src/gatekeeper/extract-features';
import { findCodeRegions } from '../../src/gatekeeper/find-code-regions';
import { splitClauses } from '../../src/gatekeeper/split-clauses';
import { tokenizeProse } from '../../src/gatekeeper/tokenize-prose';

// The gatekeeper reads up to MAX_ANALYSED_CHARS of a prompt in the API's request path. Each prompt
// below is one a regex of it was quadratic on: 0.13-0.5 s a call at that length, so the CALLS calls
// of a test ran for minutes, far past the test timeout; now a call takes a millisecond or less.
// The calls yield between them so that the timeout can end a test that is slow again: Jest cannot
// stop a synchronous one.
const CALLS = 500;

/** `head`, then `unit` repeated, then `tail`: MAX_ANALYSED_CHARS characters in all. */
function longPrompt(head: string, unit: string, tail = ''): string {
  const body = MAX_ANALYSED_CHARS - head.length - tail.length;
  return head + unit.repeat(Math.ceil(body / unit.length)).slice(0, body) + tail;
}

/** Calls `call` CALLS times over the prompts in turn; returns its answer for each prompt. */
async function callRepeatedly<T>(prompts: readonly string[], call: (prompt: string) => T): Promise<T[]> {
  const answers: T[] = [];
  const test = expect.getState().currentTestName;
  for (let index = 0; index < CALLS; index++) {
    // Jest has moved on, this test having timed out: stop rather than slow the next test down too.
    if (expect.getState().currentTestName !== test) break;
    const answer = call(prompts[index % prompts.length]);
    if (index < prompts.length) answers.push(answer);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return answers;
}

describe('the gatekeeper reads the longest prompt in linear time', () => {
  // None of these prompts holds code; the regions are passed as the classifier passes them.
  it('splitClauses: runs of spaces, and of spaces and newlines', async () => {
    const prompts = [longPrompt('a', ' ', 'x'), longPrompt('a', ' \n', 'x')];
    const clauses = await callRepeatedly(prompts, (prompt) => splitClauses(prompt, []).map((clause) => clause.text));
    expect(clauses).toEqual([[prompts[0]], ['a', 'x']]);
  });

  it('splitClauses: runs of ? and of dots', async () => {
    const prompts = [longPrompt('a', '?', 'x'), longPrompt('', '.', 'x')];
    const clauses = await callRepeatedly(prompts, (prompt) => splitClauses(prompt, []).map((clause) => clause.text));
    expect(clauses).toEqual([[prompts[0]], [prompts[1]]]);
  });

  it('tokenizeProse: runs of dots', async () => {
    const prompts = [longPrompt('', '.'), longPrompt('x', '.'), longPrompt('', '.', '1')];
    const tokens = await callRepeatedly(prompts, (prompt) => tokenizeProse(prompt, 200).map((token) => token.text));
    expect(tokens).toEqual([[], ['x'], ['<num>']]);
  });

  it("findCodeRegions: a stack frame line of '('", async () => {
    const prompts = [longPrompt('at x ', '('), longPrompt('  at f ', '(', ':x')];
    const regions = await callRepeatedly(prompts, findCodeRegions);
    const wholePrompt = [{ kind: 'code', fenced: false, start: 0, end: MAX_ANALYSED_CHARS }];
    expect(regions).toEqual([wholePrompt, wholePrompt]);
  });

  it("findCodeRegions: spaces after a ']' or a '}'", async () => {
    const prompts = [longPrompt(']', ' ', 'x'), longPrompt('why does: }', ' ', 'x')];
    expect(await callRepeatedly(prompts, findCodeRegions)).toEqual([[], []]);
  });
});

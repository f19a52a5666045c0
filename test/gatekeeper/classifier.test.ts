import { isAppError } from '../../src/errors';
import { CODE_SNIPPETS } from '../../src/gatekeeper/training/data-generator/snippets';
import type { Intent } from '../../src/gatekeeper/labels';
import { loadGatekeeper } from '../../src/gatekeeper/load-gatekeeper';
import { DEFAULT_GATEKEEPER_OPTIONS } from '../../src/gatekeeper/options';

const gatekeeper = loadGatekeeper({ cacheSize: 0 });
const classify = (prompt: string) => gatekeeper.classify(prompt);

const fence = (code: string, language = '') => `\`\`\`${language}\n${code}\n\`\`\``;
const longPaste = (lines: number) => {
  const block: string[] = [];
  while (block.length < lines) block.push(...CODE_SNIPPETS[block.length % CODE_SNIPPETS.length].code.split('\n'));
  return block.slice(0, lines).join('\n');
};
const NODE_TRACE = `TypeError: Cannot read properties of undefined (reading 'id')
    at getUser (src/users/service.ts:41:18)
    at async handler (src/http/routes.ts:12:5)`;
const PYTHON_TRACE = `Traceback (most recent call last):
  File "app.py", line 3, in <module>
    main()
ZeroDivisionError: division by zero`;

describe('classify: one clear intent', () => {
  it.each<[Intent, string]>([
    ['EXPLAIN_CODE', 'expln this fn'],
    ['EXPLAIN_CODE', 'wht does this do'],
    ['EXPLAIN_CODE', 'could you explain the selected code?'],
    ['EXPLAIN_CODE', 'what does the parseHeaders function return when the input is empty?'],
    ['GENERATE_CODE', 'write a Go function that merges two sorted slices'],
    ['GENERATE_CODE', 'I need a TypeScript function that debounces input events'],
    ['GENERATE_CODE', 'Write a function that parses ISO dates and returns a Date'],
    ['FIX_CODE', 'this throws a NullPointerException when the cart is empty, please fix'],
    ['FIX_CODE', 'the counter goes negative after the second click, can you fix it?'],
    ['REFACTOR_CODE', 'refactor this class to use dependency injection'],
    ['REFACTOR_CODE', "pls make this cleaner, it's hard to follow"],
    ['WRITE_TESTS', 'tests pls'],
    ['WRITE_TESTS', 'write jest tests for the formatPrice function'],
    ['WRITE_TESTS', 'wrte unit tsts for this module pls'],
    ['CODEBASE_SEARCH', 'where is the auth middleware defined'],
    ['CODEBASE_SEARCH', 'which files call parseConnection'],
    ['CODEBASE_SEARCH', 'Where do we send the invoice emails from?'],
    ['GENERAL_QUESTION', 'what is the difference between a mutex and a semaphore?'],
    ['GENERAL_QUESTION', 'how does garbage collection work in Java?'],
    ['GENERAL_QUESTION', 'whats the difference between a process and a thread'],
  ])('%s: %s', (intent, prompt) => {
    const result = classify(prompt);
    expect(result).toMatchObject({ status: 'CLEAR', intent, alternatives: [] });
    expect(result.confidence).toBeGreaterThan(DEFAULT_GATEKEEPER_OPTIONS.clearThreshold);
    expect(result.intents).toEqual([{ intent, confidence: result.confidence, text: null }]);
  });
});

describe('classify: too vague to act on', () => {
  it.each(['help', 'fix it', 'do the thing', '??', 'make it better', 'hmm', 'help me', "it doesn't work", 'nothing works', 'ok'])(
    '%s',
    (prompt) => {
      const result = classify(prompt);
      expect(result).toMatchObject({ status: 'NEEDS_CLARIFICATION', intent: null, intents: [] });
      expect(result.confidence).toBeLessThan(DEFAULT_GATEKEEPER_OPTIONS.confirmThreshold);
    },
  );
});

describe('classify: several requests', () => {
  it.each<[string, Intent[], string[]]>([
    ['explain this and then write tests for it', ['EXPLAIN_CODE', 'WRITE_TESTS'], ['explain this', 'write tests for it']],
    [
      'Refactor this to use async/await and add jest tests for it',
      ['REFACTOR_CODE', 'WRITE_TESTS'],
      ['Refactor this to use async/await', 'add jest tests for it'],
    ],
    ['fix the timeout bug and add a regression test', ['FIX_CODE', 'WRITE_TESTS'], ['fix the timeout bug', 'add a regression test']],
    [
      'where is the session store defined? also refactor it to use Redis',
      ['CODEBASE_SEARCH', 'REFACTOR_CODE'],
      ['where is the session store defined', 'refactor it to use Redis'],
    ],
    [
      "what's a monad? and write tests for this class",
      ['GENERAL_QUESTION', 'WRITE_TESTS'],
      ["what's a monad", 'write tests for this class'],
    ],
    [
      'write a CSV parser, then explain how it handles quoted fields',
      ['GENERATE_CODE', 'EXPLAIN_CODE'],
      ['write a CSV parser', 'explain how it handles quoted fields'],
    ],
    [
      'write a function that validates IBANs, then write tests for it and explain the checksum',
      ['GENERATE_CODE', 'WRITE_TESTS', 'EXPLAIN_CODE'],
      ['write a function that validates IBANs', 'write tests for it', 'explain the checksum'],
    ],
  ])('%s', (prompt, intents, texts) => {
    const result = classify(prompt);
    expect(result.status).toBe('MULTI_INTENT');
    expect(result.intent).toBeNull();
    expect(result.intents.map((detected) => detected.intent)).toEqual(intents);
    expect(result.intents.map((detected) => detected.text)).toEqual(texts);
  });

  it('does not split one request that happens to contain "and"', () => {
    for (const prompt of [
      'Write a function that parses ISO dates and returns a Date',
      'what is the difference between unit and integration tests',
      'explain how this function handles errors and retries',
    ]) {
      expect(classify(prompt).status).not.toBe('MULTI_INTENT');
    }
  });

  it('keeps pasted code with the request it belongs to', () => {
    const result = classify(`Explain this and then write tests for it:\n${fence(CODE_SNIPPETS[0].code, 'ts')}`);
    expect(result.intents.map((detected) => detected.intent)).toEqual(['EXPLAIN_CODE', 'WRITE_TESTS']);
    expect(result.intents[1].text).toContain('export async function getUserById');
  });
});

describe('classify: pasted code and stack traces', () => {
  it.each<[Intent, string]>([
    ['FIX_CODE', `fix this\n${PYTHON_TRACE}`],
    ['FIX_CODE', `why am I getting this?\n${fence(NODE_TRACE)}`],
    ['FIX_CODE', `${NODE_TRACE}\nhow do I fix this?`],
    ['EXPLAIN_CODE', `what does this do\n${fence('export function add(a: number, b: number) { return a + b; }', 'ts')}`],
    ['EXPLAIN_CODE', 'Why does this line throw: const total = order.items.reduce((sum, item) => sum + item.price);'],
    ['REFACTOR_CODE', `refactor this to use early returns\n${fence(CODE_SNIPPETS[4].code, 'java')}`],
    ['WRITE_TESTS', `write unit tests for this\n\n${CODE_SNIPPETS[2].code}`],
  ])('%s: %s', (intent, prompt) => {
    const result = classify(prompt);
    expect(result.intent).toBe(intent);
    expect(['CLEAR', 'NEEDS_CONFIRMATION']).toContain(result.status);
  });

  it.each<[Intent, string]>([
    ['WRITE_TESTS', 'write unit tests for this'],
    ['REFACTOR_CODE', 'refactor this to use async/await'],
    ['EXPLAIN_CODE', 'explain what this code does'],
  ])('a 300-line paste does not change the answer to "%s"', (intent, request) => {
    const paste = longPaste(300);
    for (const prompt of [request, `${request}\n${fence(paste)}`, `${paste}\n\n${request}`]) {
      expect(classify(prompt)).toMatchObject({ status: 'CLEAR', intent });
    }
  });

  it('asks what to do with code pasted on its own', () => {
    expect(classify(fence(CODE_SNIPPETS[1].code, 'js')).status).toBe('NEEDS_CLARIFICATION');
  });
});

describe('options', () => {
  const prompt = 'write jest tests for the formatPrice function';
  const confidence = classify(prompt).confidence;

  it('moves a prompt between statuses with the thresholds', () => {
    const confirm = loadGatekeeper({ cacheSize: 0, clearThreshold: confidence, confirmThreshold: 0.5 }).classify(prompt);
    expect(confirm).toMatchObject({ status: 'NEEDS_CONFIRMATION', intent: 'WRITE_TESTS', confidence });
    const clarify = loadGatekeeper({ cacheSize: 0, clearThreshold: 1, confirmThreshold: Math.min(1, confidence + 1e-9) }).classify(prompt);
    expect(clarify).toMatchObject({ status: 'NEEDS_CLARIFICATION', intent: null });
  });

  it('offers the runners-up with their confidence when asking for confirmation', () => {
    const result = loadGatekeeper({
      cacheSize: 0,
      clearThreshold: 1,
      confirmThreshold: 0,
      minAlternativeConfidence: 0,
      maxAlternatives: 2,
    }).classify('explain how it handles quoted fields');
    expect(result.status).toBe('NEEDS_CONFIRMATION');
    expect(result.alternatives).toHaveLength(2);
    expect(result.alternatives.map((alternative) => alternative.intent)).not.toContain(result.intent);
    expect(result.alternatives[0].confidence).toBeLessThanOrEqual(result.confidence);
    expect(result.alternatives[0].confidence).toBeGreaterThanOrEqual(result.alternatives[1].confidence);
  });

  it('decides multi-intent from the model alone when clause agreement is switched off', () => {
    const withoutParts = loadGatekeeper({ cacheSize: 0, multiIntentSupport: 1, multiIntentThreshold: 1 });
    expect(withoutParts.classify('explain this and then write tests for it').status).not.toBe('MULTI_INTENT');
  });

  it('refuses thresholds that make no sense', () => {
    expect(() => loadGatekeeper({ clearThreshold: 0.5, confirmThreshold: 0.7 })).toThrow(RangeError);
    expect(() => loadGatekeeper({ clearThreshold: 1.5 })).toThrow(RangeError);
    expect(() => loadGatekeeper({ cacheSize: -1 })).toThrow(RangeError);
  });

  it('reports a missing model file as an internal error', () => {
    let caught: unknown;
    try {
      loadGatekeeper({ modelPath: '/nonexistent/model.json' });
    } catch (error) {
      caught = error;
    }
    expect(isAppError(caught) && caught.code === 'INTERNAL').toBe(true);
  });
});

describe('cache', () => {
  it('returns the same frozen result for a repeated prompt, ignoring case and whitespace', () => {
    const cached = loadGatekeeper({ cacheSize: 10 });
    const first = cached.classify('Where is the auth middleware defined?');
    expect(cached.classify('Where is the auth middleware defined?')).toBe(first);
    expect(cached.classify('  where IS the auth   middleware defined?\n')).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.intents) && Object.isFrozen(first.intents[0])).toBe(true);
    expect(cached.cacheSize).toBe(1);
  });

  it('keys a long prompt by the characters it reads (20,000), so prompts that differ only after them share one entry', () => {
    const cached = loadGatekeeper({ cacheSize: 10 });
    const head = `why does parseConnection throw here? ${'the url has a port. '.repeat(1_000)}`.slice(0, 20_000);
    const first = cached.classify(`${head} and then rewrite it in Go`);
    expect(cached.classify(`${head}${'x'.repeat(500_000)}`)).toBe(first);
    expect(cached.cacheSize).toBe(1);
    expect(loadGatekeeper({ cacheSize: 0 }).classify(`${head} but not this`)).toEqual(first);
  });

  it('is bounded, evicting the least recently used prompt', () => {
    const cached = loadGatekeeper({ cacheSize: 3 });
    const tests = cached.classify('tests pls');
    const explain = cached.classify('expln this fn');
    cached.classify('help');
    // Using "tests pls" again leaves "expln this fn" as the least recently used.
    expect(cached.classify('tests pls')).toBe(tests);
    cached.classify('which files call parseConnection');
    expect(cached.cacheSize).toBe(3);
    expect(cached.classify('tests pls')).toBe(tests);
    const again = cached.classify('expln this fn');
    expect(again).toEqual(explain);
    expect(again).not.toBe(explain);
  });

  it('keeps nothing with cacheSize 0', () => {
    const uncached = loadGatekeeper({ cacheSize: 0 });
    expect(uncached.classify('tests pls')).not.toBe(uncached.classify('tests pls'));
    expect(uncached.cacheSize).toBe(0);
  });

  it('defaults to 1000 entries', () => {
    expect(loadGatekeeper().options.cacheSize).toBe(1000);
  });
});

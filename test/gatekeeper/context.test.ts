import { gatekeeperContextOf } from '../../src/chat/gate-prompt';
import { contextOfRecord, NO_CONTEXT, type GatekeeperContext } from '../../src/gatekeeper/context';
import { parseJsonl, readDataset } from '../../src/gatekeeper/training/dataset';
import { GATEKEEPER_DATA_DIR } from '../../src/gatekeeper/files';
import type { Intent } from '../../src/gatekeeper/labels';
import { loadGatekeeper } from '../../src/gatekeeper/load-gatekeeper';

const gatekeeper = loadGatekeeper({ cacheSize: 0 });
const SELECTED: GatekeeperContext = { ...NO_CONTEXT, selectedText: true };
const FILE: GatekeeperContext = { ...NO_CONTEXT, currentFile: true };
const CODEBASE: GatekeeperContext = { ...NO_CONTEXT, codebase: true };

describe('the context rule', () => {
  it.each<[string, Intent]>([
    ['fix it', 'FIX_CODE'],
    ['make it better', 'REFACTOR_CODE'],
    ['make it shorter', 'REFACTOR_CODE'],
  ])('"%s" needs clarification alone and is CLEAR (%s) with selected code or an open file', (prompt, intent) => {
    expect(gatekeeper.classify(prompt).status).toBe('NEEDS_CLARIFICATION');
    expect(gatekeeper.classify(prompt, SELECTED)).toMatchObject({ status: 'CLEAR', intent });
    expect(gatekeeper.classify(prompt, FILE)).toMatchObject({ status: 'CLEAR', intent });
  });

  it.each(['hmm', '??', 'help', 'ok'])('"%s" still needs clarification whatever is attached', (prompt) => {
    for (const context of [NO_CONTEXT, SELECTED, FILE, CODEBASE])
      expect(gatekeeper.classify(prompt, context).status).toBe('NEEDS_CLARIFICATION');
  });

  it('takes a question asked with a repository attached as a question about that codebase', () => {
    const question = 'how is the app configured';
    expect(gatekeeper.classify(question).intent).toBe('GENERAL_QUESTION');
    expect(gatekeeper.classify(question, CODEBASE)).toMatchObject({ status: 'CLEAR', intent: 'CODEBASE_SEARCH' });
    // With code selected, "this" is the code, not the repository: the intent is the model's.
    expect(gatekeeper.classify('what does this do', { ...CODEBASE, selectedText: true })).toMatchObject({
      status: 'CLEAR',
      intent: 'EXPLAIN_CODE',
    });
  });

  it('leaves multi-intent prompts to the multi-intent decision', () => {
    expect(gatekeeper.classify('explain this and then write tests for it', SELECTED).status).toBe('MULTI_INTENT');
  });

  it('is off above a share of 1, and its threshold moves prompts between statuses', () => {
    expect(loadGatekeeper({ cacheSize: 0, contextShareThreshold: 1.01 }).classify('fix it', SELECTED).status).toBe('NEEDS_CLARIFICATION');
    const share = gatekeeper.classify('make it shorter', SELECTED).confidence;
    expect(loadGatekeeper({ cacheSize: 0, contextShareThreshold: share + 1e-6 }).classify('make it shorter', SELECTED).status).toBe(
      'NEEDS_CLARIFICATION',
    );
    expect(() => loadGatekeeper({ contextShareThreshold: -0.1 })).toThrow(RangeError);
  });

  it('caches each context apart', () => {
    const cached = loadGatekeeper({ cacheSize: 10 });
    expect(cached.classify('fix it').status).toBe('NEEDS_CLARIFICATION');
    expect(cached.classify('fix it', SELECTED).status).toBe('CLEAR');
    expect(cached.classify('Fix  it ').status).toBe('NEEDS_CLARIFICATION');
    expect(cached.cacheSize).toBe(2);
  });
});

describe('the context of a chat request', () => {
  const file = { fileName: 'src/app.ts', selectedText: '' };

  it('reads selected text, the open file and context items', () => {
    expect(gatekeeperContextOf(null, [])).toEqual(NO_CONTEXT);
    expect(gatekeeperContextOf({ ...file, selectedText: 'const a = 1;' }, [])).toEqual({
      selectedText: true,
      currentFile: true,
      codebase: false,
    });
    expect(gatekeeperContextOf({ ...file, selectedText: '  \n' }, [])).toEqual({ selectedText: false, currentFile: true, codebase: false });
    expect(gatekeeperContextOf(null, [{ category: 'snippet' }])).toEqual({ selectedText: true, currentFile: false, codebase: false });
    expect(gatekeeperContextOf(null, [{ category: 'file' }])).toEqual({ selectedText: false, currentFile: true, codebase: false });
    expect(gatekeeperContextOf(null, [{ category: 'repository' }])).toEqual({ selectedText: false, currentFile: false, codebase: true });
    expect(gatekeeperContextOf(null, [{ category: 'directory' }, { category: 'issue' }])).toEqual({
      selectedText: false,
      currentFile: false,
      codebase: true,
    });
    // An issue or merge request gives "this code" nothing to point at.
    expect(gatekeeperContextOf(null, [{ category: 'issue' }, { category: 'merge_request' }])).toEqual(NO_CONTEXT);
  });
});

describe('context in the data', () => {
  it('marks each record with its context and keeps the same text with two contexts apart', () => {
    const [record] = parseJsonl('{"text":"fix it","label":"FIX_CODE","context":"selected_text"}', 'x.jsonl');
    expect(record).toMatchObject({ context: 'selected_text' });
    expect(parseJsonl('{"text":"fix it","label":"VAGUE"}', 'x.jsonl')[0].context).toBe('none');
    expect(() => parseJsonl('{"text":"fix it","label":"VAGUE","context":"clipboard"}', 'x.jsonl')).toThrow(
      /x.jsonl:1: unknown context clipboard/,
    );
    const fixIt = readDataset(GATEKEEPER_DATA_DIR).filter((prompt) => prompt.text === 'fix it');
    expect(fixIt.map((prompt) => [prompt.context, prompt.label]).sort()).toEqual([
      ['none', 'VAGUE'],
      ['selected_text', 'FIX_CODE'],
    ]);
    expect(contextOfRecord('directory')).toEqual(CODEBASE);
  });

  it('has at least 400 more hand-written prompts with their context, in every context', () => {
    const marked = readDataset(GATEKEEPER_DATA_DIR).filter((prompt) => prompt.source === 'hand-written-context.jsonl');
    expect(marked.length).toBeGreaterThanOrEqual(400);
    for (const context of ['none', 'selected_text', 'current_file', 'repository', 'directory'] as const)
      expect(marked.some((prompt) => prompt.context === context)).toBe(true);
  });
});

import { buildPrompt, formatContextItem, SYSTEM_PROMPT } from '../../src/chat/build-prompt';
import type { ChatMessageEvent } from '../../src/chat/chat-events';
import { CHAT_ERRORS, errorCodeFor } from '../../src/chat/complete-chat';
import type { ContextItem } from '../../src/chat/context-items';
import { topicMatches } from '../../src/chat/chat-events';
import { topicsFor } from '../../src/chat/topics';
import { LlmError } from '../../src/llm/types';

const turn = (role: 'user' | 'assistant', content: string): ChatMessageEvent => ({
  id: crypto.randomUUID(),
  requestId: crypto.randomUUID(),
  role,
  content,
  timestamp: new Date().toISOString(),
  chunkId: null,
  errors: [],
  extras: {},
  threadId: null,
  agentVersionId: null,
  contextItems: [],
});

const item = (overrides: Partial<ContextItem>): ContextItem => ({
  id: 'x',
  category: 'file',
  content: 'body',
  metadata: null,
  schemaVersion: 'v0.0.1',
  type: null,
  isEnabled: true,
  disabledReasons: [],
  ...overrides,
});

describe('buildPrompt', () => {
  it('puts the system prompt first and the question with its context last', () => {
    const prompt = buildPrompt({
      question: 'Why?',
      contextItems: [item({ id: 'file:///a/b.py', metadata: { relativePath: 'b.py' } })],
      currentFile: null,
      history: [],
    });
    expect(prompt.messages[0]).toEqual({ role: 'system', content: SYSTEM_PROMPT });
    expect(prompt.messages[1].content).toBe('<file path="b.py" language="python">\nbody\n</file>\n\nWhy?');
  });

  it('drops the oldest turns first to fit the budget, and never starts history with an answer', () => {
    const history = [
      turn('user', 'a'.repeat(4000)),
      turn('assistant', 'b'.repeat(4000)),
      turn('user', 'recent question'),
      turn('assistant', 'recent answer'),
    ];
    const prompt = buildPrompt({ question: 'now?', contextItems: [], currentFile: null, history, maxPromptTokens: 1500 });
    expect(prompt.messages.map((message) => message.content)).toEqual([SYSTEM_PROMPT, 'recent question', 'recent answer', 'now?']);
    expect(prompt.droppedTurns).toBe(2);
  });

  it('keeps all history within budget, in order', () => {
    const history = [turn('user', 'one'), turn('assistant', 'two')];
    const prompt = buildPrompt({ question: 'three', contextItems: [], currentFile: null, history });
    expect(prompt.messages.slice(1).map((message) => message.content)).toEqual(['one', 'two', 'three']);
  });

  it('shows the current file and selection with the language', () => {
    const prompt = buildPrompt({
      question: 'Explain',
      contextItems: [],
      currentFile: { fileName: 'src/app.go', selectedText: 'func main() {}', contentAboveCursor: 'package main', contentBelowCursor: '' },
      history: [],
    });
    expect(prompt.messages[1].content).toContain('They selected this code:\n```go\nfunc main() {}\n```');
    expect(prompt.messages[1].content).toContain('<current_file path="src/app.go" language="go">\npackage main\n</current_file>');
  });

  it.each<[Partial<ContextItem>, string]>([
    [{ category: 'snippet', id: 's', metadata: { relativePath: 'x.rb' } }, '<snippet path="x.rb" language="ruby">'],
    [{ category: 'merge_request', id: 'mr-1', metadata: { title: 'Add "X"' } }, '<merge_request id="mr-1" title="Add  X ">'],
    [{ category: 'terminal', id: 't' }, '<terminal_output id="t">'],
    [{ category: 'local_git', id: 'g' }, '<git id="g">'],
    [{ category: 'dependency', id: 'd' }, '<dependency id="d">'],
  ])('formats %j', (overrides, opening) => {
    expect(formatContextItem(item(overrides)).startsWith(opening)).toBe(true);
  });
});

describe('chat error codes', () => {
  it.each<[unknown, keyof typeof CHAT_ERRORS]>([
    [new LlmError({ kind: 'timeout', message: 't' }), 'A1000'],
    [new LlmError({ kind: 'connection', message: 'c' }), 'A1001'],
    [new LlmError({ kind: 'prompt_too_long', message: 'p', status: 400 }), 'A1005'],
    [new LlmError({ kind: 'http', message: 'h', status: 500 }), 'A9999'],
    [new Error('other'), 'A9999'],
  ])('%s -> %s', (error, code) => {
    expect(errorCodeFor(error)).toBe(code);
  });
});

describe('subscription topics (graphql-ruby: the argument sets must be equal)', () => {
  const source = { userId: 7, clientSubscriptionId: 'c1', resourceId: null, agentVersionId: null };
  const user = 'gid://gitlab/User/7';
  const matches = (kind: 'user-echo' | 'chunk' | 'final', args: Record<string, string>) =>
    topicsFor(source, kind).some((topic) => topicMatches(topic, args));

  it.each([
    ['user-echo', { userId: user, aiAction: 'chat' }, true],
    ['user-echo', { userId: user, aiAction: 'chat', clientSubscriptionId: 'c1' }, false],
    ['chunk', { userId: user, aiAction: 'chat', clientSubscriptionId: 'c1' }, true],
    ['chunk', { userId: user, aiAction: 'chat' }, false],
    ['chunk', { userId: user, aiAction: 'chat', clientSubscriptionId: 'c2' }, false],
    ['final', { userId: user, aiAction: 'chat', clientSubscriptionId: 'c1' }, true],
    ['final', { userId: user, aiAction: 'chat' }, true],
    ['final', { userId: user }, true],
    ['final', { userId: 'gid://gitlab/User/8', aiAction: 'chat' }, false],
  ] as const)('%s reaches %j: %s', (kind, args, expected) => {
    expect(matches(kind, args)).toBe(expected);
  });
});

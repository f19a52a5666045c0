import { commandQuestion, commandTarget, helpAnswer, parseSlashCommand, refusalFor, SLASH_COMMANDS } from '../../src/chat/slash-commands';
import type { ContextItem } from '../../src/chat/context-items';
import { INTENT_TASKS } from '../../src/chat/build-prompt';

const item = (category: string, content: string): ContextItem => ({
  id: `${category}-1`,
  category: category as ContextItem['category'],
  content,
  metadata: null,
  schemaVersion: 'v0.0.1',
  type: null,
  isEnabled: true,
  disabledReasons: [],
});

describe('slash commands', () => {
  it.each([
    ['/explain', '/explain', ''],
    ['  /tests   with jest and edge cases ', '/tests', 'with jest and edge cases'],
    ['/fix\nconst x = 1', '/fix', 'const x = 1'],
    ['/clean', '/clear', ''],
    ['/help', '/help', ''],
  ])('parses %j as %s with input %j', (content, name, input) => {
    expect(parseSlashCommand(content)).toEqual({ command: expect.objectContaining({ name }), input });
  });

  it.each(['/frobnicate', 'explain /explain', '/Explain', '/explain-it', 'hello'])('%j is not a command', (content) => {
    expect(parseSlashCommand(content)).toBeNull();
  });

  it('prefers the selection, then the current file, then attached code or output, then its own text', () => {
    const file = { fileName: 'a.ts', selectedText: '', contentAboveCursor: 'let a = 1;', contentBelowCursor: '' };
    expect(commandTarget({ input: 'x', currentFile: { ...file, selectedText: 'a' }, contextItems: [] })).toBe('selection');
    expect(commandTarget({ input: 'x', currentFile: file, contextItems: [] })).toBe('file');
    expect(commandTarget({ input: 'x', currentFile: null, contextItems: [item('terminal', 'Error: boom')] })).toBe('context');
    expect(commandTarget({ input: 'x', currentFile: null, contextItems: [item('issue', 'an issue')] })).toBe('input');
    expect(commandTarget({ input: '', currentFile: { ...file, contentAboveCursor: '  ' }, contextItems: [item('file', ' ')] })).toBeNull();
  });

  it('states each code task of what it works on', () => {
    const explain = parseSlashCommand('/explain')!;
    expect(commandQuestion(explain, 'selection')).toBe('Explain what the code the user selected (shown above) does and why.');
    expect(commandQuestion(parseSlashCommand('/troubleshoot')!, 'context')).toBe(
      'Find the root cause of the failure shown in the code and output the user attached (shown above), and say how to fix it.',
    );
    expect(commandQuestion(parseSlashCommand('/refactor keep it short')!, 'file')).toBe(
      "Refactor the user's current file (shown above) without changing what it does. The user adds: keep it short",
    );
  });

  it('every code command has an intent, a task with its target and a refusal; /help lists them all', () => {
    for (const command of SLASH_COMMANDS.filter((each) => each.kind === 'code')) {
      expect(INTENT_TASKS[command.intent!]).toBeTruthy();
      expect(command.task).toContain('{target}');
      expect(refusalFor(command)).toContain(command.name);
    }
    for (const command of SLASH_COMMANDS) expect(helpAnswer()).toContain(`\`${command.name}\``);
  });
});

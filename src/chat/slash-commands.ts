import type { ContextItem } from './context-items';
import type { CurrentFile } from './build-prompt';

/**
 * Duo Chat's slash commands. A command fixes the intent (the gatekeeper never guesses it), and a
 * code command works on what the user gave it: the selected text, else the current file or an
 * attached file, snippet or terminal output, else the text after the command.
 */
export type SlashCommand = {
  /** As typed, with the slash: `/explain`. */
  name: string;
  description: string;
  /** Whether a client may send the command as soon as it is picked (no text needs to follow). */
  shouldSubmit: boolean;
  /** What the command does: conversation control, help, or a task on code. */
  kind: 'reset' | 'clear' | 'help' | 'code';
  /** The intent a code command fixes (build-prompt's INTENT_TASKS). */
  intent?: string;
  /** The task for the model; `{target}` names what the command works on. */
  task?: string;
  /** What the refusal names when there is nothing to work on. */
  subject?: string;
};

export const SLASH_COMMANDS: readonly SlashCommand[] = [
  { name: '/reset', description: 'Reset conversation and ignore previous messages.', shouldSubmit: true, kind: 'reset' },
  { name: '/clear', description: 'Delete all messages in the current conversation.', shouldSubmit: true, kind: 'clear' },
  { name: '/help', description: 'Learn what Duo Chat can do.', shouldSubmit: true, kind: 'help' },
  {
    name: '/explain',
    description: 'Explain the selected code.',
    shouldSubmit: false,
    kind: 'code',
    intent: 'EXPLAIN_CODE',
    task: 'Explain what {target} does and why',
    subject: 'code to explain',
  },
  {
    name: '/tests',
    description: 'Write tests for the selected code.',
    shouldSubmit: false,
    kind: 'code',
    intent: 'WRITE_TESTS',
    task: 'Write tests for {target}',
    subject: 'code to write tests for',
  },
  {
    name: '/refactor',
    description: 'Refactor the selected code.',
    shouldSubmit: false,
    kind: 'code',
    intent: 'REFACTOR_CODE',
    task: 'Refactor {target} without changing what it does',
    subject: 'code to refactor',
  },
  {
    name: '/fix',
    description: 'Fix the selected code.',
    shouldSubmit: false,
    kind: 'code',
    intent: 'FIX_CODE',
    task: 'Find the problems in {target} and fix them',
    subject: 'code to fix',
  },
  {
    name: '/troubleshoot',
    description: 'Troubleshoot the selected error output or failing code.',
    shouldSubmit: false,
    kind: 'code',
    intent: 'TROUBLESHOOT',
    task: 'Find the root cause of the failure shown in {target}, and say how to fix it',
    subject: 'error output or code to troubleshoot',
  },
];

/** `/clean` is GitLab's other spelling of `/clear`. */
const ALIASES: Record<string, string> = { '/clean': '/clear' };

export type ParsedSlashCommand = { command: SlashCommand; input: string };

/** The command a message starts with, and the text after it; null for a message that is not a known command. */
export function parseSlashCommand(content: string): ParsedSlashCommand | null {
  const match = /^(\/[a-z_]+)(?:\s+([\s\S]*))?$/.exec(content.trim());
  if (!match) return null;
  const name = ALIASES[match[1]] ?? match[1];
  const command = SLASH_COMMANDS.find((each) => each.name === name);
  return command ? { command, input: (match[2] ?? '').trim() } : null;
}

export type CommandTarget = 'selection' | 'file' | 'context' | 'input' | null;

/** What a code command works on, in order of preference; null when there is nothing. */
export function commandTarget(options: {
  input: string;
  currentFile: CurrentFile | null;
  contextItems: readonly ContextItem[];
}): CommandTarget {
  if (options.currentFile?.selectedText.trim()) return 'selection';
  if (`${options.currentFile?.contentAboveCursor ?? ''}${options.currentFile?.contentBelowCursor ?? ''}`.trim()) return 'file';
  if (options.contextItems.some((item) => ['file', 'snippet', 'terminal'].includes(item.category) && item.content.trim())) return 'context';
  if (options.input) return 'input';
  return null;
}

/** The answer to a code command with nothing to work on: says what to do instead. */
export function refusalFor(command: SlashCommand): string {
  return [
    `There is no ${command.subject} for ${command.name}.`,
    `Select the code in your editor (or attach a file or snippet) and run ${command.name} again, or write it after the command, for ` +
      `example \`${command.name} <your code>\`.`,
  ].join(' ');
}

/** The question the model gets for a code command, in place of the raw `/command ...` text. */
export function commandQuestion(parsed: ParsedSlashCommand, target: Exclude<CommandTarget, null>): string {
  const { command, input } = parsed;
  const where = {
    selection: 'the code the user selected (shown above)',
    file: "the user's current file (shown above)",
    context: 'the code and output the user attached (shown above)',
    input: 'the code the user gave below',
  }[target];
  const task = `${command.task!.replace('{target}', where)}.`;
  if (target === 'input') return `${task}\n\n${input}`;
  return input ? `${task} The user adds: ${input}` : task;
}

/** /help, answered without a model. */
export function helpAnswer(): string {
  const rows = SLASH_COMMANDS.map((command) => `| \`${command.name}\` | ${command.description} |`);
  return [
    'I am GitLab Duo Chat. Ask me about your code in plain words, attach files, snippets or a whole repository as context, or use a ' +
      'command:',
    '',
    '| Command | What it does |',
    '| --- | --- |',
    ...rows,
    '',
    'Code commands (`/explain`, `/tests`, `/refactor`, `/fix`, `/troubleshoot`) work on the code you select; without a selection they ' +
      'use your current file or what you attach, or the text you write after the command. `/clean` is another name for `/clear`.',
  ].join('\n');
}

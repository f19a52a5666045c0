import { languageOf } from '../parsing/languages';
import type { LlmMessage } from '../llm/types';
import type { ChatMessageEvent } from './chat-events';
import type { ContextItem } from './context-items';

export const SYSTEM_PROMPT = [
  "You are GitLab Duo Chat, an AI coding assistant inside the user's editor.",
  'Answer the question in Markdown. Be concise and specific; put code in fenced blocks with the language.',
  'Context the user attached comes in tags such as <file> or <snippet>. Use it when it is relevant, cite file paths you rely on,',
  'and say so when the context does not contain what is needed instead of guessing.',
].join(' ');

export type PromptOptions = {
  question: string;
  contextItems: ContextItem[];
  currentFile: CurrentFile | null;
  /** Earlier turns, oldest first. */
  history: Array<Pick<ChatMessageEvent, 'role' | 'content'>>;
  /** Tokens for the whole prompt; history is dropped (oldest first) to fit. Default 24,000. */
  maxPromptTokens?: number;
  /** The gatekeeper's intent (EXPLAIN_CODE, FIX_CODE, ...): adds its task to the system prompt. */
  intent?: string | null;
};

/** The system prompt's task section for each intent the gatekeeper knows. */
export const INTENT_TASKS: Record<string, string> = {
  EXPLAIN_CODE: 'Task: explain what the code does and why, step by step, referring to names in it.',
  GENERATE_CODE: 'Task: write the requested code, complete and ready to use, then say briefly how it works.',
  FIX_CODE: 'Task: find the cause of the problem, show the corrected code, and explain the fix.',
  REFACTOR_CODE: 'Task: refactor the code without changing its behaviour; show the result and what changed.',
  WRITE_TESTS: "Task: write focused tests for the code with the project's test framework, covering edge cases.",
  TROUBLESHOOT: 'Task: find the root cause of the failure in the output or code given, then show how to fix it, most likely cause first.',
  CODEBASE_SEARCH: 'Task: answer from the repository context given; cite the files and lines you rely on.',
  GENERAL_QUESTION: 'Task: answer the question directly and accurately.',
  CONVERSATION:
    'Task: the user is making conversation (a greeting, thanks, a farewell or a question about you). Reply briefly and warmly, in ' +
    'their language; when it fits, say what you can do here: answer questions about their code and this project, with the code ' +
    'they select or attach as context, and the commands /explain, /tests, /refactor, /fix, /troubleshoot and /help.',
};

export type CurrentFile = {
  fileName: string;
  selectedText: string;
  contentAboveCursor?: string | null;
  contentBelowCursor?: string | null;
};

export type BuiltPrompt = { messages: LlmMessage[]; estimatedTokens: number; droppedTurns: number };

/** About 4 characters per token in code and English: good enough to budget, not to bill. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

const attribute = (value: string) => value.replace(/[\n"<>]/g, ' ');

/** One context item as the model sees it, by category, with path and language for files and snippets. */
export function formatContextItem(item: ContextItem): string {
  const metadata = item.metadata ?? {};
  const path =
    typeof metadata.relativePath === 'string'
      ? metadata.relativePath
      : typeof metadata.relativeFilePath === 'string'
        ? metadata.relativeFilePath
        : item.id;
  switch (item.category) {
    case 'file':
    case 'snippet': {
      const language = languageOf(path);
      return (
        `<${item.category} ` +
        `path="${attribute(path)}"${language ? ` language="${language}"` : ''}>\n${item.content}\n</${item.category}>`
      );
    }
    case 'merge_request':
    case 'issue': {
      const title = typeof metadata.title === 'string' ? ` title="${attribute(metadata.title)}"` : '';
      return `<${item.category} id="${attribute(item.id)}"${title}>\n${item.content}\n</${item.category}>`;
    }
    case 'local_git':
      return `<git id="${attribute(item.id)}">\n${item.content}\n</git>`;
    case 'terminal':
      return `<terminal_output id="${attribute(item.id)}">\n${item.content}\n</terminal_output>`;
    case 'user_rule':
      return `<user_rule>\n${item.content}\n</user_rule>`;
    default:
      return `<${item.category} id="${attribute(item.id)}">\n${item.content}\n</${item.category}>`;
  }
}

function formatCurrentFile(file: CurrentFile): string {
  const language = languageOf(file.fileName) ?? '';
  const parts = [`The user's current file is ${file.fileName}.`];
  if (file.selectedText) parts.push(`They selected this code:\n\`\`\`${language}\n${file.selectedText}\n\`\`\``);
  const around = [file.contentAboveCursor, file.contentBelowCursor].filter(Boolean).join('\n');
  if (around)
    parts.push(`<current_file path="${attribute(file.fileName)}"${language ? ` language="${language}"` : ''}>\n${around}\n</current_file>`);
  return parts.join('\n\n');
}

/**
 * System prompt, then the history that fits the budget (oldest turns dropped first), then the
 * question with its context items and current file. The question and its context are never cut:
 * when they alone are over budget the caller gets a prompt that is, and reports it as too long.
 */
export function buildPrompt(options: PromptOptions): BuiltPrompt {
  const budget = options.maxPromptTokens ?? 24_000;
  const sections = [...options.contextItems.map(formatContextItem)];
  if (options.currentFile) sections.push(formatCurrentFile(options.currentFile));
  sections.push(options.question);
  const question: LlmMessage = { role: 'user', content: sections.join('\n\n') };
  const task = options.intent ? INTENT_TASKS[options.intent] : undefined;
  const system = task ? `${SYSTEM_PROMPT}\n\n${task}` : SYSTEM_PROMPT;
  let used = estimateTokens(system) + estimateTokens(question.content);
  const turns: LlmMessage[] = [];
  let dropped = 0;
  for (let index = options.history.length - 1; index >= 0; index -= 1) {
    const message = options.history[index];
    if (message.role === 'system' || message.content.trim() === '/reset') continue;
    const cost = estimateTokens(message.content);
    if (used + cost > budget) {
      dropped = index + 1;
      break;
    }
    used += cost;
    turns.unshift({ role: message.role, content: message.content });
  }
  // Providers want turns to alternate and to start with the user.
  while (turns[0]?.role === 'assistant') {
    turns.shift();
    dropped += 1;
  }
  return { messages: [{ role: 'system', content: system }, ...turns, question], estimatedTokens: used, droppedTurns: dropped };
}

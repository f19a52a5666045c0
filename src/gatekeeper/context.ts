/**
 * What the prompt came with, as a data record marks it: code the user selected, the file open in
 * the editor, a REPOSITORY or DIRECTORY context item, or nothing. Records without the mark are `none`.
 */
export const PROMPT_CONTEXTS = ['none', 'selected_text', 'current_file', 'repository', 'directory'] as const;
export type PromptContext = (typeof PROMPT_CONTEXTS)[number];

/** A message of the conversation before the prompt. */
export type ThreadTurn = Readonly<{ role: 'user' | 'assistant'; content: string }>;

/** The most turns of a thread the gatekeeper reads, newest kept: the last five exchanges. */
export const THREAD_TURNS_READ = 10;

/**
 * What a chat request carries for a prompt to point at. "explain this" or "fix it" is clear when
 * there is code to point at; "how does this project handle auth" is concrete with a repository;
 * "why?" is clear after "what is a monad?".
 */
export type GatekeeperContext = Readonly<{
  /** Code the user selected in the editor (`currentFile.selectedText`, or a snippet context item). */
  selectedText: boolean;
  /** A file open in the editor or attached as a context item. */
  currentFile: boolean;
  /** A REPOSITORY or DIRECTORY context item. */
  codebase: boolean;
  /**
   * The conversation before the prompt, oldest first (only the last THREAD_TURNS_READ are read).
   * Default: none, the prompt opens the conversation.
   */
  thread?: readonly ThreadTurn[];
}>;

export const NO_CONTEXT: GatekeeperContext = Object.freeze({ selectedText: false, currentFile: false, codebase: false });

/** Whether something is attached for the prompt to point at (the thread is judged apart). */
export const hasContext = (context: GatekeeperContext) => context.selectedText || context.currentFile || context.codebase;

/** The context a labelled data record was written for. */
export function contextOfRecord(context: PromptContext): GatekeeperContext {
  switch (context) {
    case 'selected_text':
      return Object.freeze({ ...NO_CONTEXT, selectedText: true });
    case 'current_file':
      return Object.freeze({ ...NO_CONTEXT, currentFile: true });
    case 'repository':
    case 'directory':
      return Object.freeze({ ...NO_CONTEXT, codebase: true });
    default:
      return NO_CONTEXT;
  }
}

/** A short, stable key for a context, for the result cache. */
export const contextKey = (context: GatekeeperContext) =>
  `${context.selectedText ? 's' : ''}${context.currentFile ? 'f' : ''}${context.codebase ? 'c' : ''}`;

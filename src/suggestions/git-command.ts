import { streamWithRetry } from '../llm/stream-with-retry';
import type { LlmProvider } from '../llm/types';

/** GitLab's limits for glab_ask_git_command (Llm::GitCommandService): a prompt under 300 characters, a short answer. */
export const GIT_COMMAND_LIMITS = { promptChars: 300, maxTokens: 300, temperature: 0.4 } as const;

/** What the model is asked, GitLab's words: the commands in separate ``` blocks (glab runs what they hold), each explained. */
export function gitCommandPrompt(request: string): string {
  return [
    `Provide the appropriate git commands for: ${request}.`,
    '',
    'Respond with git commands wrapped in separate ``` blocks.',
    'Provide explanation for each command in a separate block.',
    '',
    '##',
    'Example:',
    '',
    '```',
    'git log -10',
    '```',
    '',
    'This command will list the last 10 commits in the current branch.',
    '',
  ].join('\n');
}

/** Vertex AI's chat answer, the shape GitLab passes on and glab reads (`predictions[0].candidates[0].content`). */
export type GitCommandAnswer = { predictions: Array<{ candidates: Array<{ author: string; content: string }> }> };

export type GenerateGitCommandsOptions = { request: string; llm: LlmProvider; maxRetries: number; signal?: AbortSignal };

/** The model's git commands and their explanation for a request in plain words (`glab duo ask`). */
export async function generateGitCommands(options: GenerateGitCommandsOptions): Promise<GitCommandAnswer> {
  let content = '';
  const stream = streamWithRetry({
    provider: options.llm,
    request: {
      messages: [{ role: 'user', content: gitCommandPrompt(options.request) }],
      maxTokens: GIT_COMMAND_LIMITS.maxTokens,
      temperature: GIT_COMMAND_LIMITS.temperature,
      signal: options.signal,
    },
    maxRetries: options.maxRetries,
  });
  for await (const event of stream) if (event.type === 'text-delta') content += event.text;
  return { predictions: [{ candidates: [{ author: '1', content }] }] };
}

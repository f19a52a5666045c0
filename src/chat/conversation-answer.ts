import { SLASH_COMMANDS } from './slash-commands';

const commandList = (kind: 'code' | 'other') =>
  SLASH_COMMANDS.filter((command) => (command.kind === 'code') === (kind === 'code'))
    .map((command) => `\`${command.name}\``)
    .join(', ');

/**
 * The answer to a greeting, thanks, a farewell or a question about the assistant when no model is
 * configured: short and friendly, saying what the assistant does here, never asking to clarify.
 * `projectPath` names the project the conversation was started in, when there is one.
 */
export function conversationAnswer(options: { projectPath: string | null }): string {
  const project = options.projectPath
    ? ` This conversation is about project \`${options.projectPath}\`: attach it as repository context to ask about its code.`
    : '';
  return [
    `Hi! I'm GitLab Duo Chat, here to help with your code. Select code in your editor or attach files, snippets, or a whole ` +
      `repository or directory of a project you can read, then ask about it in plain words.${project}`,
    `Commands ${commandList('code')} work on the code you select; ${commandList('other')} help with the conversation ` +
      `(\`/help\` lists them all).`,
    'No language model is configured on this server yet, so I cannot write answers; an administrator can set `LLM_PROVIDER`, ' +
      '`LLM_MODEL`, `LLM_BASE_URL` and `LLM_API_KEY`. Until then, a question asked with a repository attached is answered with ' +
      'what code search finds.',
  ].join('\n\n');
}

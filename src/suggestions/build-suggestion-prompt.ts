import type { LlmMessage } from '../llm/types';
import type { CompletionRequest } from './completion-request';
import type { SuggestionIntent } from './decide-intent';

// Enough code around the cursor for a good suggestion, bounded so a huge file stays a quick request.
const PREFIX_CHARS = 12_000;
const SUFFIX_CHARS = 4_000;
const CONTEXT_CHARS = 16_000;

const COMPLETION_SYSTEM =
  'You are a code completion engine. Reply with only the code that belongs at the cursor, continuing the prefix so that the suffix ' +
  'follows naturally. No explanations, no Markdown fences.';
const GENERATION_SYSTEM =
  'You are a code generation assistant inside an editor. Reply with only the code to insert at the cursor, following the instruction and ' +
  'the style of the file. No explanations, no Markdown fences.';

function contextSection(request: CompletionRequest): string {
  let budget = CONTEXT_CHARS;
  const parts: string[] = [];
  for (const item of request.context) {
    if (budget <= 0) break;
    const content = item.content.slice(0, budget);
    budget -= content.length;
    parts.push(`<${item.type} name="${item.name.replace(/"/g, "'")}">\n${content}\n</${item.type}>`);
  }
  return parts.length ? `Related code from the user's editor:\n${parts.join('\n')}\n\n` : '';
}

/**
 * A fill-in-the-middle request for completions (prefix and suffix around the cursor) and an
 * instruction with the surrounding code for generations.
 */
export function buildSuggestionPrompt(request: CompletionRequest, intent: SuggestionIntent, language: string | null): LlmMessage[] {
  const prefix = request.contentAboveCursor.slice(-PREFIX_CHARS);
  const suffix = request.contentBelowCursor.slice(0, SUFFIX_CHARS);
  const file = `File: ${request.fileName}${language ? ` (${language})` : ''}`;
  if (intent.intent === 'completion') {
    return [
      { role: 'system', content: COMPLETION_SYSTEM },
      {
        role: 'user',
        content:
          `${contextSection(request)}${file}\n<prefix>${prefix}</prefix><suffix>${suffix}</suffix>\nWrite the code that goes ` +
          `between the prefix and the suffix.`,
      },
    ];
  }
  return [
    { role: 'system', content: GENERATION_SYSTEM },
    {
      role: 'user',
      content: `${contextSection(request)}${file}\n<code>${prefix}<cursor/>${suffix}</code>\n\nInstruction: ${intent.instruction}`,
    },
  ];
}

/** Models like to wrap code in fences anyway: keep what is inside. */
export function stripFences(text: string): string {
  const match = /^\s*```[\w+-]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return match ? match[1] : text;
}

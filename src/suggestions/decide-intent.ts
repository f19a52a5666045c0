import type { CompletionRequest } from './completion-request';

export type GenerationType = 'comment' | 'empty_function' | 'small_file';

/** What to ask the model for. */
export type SuggestionIntent =
  | { intent: 'completion'; generationType: null; instruction: null }
  | { intent: 'generation'; generationType: GenerationType | null; instruction: string };

/** What the server-side detection (tree-sitter) found in the file. */
export type DetectedIntent = { intent: 'completion' | 'generation'; generationType: GenerationType | null; userInstruction: string | null };

/** GitLab's instructions for the generation types that carry none of their own. */
export const GENERATION_INSTRUCTIONS: Record<Exclude<GenerationType, 'comment'>, string> = {
  small_file:
    'Create more new code for this file. If the cursor is inside an empty function, generate its most likely contents based on the ' +
    'function name and signature.',
  empty_function:
    'Complete the empty function and generate contents based on the function name and signature. Do not repeat the code. Only return the ' +
    'method contents.',
};

const generation = (generationType: GenerationType | null, instruction: string): SuggestionIntent => ({
  intent: 'generation',
  generationType,
  instruction,
});
const COMPLETION: SuggestionIntent = { intent: 'completion', generationType: null, instruction: null };

/**
 * GitLab's precedence: an explicit `intent: completion` always wins; then `user_instruction` means
 * generation; then a given `generation_type`; then `intent: generation` means a comment generation;
 * else the detection decides. A comment generation's instruction is the comment the detection found.
 */
export async function decideIntent(request: CompletionRequest, detect: () => Promise<DetectedIntent>): Promise<SuggestionIntent> {
  if (request.intent === 'completion') return COMPLETION;
  if (request.userInstruction?.trim()) return generation(request.generationType, request.userInstruction.trim());
  if (request.generationType) return generationFor(request.generationType, request.generationType === 'comment' ? await detect() : null);
  if (request.intent === 'generation') return generationFor('comment', await detect());
  const detected = await detect();
  if (detected.intent === 'completion' || !detected.generationType) return COMPLETION;
  return generationFor(detected.generationType, detected);
}

function generationFor(type: GenerationType, detected: DetectedIntent | null): SuggestionIntent {
  if (type !== 'comment') return generation(type, GENERATION_INSTRUCTIONS[type]);
  // The comment above the cursor is the instruction; without one, the code around it must do.
  const instruction =
    detected?.generationType === 'comment' && detected.userInstruction
      ? detected.userInstruction
      : 'Generate the code the comment above the cursor asks for.';
  return generation('comment', instruction);
}

import type { LlmConfig } from '../config';
import { AnthropicProvider } from './anthropic.provider';
import { OpenAiCompatibleProvider } from './openai-compatible.provider';
import type { LlmProvider } from './types';

/**
 * The configured chat model, or null for `provider: 'none'`. The provider does not retry:
 * wrap its streams in streamWithRetry with `config.maxRetries`.
 */
export function createLlmProvider(config: LlmConfig): LlmProvider | null {
  if (config.provider === 'none') return null;
  if (!config.model) throw new Error(`LLM model must be set for provider ${config.provider}`);
  const options = { model: config.model, baseUrl: config.baseUrl, apiKey: config.apiKey, timeoutMs: config.timeoutMs };
  switch (config.provider) {
    case 'openai':
      return new OpenAiCompatibleProvider(options);
    case 'anthropic':
      return new AnthropicProvider(options);
  }
}

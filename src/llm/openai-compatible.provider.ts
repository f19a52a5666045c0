import { DEFAULT_LLM_TIMEOUT_MS, postSse } from './post-sse';
import { parseEventJson, safeReason } from './provider-errors';
import { LlmError, type LlmProvider, type LlmRequest, type LlmStreamEvent } from './types';

export type OpenAiCompatibleProviderOptions = {
  model: string;
  /** Up to and including the version path. Default: https://api.openai.com/v1 */
  baseUrl?: string;
  /** Sent as a Bearer token; local servers (vLLM, Ollama, llama.cpp) often need none. Default: none. */
  apiKey?: string;
  /** Idle timeout: the longest wait for response headers or between two chunks of bytes. Default: 60 000 ms. */
  timeoutMs?: number;
};

/** The part of a `chat.completion.chunk` we read. */
type ChatCompletionChunk = {
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
};

function finishReason(reason: string | undefined): 'stop' | 'length' | 'other' {
  if (reason === 'stop' || reason === 'length') return reason;
  return 'other';
}

/** Streams from any server that speaks OpenAI's chat completions API. */
export class OpenAiCompatibleProvider implements LlmProvider {
  readonly name = 'openai';
  readonly model: string;
  private readonly url: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: OpenAiCompatibleProviderOptions) {
    this.model = options.model;
    const baseUrl = new URL(options.baseUrl ?? 'https://api.openai.com/v1').toString().replace(/\/+$/, '');
    this.url = `${baseUrl}/chat/completions`;
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const body = {
      model: this.model,
      messages: request.messages.map(({ role, content }) => ({ role, content })),
      stream: true,
      // Without it the stream carries no token counts.
      stream_options: { include_usage: true },
      ...(request.maxTokens !== undefined && { max_tokens: request.maxTokens }),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
    };

    let reason: string | undefined;
    let usage: { inputTokens?: number; outputTokens?: number } | undefined;
    const events = postSse({
      providerName: this.name,
      url: this.url,
      headers,
      body,
      timeoutMs: this.timeoutMs,
      signal: request.signal,
      secret: this.apiKey,
    });
    for await (const event of events) {
      if (event.data === '[DONE]') {
        yield { type: 'finish', reason: finishReason(reason), ...(usage && { usage }) };
        return;
      }
      const chunk = parseEventJson(event.data, this.name) as ChatCompletionChunk;
      if (chunk.error) {
        throw new LlmError({
          kind: 'stream',
          message: `${this.name} reported an error mid-stream: ${safeReason(chunk.error.message ?? 'no message', this.apiKey)}`,
        });
      }
      const choice = chunk.choices?.[0];
      const text = choice?.delta?.content;
      if (typeof text === 'string' && text !== '') yield { type: 'text-delta', text };
      if (choice?.finish_reason) reason = choice.finish_reason;
      // With include_usage the counts come in a last chunk whose `choices` is empty.
      if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    }
    throw new LlmError({ kind: 'stream', message: `${this.name}: the stream ended before [DONE]` });
  }
}

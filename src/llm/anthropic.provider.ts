import { DEFAULT_LLM_TIMEOUT_MS, postSse } from './post-sse';
import { parseEventJson, safeReason } from './provider-errors';
import { LlmError, type LlmProvider, type LlmRequest, type LlmStreamEvent } from './types';

/** The Messages API requires max_tokens; this is ours when the request sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 2048;

const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic's own status for "overloaded", which it can also report inside a stream that began fine. */
const OVERLOADED_STATUS = 529;

export type AnthropicProviderOptions = {
  model: string;
  /** Without the /v1 (one given with it is accepted too). Default: https://api.anthropic.com */
  baseUrl?: string;
  /** Sent as x-api-key. Default: none. */
  apiKey?: string;
  /** Idle timeout: the longest wait for response headers or between two chunks of bytes. Default: 60 000 ms. */
  timeoutMs?: number;
};

/** The union of the stream events we read; unknown event types are ignored, as Anthropic asks. */
type MessagesStreamEvent = {
  type?: string;
  message?: { usage?: { input_tokens?: number } };
  delta?: { type?: string; text?: string; stop_reason?: string | null };
  usage?: { output_tokens?: number };
  error?: { type?: string; message?: string };
};

function finishReason(stopReason: string | undefined): 'stop' | 'length' | 'other' {
  if (stopReason === 'end_turn' || stopReason === 'stop_sequence') return 'stop';
  if (stopReason === 'max_tokens') return 'length';
  return 'other';
}

/** Streams from Anthropic's Messages API. */
export class AnthropicProvider implements LlmProvider {
  readonly name = 'anthropic';
  readonly model: string;
  private readonly url: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: AnthropicProviderOptions) {
    this.model = options.model;
    const baseUrl = new URL(options.baseUrl ?? 'https://api.anthropic.com').toString().replace(/\/+$/, '').replace(/\/v1$/, '');
    this.url = `${baseUrl}/v1/messages`;
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': ANTHROPIC_VERSION,
    };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    // The Messages API has no system role: system text is a top-level field.
    const system = request.messages
      .filter((message) => message.role === 'system')
      .map((message) => message.content)
      .join('\n\n');
    const body = {
      model: this.model,
      max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      ...(system !== '' && { system }),
      messages: request.messages.filter((message) => message.role !== 'system').map(({ role, content }) => ({ role, content })),
      stream: true,
      ...(request.temperature !== undefined && { temperature: request.temperature }),
    };

    let inputTokens: number | undefined;
    let outputTokens: number | undefined;
    let stopReason: string | undefined;
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
      const data = parseEventJson(event.data, this.name) as MessagesStreamEvent;
      switch (data.type) {
        case 'message_start':
          inputTokens = data.message?.usage?.input_tokens;
          break;
        case 'content_block_delta':
          if (data.delta?.type === 'text_delta' && data.delta.text) yield { type: 'text-delta', text: data.delta.text };
          break;
        case 'message_delta':
          stopReason = data.delta?.stop_reason ?? stopReason;
          // Cumulative: the last message_delta holds the total.
          outputTokens = data.usage?.output_tokens ?? outputTokens;
          break;
        case 'message_stop':
          yield { type: 'finish', reason: finishReason(stopReason), usage: { inputTokens, outputTokens } };
          return;
        case 'error':
          throw this.streamError(data.error);
        default:
          // ping, content_block_start/stop, and event types added after 2023-06-01.
          break;
      }
    }
    throw new LlmError({ kind: 'stream', message: `${this.name}: the stream ended before message_stop` });
  }

  private streamError(error: MessagesStreamEvent['error']): LlmError {
    const reason = safeReason(`${error?.type ?? 'error'}: ${error?.message ?? 'no message'}`, this.apiKey);
    if (error?.type === 'overloaded_error') {
      return new LlmError({ kind: 'http', status: OVERLOADED_STATUS, message: `${this.name} is overloaded (${reason})` });
    }
    return new LlmError({ kind: 'stream', message: `${this.name} reported an error mid-stream: ${reason}` });
  }
}

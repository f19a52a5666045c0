import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LlmError, type LlmStreamEvent } from '../../src/llm/types';

/** What a stream yielded before it ended, and the LlmError it ended with, if any. */
export type CollectedStream = { events: LlmStreamEvent[]; text: string; error: LlmError | undefined };

/** Drains a stream; `onEvent` runs after each event (e.g. to abort mid-stream). Non-LlmErrors fail the test. */
export async function collectStream(
  stream: AsyncIterable<LlmStreamEvent>,
  onEvent?: (event: LlmStreamEvent) => void,
): Promise<CollectedStream> {
  const events: LlmStreamEvent[] = [];
  let error: LlmError | undefined;
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent?.(event);
    }
  } catch (caught) {
    if (!(caught instanceof LlmError)) throw caught;
    error = caught;
  }
  const text = events.map((event) => (event.type === 'text-delta' ? event.text : '')).join('');
  return { events, text, error };
}

/** A URL where nothing listens: a port that was free a moment ago. */
export async function refusedUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

import { readSseEvents, SseParser, type SseEvent } from '../../src/llm/sse';

/** Every line ending, a comment, a multi-line event, a field without colon, ignored fields, multi-byte text. */
const STREAM =
  ': keep-alive\r\n' +
  'event: greeting\r\ndata: first line\r\ndata: second line\r\n\r\n' +
  'data: {"text":"héllo 👋"}\n\n' +
  'data:no-space\rid: 7\r\r' +
  'retry: 10\ndata\n\n' +
  'event: only-a-name\n\n' +
  'data: [DONE]\n\n';

const EXPECTED: SseEvent[] = [
  { event: 'greeting', data: 'first line\nsecond line' },
  { event: 'message', data: '{"text":"héllo 👋"}' },
  { event: 'message', data: 'no-space' },
  { event: 'message', data: '' },
  { event: 'message', data: '[DONE]' },
];

const BYTES = new TextEncoder().encode(STREAM);

async function parseChunks(chunks: Uint8Array[]): Promise<SseEvent[]> {
  async function* source() {
    yield* chunks;
  }
  const events: SseEvent[] = [];
  for await (const event of readSseEvents(source())) events.push(event);
  return events;
}

describe('server-sent events', () => {
  it('parses the stream in one chunk', async () => {
    expect(await parseChunks([BYTES])).toEqual(EXPECTED);
  });

  it('parses the stream one byte at a time', async () => {
    expect(await parseChunks(Array.from(BYTES, (byte) => Uint8Array.of(byte)))).toEqual(EXPECTED);
  });

  it('parses the stream split in three at every pair of byte offsets', async () => {
    const failures: string[] = [];
    for (let first = 0; first <= BYTES.length; first += 1) {
      for (let second = first; second <= BYTES.length; second += 1) {
        const events = await parseChunks([BYTES.subarray(0, first), BYTES.subarray(first, second), BYTES.subarray(second)]);
        if (JSON.stringify(events) !== JSON.stringify(EXPECTED)) failures.push(`${first},${second}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it.each([
    ['a last event without its blank line', 'data: [DONE]\n', [{ event: 'message', data: '[DONE]' }]],
    [
      'a last line without its line end',
      'data: a\n\ndata: b',
      [
        { event: 'message', data: 'a' },
        { event: 'message', data: 'b' },
      ],
    ],
    ['a name without data', 'event: ping\n\n', []],
    ['only comments', ': one\n: two\n\n', []],
  ])('handles %s at the end of the stream', (_name, text, expected) => {
    const parser = new SseParser();
    expect([...parser.push(text), ...parser.end()]).toEqual(expected);
  });

  it('does not read a "\\r" then "\\n" in the next chunk as two line ends', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\r')).toEqual([]);
    expect(parser.push('\ndata: b\r')).toEqual([]);
    expect(parser.push('\n\r\n')).toEqual([{ event: 'message', data: 'a\nb' }]);
  });
});

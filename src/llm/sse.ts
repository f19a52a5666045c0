/**
 * Server-sent events, as both chat providers stream them (WHATWG HTML "event stream" format).
 * Only `event` and `data` matter to us: `id` and `retry` serve browser reconnection, which we never do.
 */

/** One dispatched event: its `event:` name ("message" when none) and its `data:` lines joined by "\n". */
export type SseEvent = { event: string; data: string };

const LINE_END = /[\r\n]/g;

/** Incremental parser: feed it text split anywhere (mid-line, mid-event, between "\r" and "\n"). */
export class SseParser {
  private partialLine = '';
  /** A chunk ended on "\r": a "\n" opening the next chunk belongs to the same line end. */
  private afterCarriageReturn = false;
  private eventName = '';
  private dataLines: string[] = [];

  /** Returns the events completed by this text, in order. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let position = 0;
    if (this.afterCarriageReturn && text.length > 0) {
      this.afterCarriageReturn = false;
      if (text[0] === '\n') position = 1;
    }
    while (position < text.length) {
      LINE_END.lastIndex = position;
      const match = LINE_END.exec(text);
      if (!match) {
        this.partialLine += text.slice(position);
        break;
      }
      const lineEnd = match.index;
      const line = this.partialLine + text.slice(position, lineEnd);
      this.partialLine = '';
      position = lineEnd + 1;
      if (text[lineEnd] === '\r') {
        if (position === text.length) this.afterCarriageReturn = true;
        else if (text[position] === '\n') position += 1;
      }
      const event = this.takeLine(line);
      if (event) events.push(event);
    }
    return events;
  }

  /**
   * Call at the end of the stream. The standard drops an event without its closing blank line; we
   * keep it, because some OpenAI-compatible servers end with a bare "data: [DONE]\n".
   */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.partialLine !== '') {
      const event = this.takeLine(this.partialLine);
      this.partialLine = '';
      if (event) events.push(event);
    }
    const last = this.takeLine('');
    if (last) events.push(last);
    return events;
  }

  private takeLine(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    // Comment lines (": keep-alive") only keep proxies from closing an idle connection.
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const event = this.dataLines.length > 0 ? { event: this.eventName || 'message', data: this.dataLines.join('\n') } : undefined;
    this.eventName = '';
    this.dataLines = [];
    return event;
  }
}

/** Decodes UTF-8 bytes (split anywhere, even inside a character) and yields the events they carry. */
export async function* readSseEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  for await (const chunk of chunks) {
    yield* parser.push(decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode());
  yield* parser.end();
}

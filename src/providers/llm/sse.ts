// Server-Sent Events as an OpenAI-compatible server streams a chat completion (`data: {...}`
// events separated by blank lines, the last one `data: [DONE]`), parsed incrementally from
// text chunks that may split anywhere: inside a line, between a CR and its LF.

export interface SseEvent {
  /** The `event:` field, null when the event had none (OpenAI sends none). */
  event: string | null;
  /** The `data:` lines joined by newlines. */
  data: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event: string | null = null;

  /** The events this chunk completes, in order. */
  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const end = this.lineEnd(start);
      if (end === -1) break;
      const line = this.buffer.slice(start, end);
      start = end + (this.buffer[end] === '\r' && this.buffer[end + 1] === '\n' ? 2 : 1);
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** The last event when the stream ended without the blank line after it. */
  end(): SseEvent[] {
    const rest = this.buffer.replace(/\r$/, '');
    this.buffer = '';
    const event = rest === '' ? null : this.line(rest);
    const last = this.line('');
    return [event, last].filter((e): e is SseEvent => e !== null);
  }

  /** Where the line from `start` ends, or -1 when it may not have ended yet. */
  private lineEnd(start: number): number {
    for (let i = start; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c === '\n') return i;
      // A CR at the chunk's end may be the first half of a CRLF: wait for the next chunk.
      if (c === '\r') return i + 1 < this.buffer.length ? i : -1;
    }
    return -1;
  }

  private line(line: string): SseEvent | null {
    if (line === '') {
      const event = this.data.length > 0 ? { event: this.event, data: this.data.join('\n') } : null;
      this.data = [];
      this.event = null;
      return event;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    return null;
  }
}

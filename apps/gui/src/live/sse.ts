// A parser of Server-Sent Events as the HTML standard defines the format: the change stream
// (docs/api.md, Change stream) is read with fetch, since EventSource cannot send an
// Authorization header, and fetch hands over the body in chunks that split lines anywhere.

export interface ServerSentEvent {
  /** `message` unless the event names another. */
  event: string;
  data: string;
  /** The last `id:` seen on the stream, this event's or an earlier one's. */
  lastEventId: string;
}

export class SseParser {
  private buffer = '';
  /** A chunk ended with `\r`: a `\n` starting the next one belongs to the same line break. */
  private pendingCarriageReturn = false;
  private eventType = '';
  private dataLines: string[] = [];
  private lastEventId = '';
  /** The reconnection delay the server asked for with `retry:`, in milliseconds. */
  retryMs: number | undefined;

  constructor(private readonly dispatch: (event: ServerSentEvent) => void) {}

  /** Feeds decoded text; complete events are dispatched as their blank line arrives. */
  push(chunk: string): void {
    let text = chunk;
    if (this.pendingCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    this.pendingCarriageReturn = false;
    this.buffer += text;
    for (;;) {
      const end = this.buffer.search(/[\r\n]/);
      if (end === -1) return;
      const line = this.buffer.slice(0, end);
      let next = end + 1;
      if (this.buffer[end] === '\r') {
        if (end + 1 === this.buffer.length) this.pendingCarriageReturn = true;
        else if (this.buffer[end + 1] === '\n') next = end + 2;
      }
      this.buffer = this.buffer.slice(next);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatchEvent();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
  }

  private dispatchEvent(): void {
    const type = this.eventType;
    const data = this.dataLines;
    this.eventType = '';
    this.dataLines = [];
    // An event without data is dropped; its `id:` still counts.
    if (data.length === 0) return;
    this.dispatch({ event: type === '' ? 'message' : type, data: data.join('\n'), lastEventId: this.lastEventId });
  }

  /** The last `id:` received, to resume from with `Last-Event-ID`. */
  get resumeFrom(): string {
    return this.lastEventId;
  }
}

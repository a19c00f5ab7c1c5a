// A Server-Sent Events client for tests: reads a stream of `/events` as it comes.
import { request, type ClientRequest, type IncomingMessage } from 'node:http';

export interface ReceivedEvent {
  event: string;
  id?: string;
  /** The parsed `data:` line. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the fields they expect of each event
  data: any;
}

export class EventClient {
  readonly events: ReceivedEvent[] = [];
  comments = 0;
  ended = false;
  private buffer = '';

  private constructor(
    readonly status: number,
    readonly headers: IncomingMessage['headers'],
    private readonly req: ClientRequest,
    readonly res: IncomingMessage,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.take(chunk));
    res.on('end', () => (this.ended = true));
    res.on('close', () => (this.ended = true));
  }

  /** Opens `url` and resolves once the answer's head arrived. */
  static open(url: string, headers: Record<string, string> = {}): Promise<EventClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => resolve(new EventClient(res.statusCode!, res.headers, req, res)));
      req.on('error', reject);
      req.end();
    });
  }

  /** The events of a type (`put`, `delete`, `synced`, `resync`). */
  ofType(event: string): ReceivedEvent[] {
    return this.events.filter((e) => e.event === event);
  }

  /** Polls until `done` holds. */
  async until(done: (client: EventClient) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this)) {
      if (Date.now() > deadline) throw new Error(`timed out; received: ${JSON.stringify(this.events).slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.req.destroy();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      if (fields.event === undefined) continue;
      this.events.push({ event: fields.event, ...(fields.id !== undefined ? { id: fields.id } : {}), data: fields.data === undefined ? undefined : (JSON.parse(fields.data) as unknown) });
    }
  }
}

// One client's stream of changes as Server-Sent Events (docs/api.md, Change stream): the events its
// filter matches, `synced` after the initial state, `resync` when it must list again, comments to
// keep an idle connection open, and a bound on what it may leave unread.
import type { ServerResponse } from 'node:http';
import type { ChangeEvent, ChangeGroup } from './event.js';

/** Whether a stream sends an event. */
export type StreamFilter = (event: ChangeEvent) => boolean;

/** The initial state is written in chunks of about this size, each after the one before drained. */
const INITIAL_CHUNK = 64 * 1024;

const revisionEvent = (event: 'resync' | 'synced', revision: number) =>
  `${event === 'synced' ? `id: ${revision}\n` : ''}event: ${event}\ndata: {"revision":${revision}}\n\n`;

/** Resolves when the response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Writes streams' queued events together (the hub's fan-out pacing, docs/api.md, Change stream). */
export interface FlushScheduler {
  /** The stream has events queued: write them at the next flush. */
  queued(stream: EventStream): void;
}

const asBuffer = (text: string | Buffer): Buffer => (typeof text === 'string' ? Buffer.from(text) : text);

export class EventStream {
  private closed = false;
  /** Events waiting for the next flush, written to the socket together. */
  private queue: Array<string | Buffer> = [];
  private queuedBytes = 0;
  /** What waits behind the initial state, while it is written. */
  private held: Array<string | Buffer> | undefined;
  private heldBytes = 0;
  /** The revision of the last group written, for the `resync` of an overflow. */
  private revision = 0;
  private readonly endListeners: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly filter: StreamFilter,
    /** The same for streams whose filters match the same events. */
    private readonly filterKey: string,
    private readonly maxBufferedBytes: number,
    private readonly scheduler: FlushScheduler,
  ) {
    res.once('close', () => this.finish());
  }

  get ended(): boolean {
    return this.closed;
  }

  onEnd(listener: () => void): void {
    this.endListeners.push(listener);
  }

  /** The status line and headers, sent at once so the client knows the stream is open. */
  begin(): void {
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      // Proxies that buffer answers (nginx) pass this one on as it comes.
      'X-Accel-Buffering': 'no',
    });
    this.res.flushHeaders();
  }

  /** The events of a group the filter matches; the last one carries the revision as its `id`. */
  deliver(group: ChangeGroup, current: number): void {
    if (this.closed) return;
    this.revision = current;
    // Streams of one filter send the same bytes: encoded once per group.
    const cached = group.encoded?.get(this.filterKey);
    if (cached) {
      this.send(cached);
      return;
    }
    let last = -1;
    for (let i = group.events.length - 1; i >= 0; i--) {
      if (this.filter(group.events[i]!)) {
        last = i;
        break;
      }
    }
    if (last < 0) return;
    let text = '';
    for (let i = 0; i <= last; i++) {
      const event = group.events[i]!;
      if (i === last) text += event.frame(true);
      else if (this.filter(event)) text += event.frame(false);
    }
    const bytes = Buffer.from(text);
    (group.encoded ??= new Map()).set(this.filterKey, bytes);
    this.send(bytes);
  }

  /** Tells the client to list again: the stream cannot give it every change after its revision. */
  resync(revision: number, andEnd: boolean): void {
    if (this.closed) return;
    if (andEnd) {
      // The client lists again: what waits for the next flush has no use any more.
      this.queue = [];
      this.queuedBytes = 0;
      this.res.end(revisionEvent('resync', revision));
      this.finish();
    } else {
      this.res.write(revisionEvent('resync', revision));
    }
  }

  /** Keeps what comes from here on until the initial state is written. */
  hold(): void {
    this.held = [];
  }

  /** The current state as `put` events, `synced`, then what came meanwhile. */
  async sendInitial(events: readonly ChangeEvent[], revision: number): Promise<void> {
    let chunk = '';
    for (const event of events) {
      chunk += event.frame(false);
      if (chunk.length >= INITIAL_CHUNK) {
        if (this.closed) return;
        if (!this.res.write(chunk)) await drained(this.res);
        chunk = '';
      }
    }
    if (this.closed) return;
    const held = this.held ?? [];
    this.held = undefined;
    this.heldBytes = 0;
    this.res.write(chunk + revisionEvent('synced', revision));
    for (const text of held) this.res.write(text);
  }

  comment(): void {
    if (!this.closed && !this.held) this.send(': keep-alive\n\n');
  }

  end(): void {
    if (this.closed) return;
    const rest = this.takeQueue();
    if (rest) this.res.end(rest);
    else this.res.end();
    this.finish();
  }

  /** Writes what is queued, in one piece. */
  flush(): void {
    if (this.closed) return;
    const chunk = this.takeQueue();
    if (chunk) this.res.write(chunk);
  }

  private takeQueue(): string | Buffer | undefined {
    if (this.queue.length === 0) return undefined;
    const chunk = this.queue.length === 1 ? this.queue[0]! : Buffer.concat(this.queue.map(asBuffer), this.queuedBytes);
    this.queue = [];
    this.queuedBytes = 0;
    return chunk;
  }

  /** Queues for the next flush, unless the client left more than it may unread: then `resync`, and the stream ends. */
  private send(text: string | Buffer): void {
    if (this.held) {
      this.held.push(text);
      this.heldBytes += text.length;
      if (this.heldBytes > this.maxBufferedBytes) {
        this.held = undefined;
        this.resync(this.revision, true);
      }
      return;
    }
    const length = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (this.res.writableLength + this.queuedBytes + length > this.maxBufferedBytes) {
      this.resync(this.revision, true);
      return;
    }
    this.queue.push(text);
    this.queuedBytes += length;
    if (this.queue.length === 1) this.scheduler.queued(this);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.endListeners) listener();
  }
}

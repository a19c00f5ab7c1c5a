// What the data plane server and its transport worker say to each other (docs/xds.md, The
// transport). Stream traffic goes in batches: one message carries the bytes of many gRPC messages
// in one transferred buffer, and a flat list of events, four numbers each, says what they are.

/** What the worker is started with. */
export interface TransportInit {
  port: number;
  address: string;
  /** PEM certificate and key; absent serves plain text. */
  tls: { cert: string; key: string } | undefined;
  maxReceiveMessageLength: number;
}

/** What a stream speaks: a variant of the ADS protocol, or the health discovery service's. */
export type StreamVariant = 'sotw' | 'delta' | 'hds';

/**
 * Events of a batch, each `[kind, stream id, a, b]`. `data`: a gRPC message, bytes `a` to `a + b`
 * of the batch's buffer. `open` (from the worker): a new stream, described by `notes[a]`. `end`:
 * from the worker, the proxy ended its side; to it, end the stream with status OK. `closed` (from
 * the worker): the stream is over. `fail` (to the worker): end the stream with the message
 * `notes[a]` and gRPC status `b`.
 */
export const EVENT = { open: 0, data: 1, end: 2, closed: 3, fail: 4 } as const;

export interface OpenedStream {
  variant: StreamVariant;
  /** The stream's `authorization` metadata, every value. */
  authorization: string[];
  /** The address the connection comes from (no port); empty when unknown. */
  peerAddress: string;
}

/** An HTTP/1.1 `POST /bootstrap`, as the worker read it. */
export interface BootstrapCall {
  body: string;
  /** The Host header. */
  host: string;
  accept: string | undefined;
}

/** The content type of the port's plain-text answers (refusals of bootstrap requests). */
export const PLAIN_TEXT = 'text/plain; charset=utf-8';

export interface HttpAnswer {
  status: number;
  contentType: string;
  body: string;
}

export type FromTransport =
  | { type: 'listening'; port: number }
  /** The port could not be opened; `code` is the system's (`EADDRINUSE`), for the caller to name its setting. */
  | { type: 'failed'; message: string; code?: string }
  | { type: 'streams'; bytes: ArrayBuffer | undefined; events: number[]; notes: OpenedStream[] }
  | { type: 'bootstrap'; id: number; call: BootstrapCall }
  | { type: 'portClosed' }
  | { type: 'stopped' };

export type ToTransport =
  | { type: 'streams'; bytes: ArrayBuffer | undefined; events: number[]; notes: string[] }
  | { type: 'bootstrap'; id: number; answer: HttpAnswer }
  | { type: 'closePort' }
  | { type: 'shutdown' };

/** Room of a batch's buffer; a larger message gets a buffer of its own. */
const BATCH_BYTES = 256 * 1024;

/**
 * Messages and events gathered until they are posted: at the next turn of the event loop, or at
 * once when the buffer is full, so the other side starts on them while this one goes on. Each
 * posted buffer is transferred, not copied. `Note`: what `open` and `fail` events point to.
 */
export class OutgoingBatch<Note> {
  private buffer = Buffer.allocUnsafeSlow(BATCH_BYTES);
  private used = 0;
  private events: number[] = [];
  private notes: Note[] = [];
  private scheduled = false;

  constructor(private readonly post: (bytes: ArrayBuffer | undefined, events: number[], notes: Note[]) => void) {}

  /**
   * Adds a message of stream `id`. `write` is given the room left and returns the bytes the
   * message takes, writing them only when they fit.
   */
  addMessage(id: number, write: (into: Buffer) => number): void {
    let size = write(this.buffer.subarray(this.used));
    if (this.used + size > this.buffer.length) {
      this.flush();
      if (size > this.buffer.length) this.buffer = Buffer.allocUnsafeSlow(size);
      size = write(this.buffer);
    }
    this.events.push(EVENT.data, id, this.used, size);
    this.used += size;
    this.schedule();
  }

  addEvent(kind: number, id: number, a = 0, b = 0): void {
    this.events.push(kind, id, a, b);
    this.schedule();
  }

  /** Adds an event whose first number is the index of `note`. */
  addNoted(kind: number, id: number, note: Note, b = 0): void {
    this.notes.push(note);
    this.addEvent(kind, id, this.notes.length - 1, b);
  }

  /** Posts what was gathered. */
  flush(): void {
    if (this.events.length === 0) return;
    const { events, notes } = this;
    const bytes = this.used > 0 ? this.buffer.buffer : undefined;
    this.events = [];
    this.notes = [];
    if (bytes) {
      this.buffer = Buffer.allocUnsafeSlow(BATCH_BYTES);
      this.used = 0;
    }
    this.post(bytes, events, notes);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }
}

// Whole answers of the GETs that are made of stored data alone (docs/architecture.md, "Request
// path"): the first request of a URL runs its handler, which sends the answer as always; the
// answer's added headers and body are kept, and later requests of the URL get them again with no
// handler, no promise and no store read, until a write of what the route's answer is made of.
// Everything around the handler (request log, metrics, CORS, limits, the caller, 404/405/406)
// runs for them as for any request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { ResourceReader } from '@mesh/store';
import type { Route, RouteMatch } from './route-table.js';

const MAX_ANSWERS = 512;
const MAX_BYTES = 16 * 1024 * 1024;

type Sources = NonNullable<Route['answerChangesWith']>;

/** Node's own (since 15.13), which its type declarations leave out: the names as set, with their case. */
interface RawHeaderNames {
  getRawHeaderNames(): string[];
}

export interface KeptAnswer {
  /** What the route's answer is made of. */
  sources: Sources;
  /** What `stampOf` gave for the sources when the answer was made. */
  stamp: number;
  /** The route its URL matched: a later request of the URL needs no match of its own. */
  match: RouteMatch;
  /** The headers its handler set, as set (name's case, order). */
  headers: ReadonlyArray<readonly [string, number | string | readonly string[]]>;
  body: Buffer;
}

export class AnswerCache {
  /** Writes announced so far, of every type and by type. */
  private changes = 0;
  private readonly generations = new Map<string, number>();
  private readonly answers = new Map<string, KeptAnswer>();
  private bytes = 0;
  private readonly unsubscribe: () => void;

  constructor(store: ResourceReader) {
    this.unsubscribe = store.onChange((change) => {
      this.changes++;
      this.generations.set(change.type, (this.generations.get(change.type) ?? 0) + 1);
    });
  }

  /** The kept answer of the request's URL, if there is one still current. */
  find(req: IncomingMessage): KeptAnswer | undefined {
    const answer = this.answers.get(keyOf(req));
    return answer !== undefined && answer.stamp === this.stampOf(answer.sources) ? answer : undefined;
  }

  /** Sends a kept answer. */
  send(res: ServerResponse, answer: KeptAnswer): void {
    // Sent once the request has been read to its end, as a handler's answer is: an answer sent
    // before would keep open a connection the client asked to close (limits.ts, guardConnections).
    process.nextTick(sendAnswer, res, answer);
  }

  /**
   * Keeps what the handler about to run sends: its body and the headers it adds to those already
   * set, when it answers 200 and nothing the route depends on was written meanwhile (a write
   * during the handler may or may not be in its answer: it is sent, not kept).
   */
  record(req: IncomingMessage, res: ServerResponse, sources: Sources, match: RouteMatch): void {
    const stamp = this.stampOf(sources);
    const setBefore = new Set(res.getHeaderNames());
    const chunks: Buffer[] = [];
    let keepable = true;
    const collect = (chunk: unknown, encoding: unknown): void => {
      if (typeof chunk === 'string' && (typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8')) chunks.push(Buffer.from(chunk));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      else if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') keepable = false;
    };
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    res.write = ((...args: unknown[]) => {
      collect(args[0], args[1]);
      return Reflect.apply(write, undefined, args) as boolean;
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      collect(args[0], args[1]);
      res.write = write;
      res.end = end;
      if (keepable && res.statusCode === 200 && this.stampOf(sources) === stamp) {
        const headers = (res as ServerResponse & RawHeaderNames)
          .getRawHeaderNames()
          .filter((name) => !setBefore.has(name.toLowerCase()))
          .map((name) => [name, res.getHeader(name)!] as const);
        this.keep(keyOf(req), { sources, stamp, match, headers, body: Buffer.concat(chunks) });
      }
      return Reflect.apply(end, undefined, args) as ServerResponse;
    }) as typeof res.end;
  }

  /** Stops following the store's writes. */
  close(): void {
    this.unsubscribe();
  }

  /** A number that grows with every write of the sources: a sum of counters that only grow. */
  private stampOf(sources: Sources): number {
    if (sources === 'any') return this.changes;
    let stamp = 0;
    for (const type of sources) stamp += this.generations.get(type) ?? 0;
    return stamp;
  }

  private keep(key: string, answer: KeptAnswer): void {
    if (answer.body.length > MAX_BYTES) return;
    this.forget(key);
    // The oldest answers go first.
    for (const [oldest] of this.answers) {
      if (this.answers.size < MAX_ANSWERS && this.bytes + answer.body.length <= MAX_BYTES) break;
      this.forget(oldest);
    }
    this.answers.set(key, answer);
    this.bytes += answer.body.length;
  }

  private forget(key: string): void {
    const answer = this.answers.get(key);
    if (answer === undefined) return;
    this.answers.delete(key);
    this.bytes -= answer.body.length;
  }
}

function sendAnswer(res: ServerResponse, answer: KeptAnswer): void {
  res.statusCode = 200;
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  res.end(answer.body);
}

/** Answers name their own URL (a list's `next` link), so scheme and host are part of the key. */
function keyOf(req: IncomingMessage): string {
  return `${(req.socket as TLSSocket).encrypted ? 'https' : 'http'}\u0000${req.headers.host ?? ''}\u0000${req.url ?? ''}`;
}

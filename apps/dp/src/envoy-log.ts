// Envoy's log, passed on by mesh-dp and read on the way: when the control plane closes Envoy's xDS
// stream (a refused token, a proxy it cannot register), Envoy only warns, with the control plane's
// message percent-encoded as gRPC carries it. mesh-dp says it itself, decoded, at error level.
import type { Readable, Writable } from 'node:stream';
import type { Logger } from './log.js';

/** Envoy's warning when an xDS stream closes: `<method> gRPC config stream to <cluster> closed[ since <n>s ago]: <status>, <message>`. */
const STREAM_CLOSED = /(\w+) gRPC config stream to \S+ closed(?: since \d+s ago)?: (\d+), (.*)$/;

/** OK, and the statuses Envoy itself retries as passing trouble (deadline exceeded, resource exhausted, unavailable). */
const NOT_REFUSALS = new Set([0, 4, 8, 14]);

/** Envoy's response code details, in braces after the message, when the status came from the control plane. */
const FROM_CONTROL_PLANE = 'via_upstream';

/** A refusal that keeps coming back is logged again at most this often (Envoy retries within seconds). */
const REPEAT_INTERVAL_MS = 60_000;

/** Longest line kept while waiting for its end; Envoy's lines are far shorter. */
const MAX_LINE = 64 * 1024;

export interface StreamRefusal {
  /** `StreamAggregatedResources` or `DeltaAggregatedResources`. */
  stream: string;
  grpcStatus: number;
  reason: string;
}

/** gRPC status messages travel percent-encoded (UTF-8 bytes as `%XX`); anything else stays as it is. */
export function decodeGrpcMessage(text: string): string {
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (encoded) => Buffer.from(encoded.replaceAll('%', ''), 'hex').toString('utf8'));
}

/** The message and, when it ends with one, Envoy's brace-enclosed details (which may nest braces). */
function splitDetails(text: string): { message: string; details?: string } {
  if (!text.endsWith('}')) return { message: text };
  let depth = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] === '}') depth++;
    else if (text[i] === '{' && --depth === 0) return { message: text.slice(0, i), details: text.slice(i + 1, -1) };
  }
  return { message: text };
}

/** The refusal an Envoy log line reports: a stream the control plane closed with an error, not a lost connection. */
export function streamRefusalOf(line: string): StreamRefusal | undefined {
  const match = STREAM_CLOSED.exec(line);
  if (!match) return undefined;
  const grpcStatus = Number(match[2]);
  if (NOT_REFUSALS.has(grpcStatus)) return undefined;
  const { message, details } = splitDetails(match[3] ?? '');
  if (details !== undefined && details !== FROM_CONTROL_PLANE) return undefined;
  return { stream: match[1] ?? '', grpcStatus, reason: decodeGrpcMessage(message) };
}

/** Logs a refusal when it comes or changes; the same one coming back, again at most once a minute with how often it came meanwhile. */
export class RefusalReporter {
  private last: { key: string; loggedAt: number; repeats: number } | undefined;

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  line(line: string): void {
    const refusal = streamRefusalOf(line);
    if (!refusal) return;
    const key = `${refusal.grpcStatus} ${refusal.reason}`;
    const now = this.now();
    const last = this.last?.key === key ? this.last : undefined;
    if (last && now - last.loggedAt < REPEAT_INTERVAL_MS) {
      last.repeats++;
      return;
    }
    const again = last ? { refusedAgain: last.repeats } : {};
    this.log('error', `the control plane refused Envoy's configuration stream: ${refusal.reason}`, { grpcStatus: refusal.grpcStatus, stream: refusal.stream, ...again });
    this.last = { key, loggedAt: now, repeats: 0 };
  }
}

/** Copies `source` to `sink` as it comes, and hands each complete line to `onLine`. */
export function passOnLines(source: Readable, sink: Writable, onLine: (line: string) => void): void {
  let partial = '';
  source.setEncoding('utf8');
  source.on('data', (chunk: string) => {
    sink.write(chunk);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    if (partial.length > MAX_LINE) partial = '';
    for (const line of lines) onLine(line);
  });
}

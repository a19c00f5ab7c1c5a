// One log line per API request, with a request id: the caller's `x-request-id` when it sends one,
// a new UUID otherwise, echoed back. The line has pino-http's shape (`req`, `res`, `responseTime`,
// `request completed`), written when the answer is done. Credentials never reach the log: no
// header is logged.
//
// A kept answer costs a few tens of µs (docs/architecture.md, Request path), and pino's generic
// serialisation of the entry's nested objects was a fifth of that: with a logger that formats
// entries as pino does by default (no mixin, hooks, log formatter, prefix, nested key or serializer
// of `req`/`res`), the line is put together here from the logger's own level, time and bindings
// and handed to its stream, as pino would; any other logger gets the entry through its `info`.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { symbols, type Logger } from 'pino';

const REQUEST_ID = 'x-request-id';
const VALID_ID = /^[\w.:-]{1,128}$/;

/** Called when a request's answer is done (sent, or its connection gone first). */
export type RequestDone = () => void;

interface RequestEntry {
  id: string;
  method: string;
  url: string;
  statusCode: number;
  responseTime: number;
}

/** Where a logger keeps the prefix of its messages (pino 8.14 and later, left out of its type declarations). */
const MSG_PREFIX = (symbols as unknown as Record<string, symbol>).msgPrefixSym ?? Symbol('no message prefix');

type Outcome = 'request errored' | 'request aborted' | 'request completed';

/** Writes an entry with its message at its level (`info`, `error`). */
type EntryWriter = (level: 'info' | 'error', entry: RequestEntry, message: Outcome) => void;

/** Sets the request id header and returns what logs the request once its answer is done. */
export function requestLog(logger: Logger): (req: IncomingMessage, res: ServerResponse) => RequestDone {
  // The entry holds none of the keys the logger redacts (passwords, tokens), so its lines skip the
  // redaction pass, which cost more than the rest of the line.
  const requests = logger.child({}, { redact: [] });
  const write = lineWriter(requests) ?? entryWriter(requests);
  return (req, res) => {
    const started = Date.now();
    const sent = req.headers[REQUEST_ID];
    const id = typeof sent === 'string' && VALID_ID.test(sent) ? sent : randomUUID();
    res.setHeader(REQUEST_ID, id);
    return () => {
      const entry = { id, method: req.method ?? '', url: req.url ?? '', statusCode: res.statusCode, responseTime: Date.now() - started };
      if (res.statusCode >= 500) write('error', entry, 'request errored');
      else if (!res.writableFinished) write('info', entry, 'request aborted');
      else write('info', entry, 'request completed');
    };
  };
}

function entryWriter(requests: Logger): EntryWriter {
  return (level, { id, method, url, statusCode, responseTime }, message) => {
    requests[level]({ req: { id, method, url }, res: { statusCode }, responseTime }, message);
  };
}

/** Pino's state of a logger, under the symbols it exports for libraries that write beside it. */
interface PinoState {
  [symbols.lsCacheSym]: Record<number, string>;
  [symbols.timeSym]: () => string;
  [symbols.chindingsSym]: string;
  [symbols.endSym]: string;
  [symbols.streamSym]: { write(line: string): void; [symbols.needsMetadataGsym]?: boolean };
  [symbols.messageKeySym]: string;
  [symbols.nestedKeySym]: string | null;
  [symbols.mixinSym]?: unknown;
  [symbols.hooksSym]: { logMethod?: unknown; streamWrite?: unknown };
  [symbols.formattersSym]: { log?: unknown };
  [symbols.serializersSym]: Record<string, unknown>;
}

/** The line as pino writes it by default, or undefined when the logger formats entries otherwise. */
function lineWriter(requests: Logger): EntryWriter | undefined {
  const state = requests as unknown as PinoState;
  const stream = state[symbols.streamSym];
  const plain =
    typeof stream?.write === 'function' &&
    !stream[symbols.needsMetadataGsym] &&
    state[symbols.messageKeySym] === 'msg' &&
    !state[symbols.nestedKeySym] &&
    !state[symbols.mixinSym] &&
    !(requests as unknown as Record<symbol, unknown>)[MSG_PREFIX] &&
    state[symbols.hooksSym]?.logMethod === undefined &&
    state[symbols.hooksSym]?.streamWrite === undefined &&
    state[symbols.formattersSym]?.log === undefined &&
    !state[symbols.serializersSym]?.req &&
    !state[symbols.serializersSym]?.res &&
    typeof state[symbols.lsCacheSym]?.[requests.levels.values.info!] === 'string';
  if (!plain) return undefined;
  // What comes before and after an entry's own fields; the bindings of this child never change.
  const levelOf = { info: state[symbols.lsCacheSym][requests.levels.values.info!]!, error: state[symbols.lsCacheSym][requests.levels.values.error!]! };
  const time = state[symbols.timeSym].bind(state);
  const bindings = state[symbols.chindingsSym];
  const end = state[symbols.endSym];
  // The id is a UUID or matched VALID_ID, and Node's parser takes only token characters in a
  // method: neither needs escaping in JSON.
  return (level, { id, method, url, statusCode, responseTime }, message) => {
    if (!requests.isLevelEnabled(level)) return;
    stream.write(`${levelOf[level]}${time()}${bindings},"req":{"id":"${id}","method":"${method}","url":${JSON.stringify(url)}},"res":{"statusCode":${statusCode}},"responseTime":${responseTime},"msg":"${message}"${end}`);
  };
}

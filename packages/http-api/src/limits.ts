// Limits of the API servers (docs/api.md, Limits): how large a body may be, how many requests are
// served at once, and connections that end cleanly: the standard error body for what Node's HTTP
// parser refuses before any route runs, and answers a client can read while it is still sending.
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from './errors.js';

export interface ApiLimits {
  /** The largest request body accepted, in bytes; a larger one is a 413. */
  maxRequestBodySize: number;
  /** Requests served at once; one more is a 503. 0: no limit. */
  maxConcurrentRequests: number;
}

export const DEFAULT_API_LIMITS: ApiLimits = { maxRequestBodySize: 8 * 1024 * 1024, maxConcurrentRequests: 0 };

/** Lets a request through (true), or answers it at once (false). */
export type RequestGate = (res: ServerResponse) => boolean;

const admitEvery: RequestGate = () => true;

/**
 * Counts the requests in flight and refuses one beyond `max` with 503 and the standard body before
 * it does any work, so a flood cannot pile up work (and memory) without bound. A request leaves
 * the count when its answer is sent or its connection is gone.
 */
export function limitConcurrentRequests(max: number): RequestGate {
  if (max === 0) return admitEvery;
  let inFlight = 0;
  const leave = () => inFlight--;
  return (res) => {
    if (inFlight >= max) {
      res.statusCode = 503;
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Retry-After', '1');
      res.end(JSON.stringify(errorBody(503, 'Service Unavailable', `Too many requests in flight (at most ${max}); try again later`)));
      return false;
    }
    inFlight++;
    res.once('close', leave);
    return true;
  };
}

/** What the parser's errors answer, as Node answers them, with the standard body. */
const PARSER_REFUSALS: Record<string, { status: number; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: 'The request line and headers are larger than the server accepts' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time' },
};
const MALFORMED = { status: 400, detail: 'Malformed HTTP request' };
/** How long a refused connection is read on before it closes. */
const LINGER_MS = 2000;

/** Whether the client asked to close the connection after this request (HTTP/1.0 unless it asked to keep it). */
function wantsClose(req: IncomingMessage): boolean {
  const connection = String(req.headers.connection ?? '').toLowerCase();
  return req.httpVersion === '1.0' ? !connection.includes('keep-alive') : connection.includes('close');
}

/**
 * Guards the connections of an API server:
 * - what the HTTP parser refuses (431, 408, 400) is answered with the standard error body instead
 *   of Node's bare status line, then the connection closes; nothing is written on a connection
 *   whose request is already being answered (a late body of a refused request), so an answer is
 *   never followed by another;
 * - an answer sent while its request body is still coming in (a 413, a 404, a 415 that never reads
 *   the body) keeps the connection open even when the client asked to close it. Node would close
 *   at once, and the reset that follows the rest of the body can wipe the answer before the client
 *   reads it (RFC 9112, 9.6). Kept open, the rest is read and dropped, and the client closes once
 *   it has the answer; `apiServer.readTimeout` bounds how long that may take.
 */
export function guardConnections(server: Server): void {
  // A client may close its sending side once its request is sent: its answer still goes out, then
  // the connection closes (Node's default ends the connection at once, and an answer that waits
  // for the store, such as a write grouped with others, docs/architecture.md, is lost).
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // The last request of each connection, and its answer.
  const exchanges = new WeakMap<Duplex, { req: IncomingMessage; res: ServerResponse }>();
  /** Whether an answer has begun on the connection for a request not done with yet. */
  const answering = (socket: Duplex): boolean => {
    const exchange = exchanges.get(socket);
    return exchange !== undefined && exchange.res.headersSent && !(exchange.req.complete && exchange.res.writableFinished);
  };
  // Ahead of the app, which may answer before its first await.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    exchanges.set(req.socket, { req, res });
    if (wantsClose(req)) {
      const writeHead = res.writeHead.bind(res);
      res.writeHead = ((...args: Parameters<typeof writeHead>) => {
        if (!req.complete && !res.hasHeader('connection')) res.setHeader('Connection', 'keep-alive');
        return writeHead(...args);
      }) as typeof res.writeHead;
    }
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || answering(socket) || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const { status, detail } = PARSER_REFUSALS[error.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify(errorBody(status, STATUS_CODES[status]!, detail));
    const head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
    socket.end(head + body);
    // The parser is done with this connection. What the client is still sending (the body of a
    // request whose headers were too large) is read and dropped for a while, so that closing does
    // not reset the connection under the answer (RFC 9112, 9.6).
    socket.removeAllListeners('data');
    socket.on('data', () => {});
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(linger));
  });
}

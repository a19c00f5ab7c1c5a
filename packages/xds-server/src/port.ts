// One port for ADS and `POST /bootstrap` (docs/xds.md, The port): connections are accepted here,
// over TLS (ALPN `h2` or `http/1.1`) or in plain text (the HTTP/2 client preface tells), and handed
// to the gRPC server (HTTP/2) or to the bootstrap handler (HTTP/1.1).
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { Duplex } from 'node:stream';

/** The first bytes of every HTTP/2 connection without TLS (RFC 9113, 3.4). */
const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface PortOptions {
  port: number;
  address: string;
  /** PEM certificate and key; absent serves plain text. */
  tls: { cert: string; key: string } | undefined;
  /** Takes an HTTP/2 connection (the gRPC server's connection injector). */
  readonly http2: (connection: Duplex) => void;
  /** Answers HTTP/1.1 requests. */
  readonly http1: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface DataplanePort {
  readonly port: number;
  /** Stops accepting; open connections are ended by their owners. */
  close(): Promise<void>;
}

/** A connection that has not shown what it speaks within this long is closed. */
const SNIFF_TIMEOUT_MS = 10_000;

/** Reads until the connection shows whether it is HTTP/2, then hands it over with the bytes read so far. */
function sniff(socket: Socket, route: (http2: boolean, seen: Buffer) => void): void {
  let seen = Buffer.alloc(0);
  const stalled = setTimeout(() => socket.destroy(), SNIFF_TIMEOUT_MS);
  socket.once('close', () => clearTimeout(stalled));
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const length = Math.min(seen.length, HTTP2_PREFACE.length);
    const http2 = seen.subarray(0, length).equals(HTTP2_PREFACE.subarray(0, length));
    if (http2 && seen.length < HTTP2_PREFACE.length) return;
    clearTimeout(stalled);
    socket.off('data', onData);
    socket.pause();
    route(http2, seen);
  };
  socket.on('data', onData);
}

export async function openDataplanePort(options: PortOptions): Promise<DataplanePort> {
  const http1 = createHttpServer(options.http1);
  http1.keepAliveTimeout = 5000;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  let server: Server;
  if (options.tls) {
    const tlsServer = createTlsServer({ cert: options.tls.cert, key: options.tls.key, ALPNProtocols: ['h2', 'http/1.1'], minVersion: 'TLSv1.2' });
    tlsServer.on('secureConnection', (socket: TLSSocket) => {
      track(socket);
      if (socket.alpnProtocol === 'h2') options.http2(socket);
      else http1.emit('connection', socket);
    });
    tlsServer.on('tlsClientError', (_error, socket) => socket.destroy());
    server = tlsServer;
  } else {
    server = createNetServer((socket) => {
      track(socket);
      sniff(socket, (http2, seen) => {
        socket.unshift(seen);
        // HTTP/2 sessions take the bytes left in a socket's buffer before reading its handle;
        // handing them the socket itself spares every frame a pass through a JavaScript stream.
        if (http2) {
          options.http2(socket);
        } else {
          http1.emit('connection', socket);
          socket.resume();
        }
      });
    });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        http1.closeIdleConnections();
        // Bootstrap requests are short; ADS connections are ended by the gRPC server's drain.
        setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, 1000).unref();
      }),
  };
}

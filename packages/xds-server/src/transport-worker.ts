// The data plane server's transport, in a worker thread of its own (docs/xds.md, The transport):
// the port, TLS, HTTP/2 and gRPC framing of the ADS and health discovery streams, and the HTTP/1.1 side of
// `POST /bootstrap`. It knows nothing of xDS: stream messages go to the main thread as bytes, in
// batches, and the main thread's answers come back the same way, so that a push to thousands of
// proxies leaves the main thread only the configurations to compute.
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { openDataplanePort } from './port.js';
import {
  type BootstrapCall,
  EVENT,
  type FromTransport,
  type HttpAnswer,
  type OpenedStream,
  OutgoingBatch,
  PLAIN_TEXT,
  type StreamVariant,
  type ToTransport,
  type TransportInit,
} from './transport-protocol.js';

const ADS_SERVICE = '/envoy.service.discovery.v3.AggregatedDiscoveryService';
const HDS_SERVICE = '/envoy.service.health.v3.HealthDiscoveryService';

/** The largest bootstrap request read. */
const MAX_BOOTSTRAP_BODY = 1024 * 1024;

const main = parentPort;
if (!main) throw new Error('the data plane transport runs in a worker thread');
const init = workerData as TransportInit;
// The thread's name in `top -H` and `/proc/<pid>/task/*/comm` (docs/architecture.md, Threads); Linux only.
try {
  writeFileSync('/proc/thread-self/comm', 'dp-transport');
} catch {
  // Not Linux: the thread keeps the process's name.
}
const send = (message: FromTransport, transfer: ArrayBuffer[] = []) => main.postMessage(message, transfer);

type Call = ServerDuplexStream<Buffer, Buffer>;
const calls = new Map<number, Call>();
let lastStreamId = 0;
const toMain = new OutgoingBatch<OpenedStream>((bytes, events, notes) => send({ type: 'streams', bytes, events, notes }, bytes ? [bytes] : []));

/** The address of a peer as grpc-js tells it (`<address>:<port>`, `unknown`), without the port. */
function peerAddressOf(peer: string): string {
  const withPort = /^(.+):\d+$/.exec(peer);
  return withPort ? (withPort[1] ?? '') : '';
}

function accept(call: Call, variant: StreamVariant): void {
  const id = ++lastStreamId;
  calls.set(id, call);
  const authorization = call.metadata.get('authorization').map((value) => (typeof value === 'string' ? value : value.toString('utf8')));
  toMain.addNoted(EVENT.open, id, { variant, authorization, peerAddress: peerAddressOf(call.getPeer()) });
  call.on('data', (message: Buffer) => toMain.addMessage(id, (into) => (message.length <= into.length ? message.copy(into) : message.length)));
  call.on('end', () => toMain.addEvent(EVENT.end, id));
  const closed = () => {
    if (calls.get(id) !== call) return;
    calls.delete(id);
    toMain.addEvent(EVENT.closed, id);
  };
  call.on('cancelled', closed);
  call.on('error', closed);
  call.on('close', closed);
}

/** Messages pass as they are: the main thread encodes and decodes them. */
const asIs = (bytes: Buffer): Buffer => bytes;

const grpc = new Server({ 'grpc.max_receive_message_length': init.maxReceiveMessageLength });
grpc.register(`${ADS_SERVICE}/StreamAggregatedResources`, (call: Call) => accept(call, 'sotw'), asIs, asIs, 'bidi');
grpc.register(`${ADS_SERVICE}/DeltaAggregatedResources`, (call: Call) => accept(call, 'delta'), asIs, asIs, 'bidi');
grpc.register(`${HDS_SERVICE}/StreamHealthCheck`, (call: Call) => accept(call, 'hds'), asIs, asIs, 'bidi');
// TLS is ended by the port: the gRPC server reads the plain HTTP/2 stream.
const injector = grpc.createConnectionInjector(ServerCredentials.createInsecure());

/** Bootstrap requests waiting for the main thread's answer, by id. */
const bootstraps = new Map<number, ServerResponse>();
let lastBootstrapId = 0;

function answer(res: ServerResponse, { status, contentType, body }: HttpAnswer, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), ...extra });
  res.end(body);
}

/** The HTTP/1.1 side of the port: `POST /bootstrap`, nothing else; the main thread answers it. */
function bootstrapRequest(req: IncomingMessage, res: ServerResponse): void {
  if ((req.url ?? '').split('?')[0] !== '/bootstrap') return answer(res, { status: 404, contentType: PLAIN_TEXT, body: '404: Page Not Found' });
  if (req.method !== 'POST') return answer(res, { status: 405, contentType: PLAIN_TEXT, body: 'Method Not Allowed' }, { allow: 'POST' });
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BOOTSTRAP_BODY) {
      if (!res.headersSent) answer(res, { status: 413, contentType: PLAIN_TEXT, body: 'Request Entity Too Large' });
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (res.headersSent) return;
    const id = ++lastBootstrapId;
    bootstraps.set(id, res);
    res.on('close', () => bootstraps.delete(id));
    const call: BootstrapCall = { body: Buffer.concat(chunks).toString('utf8'), host: req.headers.host ?? '', accept: req.headers.accept };
    send({ type: 'bootstrap', id, call });
  });
}

function fromMain(message: ToTransport): void {
  switch (message.type) {
    case 'streams': {
      const { events, notes } = message;
      const bytes = message.bytes ? Buffer.from(message.bytes) : undefined;
      for (let at = 0; at < events.length; at += 4) {
        const call = calls.get(events[at + 1]!);
        if (!call) continue;
        const kind = events[at];
        // grpc-js copies a message into its frame as it is written: views of the batch will do.
        if (kind === EVENT.data && bytes) call.write(bytes.subarray(events[at + 2], events[at + 2]! + events[at + 3]!));
        else if (kind === EVENT.end) call.end();
        else if (kind === EVENT.fail) call.emit('error', { code: events[at + 3], details: notes[events[at + 2]!] });
      }
      return;
    }
    case 'bootstrap': {
      const res = bootstraps.get(message.id);
      bootstraps.delete(message.id);
      if (res && !res.headersSent) answer(res, message.answer);
      return;
    }
    case 'closePort':
      void port.then((opened) => opened.close()).then(() => send({ type: 'portClosed' }));
      return;
    case 'shutdown':
      grpc.forceShutdown();
      // The streams' last frames go out before the main thread ends this one.
      setImmediate(() => send({ type: 'stopped' }));
      return;
  }
}

const port = openDataplanePort({
  port: init.port,
  address: init.address,
  tls: init.tls,
  http2: (connection) => injector.injectConnection(connection),
  http1: bootstrapRequest,
});
port.then(
  (opened) => send({ type: 'listening', port: opened.port }),
  (error: unknown) => send({ type: 'failed', message: error instanceof Error ? error.message : String(error), code: (error as NodeJS.ErrnoException).code }),
);
main.on('message', fromMain);

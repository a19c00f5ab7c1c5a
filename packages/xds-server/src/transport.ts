// The main thread's side of the data plane transport (docs/xds.md, The transport): the worker of
// src/transport-worker.ts holds the port and the gRPC streams; here each stream is an `AdsCall`
// that decodes the requests it brings and writes its responses straight into the next batch.
import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { status } from '@grpc/grpc-js';
import type { DiscoveryRequest } from './ads-stream.js';
import type { DeltaDiscoveryRequest } from './delta-stream.js';
import { decodeMessage, encodeMessage } from './envoy-protos.js';
import type { HealthCheckSpecifier, HealthStreamMessage } from './hds.js';
import { type BootstrapCall, EVENT, type FromTransport, type HttpAnswer, type OpenedStream, OutgoingBatch, type ToTransport, type TransportInit } from './transport-protocol.js';
import {
  decodeDeltaDiscoveryRequest,
  decodeDiscoveryRequest,
  type DeltaDiscoveryResponse,
  type DiscoveryResponse,
  writeDeltaDiscoveryResponse,
  writeDiscoveryResponse,
} from './wire.js';

/** One stream as the server sees it (ADS or health discovery): decoded requests in, responses out. */
export interface AdsCall<Request, Response> {
  /** The stream's `authorization` metadata, every value. */
  readonly authorization: readonly string[];
  /** The address the proxy's connection comes from (no port); empty when unknown. */
  readonly peerAddress: string;
  write(response: Response): void;
  /** Ends the stream with a gRPC status (a refusal, a shutdown); the call is closed at once. */
  fail(code: status, details: string): void;
  /** Ends the stream with status OK, once the proxy has ended its side. */
  end(): void;
  on(event: 'data', listener: (request: Request) => void): this;
  /** `end`: the proxy ended its side; `close`: the stream is over, whichever side ended it. */
  on(event: 'end' | 'close', listener: () => void): this;
}

interface Codec<Request, Response> {
  decode(bytes: Buffer): Request;
  write(response: Response, into: Buffer | undefined): number;
}

const HEALTH_CHECK_SPECIFIER = 'type.googleapis.com/envoy.service.health.v3.HealthCheckSpecifier';

/** A specifier is small and sent every refresh interval at most: encoded from its JSON, written where it fits. */
function writeHealthCheckSpecifier(specifier: HealthCheckSpecifier, into: Buffer | undefined): number {
  const bytes = encodeMessage('HealthCheckSpecifier', { '@type': HEALTH_CHECK_SPECIFIER, ...specifier });
  if (into && bytes.length <= into.length) into.set(bytes);
  return bytes.length;
}

const CODECS = {
  sotw: { decode: decodeDiscoveryRequest, write: writeDiscoveryResponse } satisfies Codec<DiscoveryRequest, DiscoveryResponse>,
  delta: { decode: decodeDeltaDiscoveryRequest, write: writeDeltaDiscoveryResponse } satisfies Codec<DeltaDiscoveryRequest, DeltaDiscoveryResponse>,
  hds: {
    decode: (bytes: Buffer): HealthStreamMessage => decodeMessage('envoy.service.health.v3.HealthCheckRequestOrEndpointHealthResponse', bytes),
    write: writeHealthCheckSpecifier,
  } satisfies Codec<HealthStreamMessage, HealthCheckSpecifier>,
};

export interface TransportOptions extends TransportInit {
  /** A new state-of-the-world stream. */
  onStream(call: AdsCall<DiscoveryRequest, DiscoveryResponse>): void;
  /** A new incremental stream. */
  onDeltaStream(call: AdsCall<DeltaDiscoveryRequest, DeltaDiscoveryResponse>): void;
  /** A new health discovery stream. */
  onHealthStream(call: AdsCall<HealthStreamMessage, HealthCheckSpecifier>): void;
  bootstrap(call: BootstrapCall): Promise<HttpAnswer>;
  /** The worker stopped on its own: the port is gone. */
  onFailure(error: Error): void;
}

/** How long `stop` lets the worker end its connections before it is terminated. */
const STOP_GRACE_MS = 2000;

class TransportCall<Request, Response> extends EventEmitter implements AdsCall<Request, Response> {
  private closed = false;

  constructor(
    private readonly transport: DataplaneTransport,
    private readonly id: number,
    readonly authorization: readonly string[],
    readonly peerAddress: string,
    private readonly codec: Codec<Request, Response>,
  ) {
    super();
  }

  write(response: Response): void {
    if (!this.closed) this.transport.toWorker.addMessage(this.id, (into) => this.codec.write(response, into));
  }

  fail(code: status, details: string): void {
    if (this.closed) return;
    this.transport.toWorker.addNoted(EVENT.fail, this.id, details, code);
    this.over();
  }

  end(): void {
    if (!this.closed) this.transport.toWorker.addEvent(EVENT.end, this.id);
  }

  receive(bytes: Buffer): void {
    if (this.closed) return;
    let request: Request;
    try {
      request = this.codec.decode(bytes);
    } catch (error) {
      this.fail(status.INTERNAL, `Error deserializing request: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.emit('data', request);
  }

  over(): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.forget(this.id);
    this.emit('close');
  }
}

/** The data plane port, served by a worker thread; streams and bootstrap requests come out of it here. */
export class DataplaneTransport {
  /** What goes to the worker next: responses, ends and refusals, in the order they were made. */
  readonly toWorker = new OutgoingBatch<string>((bytes, events, notes) => this.post({ type: 'streams', bytes, events, notes }, bytes ? [bytes] : []));
  private readonly calls = new Map<number, TransportCall<unknown, unknown>>();
  private stopping = false;
  private portClosed: Promise<void> | undefined;
  private onPortClosed: (() => void) | undefined;
  private onStopped: (() => void) | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly options: TransportOptions,
    /** The port it listens on (the one asked for, or the one given for port 0). */
    readonly port: number,
  ) {
    worker.on('message', (message: FromTransport) => this.fromWorker(message));
    worker.on('error', (error) => {
      if (!this.stopping) options.onFailure(error);
    });
    worker.on('exit', (code) => {
      if (!this.stopping) options.onFailure(new Error(`the data plane transport stopped with exit code ${code}`));
    });
  }

  /** Starts the worker; resolves once it listens. */
  static start(options: TransportOptions): Promise<DataplaneTransport> {
    const init: TransportInit = { port: options.port, address: options.address, tls: options.tls, maxReceiveMessageLength: options.maxReceiveMessageLength };
    const worker = new Worker(new URL('./transport-worker.js', import.meta.url), { workerData: init });
    return new Promise((resolve, reject) => {
      const failed = (error: Error) => {
        worker.off('message', started);
        void worker.terminate();
        reject(error);
      };
      const started = (message: FromTransport) => {
        if (message.type === 'failed') failed(Object.assign(new Error(message.message), { code: message.code }));
        if (message.type !== 'listening') return;
        worker.off('message', started);
        worker.off('error', failed);
        resolve(new DataplaneTransport(worker, options, message.port));
      };
      worker.on('message', started);
      worker.once('error', failed);
    });
  }

  /** Stops accepting connections; resolves once the port is closed (its connections ended). */
  close(): Promise<void> {
    this.portClosed ??= new Promise<void>((resolve) => {
      this.onPortClosed = resolve;
      this.post({ type: 'closePort' });
    });
    return this.portClosed;
  }

  /** Ends the connections left, then the worker. */
  async stop(): Promise<void> {
    this.stopping = true;
    const stopped = new Promise<void>((resolve) => (this.onStopped = resolve));
    this.post({ type: 'shutdown' });
    const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
    await Promise.race([Promise.all([stopped, this.portClosed]), grace]);
    await this.worker.terminate();
  }

  forget(id: number): void {
    this.calls.delete(id);
  }

  /** Posts a message after the stream traffic gathered before it. */
  private post(message: ToTransport, transfer: ArrayBuffer[] = []): void {
    if (message.type !== 'streams') this.toWorker.flush();
    this.worker.postMessage(message, transfer);
  }

  private fromWorker(message: FromTransport): void {
    switch (message.type) {
      case 'streams':
        return this.takeStreams(message.bytes, message.events, message.notes);
      case 'bootstrap':
        void this.options.bootstrap(message.call).then((answer) => this.post({ type: 'bootstrap', id: message.id, answer }));
        return;
      case 'portClosed':
        this.onPortClosed?.();
        return;
      case 'stopped':
        this.onStopped?.();
        return;
    }
  }

  private takeStreams(buffer: ArrayBuffer | undefined, events: number[], notes: OpenedStream[]): void {
    const bytes = buffer ? Buffer.from(buffer) : undefined;
    for (let at = 0; at < events.length; at += 4) {
      const kind = events[at];
      const id = events[at + 1]!;
      if (kind === EVENT.open) {
        const { variant, authorization, peerAddress } = notes[events[at + 2]!]!;
        if (variant === 'sotw') {
          const call = new TransportCall(this, id, authorization, peerAddress, CODECS.sotw);
          this.calls.set(id, call);
          this.options.onStream(call);
        } else if (variant === 'delta') {
          const call = new TransportCall(this, id, authorization, peerAddress, CODECS.delta);
          this.calls.set(id, call);
          this.options.onDeltaStream(call);
        } else {
          const call = new TransportCall(this, id, authorization, peerAddress, CODECS.hds);
          this.calls.set(id, call);
          this.options.onHealthStream(call);
        }
        continue;
      }
      const call = this.calls.get(id);
      if (!call) continue;
      if (kind === EVENT.data && bytes) call.receive(bytes.subarray(events[at + 2], events[at + 2]! + events[at + 3]!));
      else if (kind === EVENT.end) call.emit('end');
      else if (kind === EVENT.closed) call.over();
    }
  }
}

// TCP access logs (README.md, Access logs to TCP): Envoy writes the lines of a `tcp` logging
// backend to a named pipe, each with the backend's address: `address;line` for a TrafficLog,
// `{"address": ..., "message": ...}` for a MeshAccessLog. The runner creates the pipe before Envoy
// starts, reads it all the time, and sends each line to its address over one TCP connection per
// address, connecting again after a failure. While an address cannot be reached, its lines wait
// in a bounded buffer; when it is full the oldest are dropped, so that Envoy never waits.
import { execFile } from 'node:child_process';
import { constants, openSync, rmSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import type { Logger } from './log.js';

export interface AccessLogStreamerOptions {
  pipePath: string;
  log: Logger;
  /** Bytes of lines kept per address while it cannot be reached. */
  maxBufferedBytes?: number;
  /** The first wait before connecting again; it doubles up to `MAX_RECONNECT_DELAY_MS`. */
  reconnectDelayMs?: number;
}

const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
const DEFAULT_RECONNECT_DELAY_MS = 500;
const MAX_RECONNECT_DELAY_MS = 5000;
const CONNECT_TIMEOUT_MS = 5000;
/** A line longer than this without its end is cut, so that a writer without newlines cannot fill memory. */
const MAX_LINE_BYTES = 1024 * 1024;

/** The address and the line to send; undefined for a record that is neither form. */
export function parseRecord(record: string): { address: string; line: string } | undefined {
  if (record.startsWith('{')) {
    try {
      const { address, message } = JSON.parse(record) as { address?: unknown; message?: unknown };
      if (typeof address === 'string' && message !== undefined) {
        const line = typeof message === 'string' ? message : JSON.stringify(message);
        return { address, line: line.endsWith('\n') ? line : `${line}\n` };
      }
    } catch {
      // Not JSON: a TrafficLog line that starts with a brace.
    }
  }
  const separator = record.indexOf(';');
  if (separator <= 0) return undefined;
  return { address: record.slice(0, separator), line: `${record.slice(separator + 1)}\n` };
}

function splitHostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address);
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: match[1] ?? match[2] ?? '', port };
}

/** The lines of one address and its connection. */
class Destination {
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private socket: Socket | undefined;
  private connected = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs: number;
  /** Lines dropped since the address was last reachable. */
  private dropped = 0;
  private failing = false;
  private closed = false;

  constructor(
    private readonly address: string,
    private readonly target: { host: string; port: number },
    private readonly options: Required<Pick<AccessLogStreamerOptions, 'maxBufferedBytes' | 'reconnectDelayMs' | 'log'>>,
  ) {
    this.retryDelayMs = options.reconnectDelayMs;
  }

  push(line: string): void {
    const size = Buffer.byteLength(line);
    this.queue.push(line);
    this.queuedBytes += size;
    while (this.queuedBytes > this.options.maxBufferedBytes && this.queue.length > 0) {
      this.queuedBytes -= Buffer.byteLength(this.queue.shift()!);
      if (this.dropped++ === 0) {
        this.options.log('error', `the access log buffer for ${this.address} is full: dropping its oldest lines until it can be reached`, { address: this.address, maxBufferedBytes: this.options.maxBufferedBytes });
      }
    }
    this.flush();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.socket?.destroy();
  }

  private flush(): void {
    if (this.closed) return;
    if (!this.connected) {
      if (!this.socket && !this.retryTimer) this.connect();
      return;
    }
    if (this.queue.length === 0 || this.socket!.writableNeedDrain) return;
    const chunk = this.queue.join('');
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.socket!.write(chunk);
  }

  private connect(): void {
    const socket = connect({ host: this.target.host, port: this.target.port, timeout: CONNECT_TIMEOUT_MS });
    this.socket = socket;
    socket.once('connect', () => {
      socket.setTimeout(0);
      this.connected = true;
      this.retryDelayMs = this.options.reconnectDelayMs;
      if (this.failing || this.dropped > 0) {
        this.options.log('info', `sending access logs to ${this.address} again`, { address: this.address, droppedLines: this.dropped });
      }
      this.failing = false;
      this.dropped = 0;
      this.flush();
    });
    socket.on('drain', () => this.flush());
    socket.on('timeout', () => socket.destroy(new Error(`could not connect within ${CONNECT_TIMEOUT_MS / 1000}s`)));
    // The collector does not talk back; what it sends is dropped.
    socket.on('data', () => undefined);
    socket.on('error', (error) => {
      if (!this.failing) {
        this.options.log('error', `could not send access logs to ${this.address}: ${error.message}; keeping its newest lines and connecting again`, { address: this.address });
      }
      this.failing = true;
    });
    socket.once('close', () => {
      this.socket = undefined;
      this.connected = false;
      if (this.closed) return;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        if (this.queue.length > 0) this.flush();
      }, this.retryDelayMs);
      this.retryDelayMs = Math.min(this.retryDelayMs * 2, MAX_RECONNECT_DELAY_MS);
    });
  }
}

function makePipe(path: string): Promise<void> {
  rmSync(path, { force: true });
  return new Promise((resolve, reject) => {
    execFile('mkfifo', ['-m', '0666', path], (error, _stdout, stderr) => {
      if (error) reject(new Error(`could not create the access log pipe ${path}: ${stderr.trim() || error.message}`));
      else resolve();
    });
  });
}

/** Creates the pipe and reads it until closed; resolves once Envoy may open it. */
export async function startAccessLogStreamer(options: AccessLogStreamerOptions): Promise<{ close(): void }> {
  const settings = { maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES, reconnectDelayMs: options.reconnectDelayMs ?? DEFAULT_RECONNECT_DELAY_MS, log: options.log };
  await makePipe(options.pipePath);
  // Read and write: the pipe then never reaches its end when Envoy closes or reopens it, and opening does not wait for a writer.
  const pipe = new Socket({ fd: openSync(options.pipePath, constants.O_RDWR | constants.O_NONBLOCK), readable: true, writable: false });
  const destinations = new Map<string, Destination>();
  const invalidAddresses = new Set<string>();
  let partial = '';
  let badRecords = 0;
  const onRecord = (record: string) => {
    const parsed = parseRecord(record);
    if (!parsed) {
      if (badRecords++ === 0) options.log('error', 'dropping access log lines that name no address: expected "address;line" or {"address": ..., "message": ...}');
      return;
    }
    const target = splitHostPort(parsed.address);
    if (!target) {
      if (!invalidAddresses.has(parsed.address)) options.log('error', `dropping access log lines for ${JSON.stringify(parsed.address)}: not a host:port address`);
      invalidAddresses.add(parsed.address);
      return;
    }
    let destination = destinations.get(parsed.address);
    if (!destination) {
      destination = new Destination(parsed.address, target, settings);
      destinations.set(parsed.address, destination);
    }
    destination.push(parsed.line);
  };
  pipe.setEncoding('utf8');
  pipe.on('data', (chunk: string) => {
    const records = (partial + chunk).split('\n');
    partial = records.pop() ?? '';
    if (partial.length > MAX_LINE_BYTES) {
      records.push(partial);
      partial = '';
    }
    for (const record of records) if (record !== '') onRecord(record);
  });
  pipe.on('error', (error) => options.log('error', `could not read the access log pipe: ${error.message}`, { pipePath: options.pipePath }));
  options.log('info', 'reading access logs for TCP backends', { pipePath: options.pipePath });
  return {
    close: () => {
      pipe.destroy();
      for (const destination of destinations.values()) destination.close();
      rmSync(options.pipePath, { force: true });
    },
  };
}

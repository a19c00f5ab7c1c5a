import { appendFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRecord, startAccessLogStreamer } from './access-log-streamer.js';
import type { Level } from './log.js';

const cleanups: Array<() => unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP listener on a free port collecting the lines it receives; it can go away and come back on its port. */
async function lineListener() {
  const lines: string[] = [];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const start = async () => {
    const started = createServer((socket) => {
      sockets.add(socket);
      let partial = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop() ?? '';
        lines.push(...parts);
      });
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => started.listen(port, '127.0.0.1', resolve));
    port = (started.address() as { port: number }).port;
    server = started;
  };
  const stop = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  };
  await start();
  cleanups.push(stop);
  return { lines, start, stop, address: () => `127.0.0.1:${port}` };
}

async function streamer(options: { maxBufferedBytes?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-dp-al-'));
  const pipePath = join(dir, 'mesh-al-web-1-default.sock');
  const logged: Array<{ level: Level; message: string; details?: Record<string, unknown> }> = [];
  const running = await startAccessLogStreamer({ pipePath, log: (level, message, details) => logged.push({ level, message, details }), reconnectDelayMs: 50, ...options });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => running.close());
  // As Envoy writes: appending to the pipe.
  const write = (text: string) => appendFileSync(pipePath, text);
  return { pipePath, logged, write, close: () => running.close() };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('parseRecord', () => {
  it("reads a TrafficLog's `address;line` and a MeshAccessLog's JSON record, a line ending in one newline", () => {
    expect(parseRecord('collector:5000;GET / 200; took 1ms')).toEqual({ address: 'collector:5000', line: 'GET / 200; took 1ms\n' });
    expect(parseRecord('{"address":"10.0.0.1:5000","message":"GET / 200\\n"}')).toEqual({ address: '10.0.0.1:5000', line: 'GET / 200\n' });
    expect(parseRecord('{"address":"[::1]:5000","message":{"path":"/","code":200}}')).toEqual({ address: '[::1]:5000', line: '{"path":"/","code":200}\n' });
    expect(parseRecord('no address here')).toBeUndefined();
  });
});

describe('the access log streamer', () => {
  it('creates a named pipe and sends each line to the address it names, and removes the pipe when closed', async () => {
    const collector = await lineListener();
    const other = await lineListener();
    const { pipePath, write, close } = await streamer();
    expect(statSync(pipePath).isFIFO()).toBe(true);
    write(`${collector.address()};GET /a 200\n${other.address()};GET /b 200\n`);
    write(`{"address":"${collector.address()}","message":{"path":"/c"}}\n`);
    await until(() => collector.lines.length === 2 && other.lines.length === 1, 'the lines');
    expect(collector.lines).toEqual(['GET /a 200', '{"path":"/c"}']);
    expect(other.lines).toEqual(['GET /b 200']);
    close();
    expect(existsSync(pipePath)).toBe(false);
  });

  it('keeps the lines while the collector is away and sends them when it is back, saying so once', async () => {
    const collector = await lineListener();
    const { write, logged } = await streamer();
    write(`${collector.address()};first\n`);
    await until(() => collector.lines.length === 1, 'the first line');
    await collector.stop();
    // A line written before the runner sees the connection gone goes with it.
    write(`${collector.address()};maybe lost\n`);
    await until(() => logged.some((entry) => entry.message.startsWith(`could not send access logs to ${collector.address()}`)), 'the failure to be logged');
    write(`${collector.address()};while away 1\n`);
    write(`${collector.address()};while away 2\n`);
    await collector.start();
    write(`${collector.address()};back\n`);
    await until(() => collector.lines.includes('back'), 'the line after the collector came back');
    expect(collector.lines.filter((line) => line !== 'maybe lost')).toEqual(['first', 'while away 1', 'while away 2', 'back']);
    expect(logged.filter((entry) => entry.level === 'error')).toHaveLength(1);
    expect(logged.some((entry) => entry.message === `sending access logs to ${collector.address()} again`)).toBe(true);
  });

  it('drops the oldest lines when the buffer of an address is full, counting them, and logs it once', async () => {
    const collector = await lineListener();
    await collector.stop();
    const { write, logged } = await streamer({ maxBufferedBytes: 20 });
    // One write, read at once: every line is in the buffer when the buffer is found full.
    write(Array.from({ length: 7 }, (_, i) => `${collector.address()};line ${i + 1}\n`).join(''));
    await until(() => logged.some((entry) => entry.message.includes('is full')), 'the buffer to fill');
    await collector.start();
    await until(() => collector.lines.includes('line 7'), 'the newest line');
    // 20 bytes hold two lines of 7: the newest ones.
    expect(collector.lines).toEqual(['line 6', 'line 7']);
    expect(logged.filter((entry) => entry.message.includes('is full'))).toHaveLength(1);
    const resumed = logged.find((entry) => entry.message.startsWith('sending access logs'));
    expect(resumed).toMatchObject({ level: 'info', details: { droppedLines: 5 } });
  });

  it('drops lines without a usable address, saying so once per address', async () => {
    const { write, logged } = await streamer();
    write('no-port;x\nno-port;y\njust text\n');
    await until(() => logged.filter((entry) => entry.level === 'error').length === 2, 'the complaints');
    expect(logged.filter((entry) => entry.level === 'error').map((entry) => entry.message)).toEqual([
      'dropping access log lines for "no-port": not a host:port address',
      'dropping access log lines that name no address: expected "address;line" or {"address": ..., "message": ...}',
    ]);
  });
});

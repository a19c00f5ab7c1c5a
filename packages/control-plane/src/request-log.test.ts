import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type LoggerOptions } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { requestLog } from './request-log.js';

const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A server whose every request goes through the request log of a pino logger writing to `lines`. */
async function logged(options: LoggerOptions, answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const lines: string[] = [];
  const logger = pino({ name: 'mesh-zone', ...options }, { write: (line: string) => lines.push(line) });
  const log = requestLog(logger);
  const server = createServer((req, res) => {
    res.once('close', log(req, res));
    answer(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** The lines written once the logger has seen `count` of them. */
  const written = async (count: number) => {
    while (lines.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
    return lines;
  };
  return { url, logger, written };
}

const ok = (_req: IncomingMessage, res: ServerResponse) => res.end('{}');

describe('the request log', () => {
  it("writes the line pino writes for the entry, with the caller's request id echoed", async () => {
    const { url, logger, written } = await logged({}, ok);
    const res = await fetch(`${url}/meshes/default?q="a\\b"`, { headers: { 'x-request-id': 'trace-1' } });
    expect(res.headers.get('x-request-id')).toBe('trace-1');
    const [line] = await written(1);
    expect(line!.endsWith('}\n')).toBe(true);
    const entry = JSON.parse(line!);
    expect(entry).toMatchObject({ level: 30, name: 'mesh-zone', pid: process.pid, req: { id: 'trace-1', method: 'GET', url: '/meshes/default?q=%22a\\b%22' }, res: { statusCode: 200 }, msg: 'request completed' });
    expect(entry.responseTime).toBeGreaterThanOrEqual(0);
    // The same keys in the same order as pino's own line for the entry.
    const own: string[] = [];
    pino({ name: 'mesh-zone' }, { write: (text: string) => own.push(text) }).info({ req: entry.req, res: entry.res, responseTime: entry.responseTime }, 'request completed');
    expect(Object.keys(entry)).toEqual(Object.keys(JSON.parse(own[0]!)));
    expect(logger.level).toBe('info');
  });

  it('gives a request without a usable id a new UUID', async () => {
    const { url, written } = await logged({}, ok);
    const res = await fetch(url, { headers: { 'x-request-id': 'no spaces "or quotes"' } });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(JSON.parse((await written(1))[0]!).req.id).toBe(id);
  });

  it('logs a 5xx answer as an error and a request whose connection went first as aborted', async () => {
    const { url, written } = await logged({}, (req, res) => {
      if (req.url === '/fail') {
        res.statusCode = 503;
        res.end();
      } else res.socket?.destroy();
    });
    expect((await fetch(`${url}/fail`)).status).toBe(503);
    await expect(fetch(`${url}/gone`)).rejects.toThrow();
    const entries = (await written(2)).map((line) => JSON.parse(line));
    expect(entries).toEqual([
      expect.objectContaining({ level: 50, msg: 'request errored', res: { statusCode: 503 } }),
      expect.objectContaining({ level: 30, msg: 'request aborted', req: expect.objectContaining({ url: '/gone' }) }),
    ]);
  });

  it('writes nothing below the logger level', async () => {
    const { url, logger, written } = await logged({ level: 'warn' }, ok);
    await fetch(url);
    logger.warn('marker');
    expect((await written(1)).map((line) => JSON.parse(line).msg)).toEqual(['marker']);
  });

  it("keeps a logger's own formatting: mixins, message keys and serializers", async () => {
    const { url, written } = await logged({ mixin: () => ({ zone: 'east' }), messageKey: 'message', serializers: { req: (req: { url: string }) => ({ path: req.url }) } }, ok);
    await fetch(`${url}/meshes`);
    expect(JSON.parse((await written(1))[0]!)).toMatchObject({ zone: 'east', message: 'request completed', req: { path: '/meshes' }, res: { statusCode: 200 } });
  });
});

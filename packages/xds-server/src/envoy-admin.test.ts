import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminUnavailable, adminHostOf, fetchAdmin, isThisHost } from './envoy-admin.js';

describe('fetchAdmin', () => {
  const server = createServer((req, res) => {
    req.resume();
    const ok = req.url?.startsWith('/stats');
    res.writeHead(ok ? 200 : 403, { 'content-type': 'text/plain' });
    res.end(ok ? 'server.live: 1' : 'a secret of another service');
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  it("passes on Envoy's answer, and nothing of a failed one", async () => {
    expect(await fetchAdmin('127.0.0.1', port, '/stats?filter=live')).toEqual({ body: 'server.live: 1', contentType: 'text/plain' });
    const failure = await fetchAdmin('127.0.0.1', port, '/clusters').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AdminUnavailable);
    expect((failure as Error).message).toBe('answered with status 403');
  });
});

describe('where an admin API is reached', () => {
  it('reaches loopback and unspecified admin addresses on loopback, and no other', () => {
    expect(['', '0.0.0.0', '127.0.0.1', '::', '::1', '10.0.0.1', '192.0.2.1', 'localhost.example'].map(adminHostOf)).toEqual([
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
      '::1',
      '::1',
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("tells a stream from this host (loopback or one of its interfaces' addresses) from one that is not", () => {
    const own = Object.values(networkInterfaces()).flatMap((addresses) => addresses ?? []).map((entry) => entry.address);
    for (const address of ['127.0.0.1', '127.0.0.53', '::1', '::ffff:127.0.0.1', ...own]) expect(isThisHost(address), address).toBe(true);
    for (const address of ['192.0.2.1', '::ffff:198.51.100.7', '2001:db8::1', '', 'unknown'].filter((address) => !own.includes(address))) expect(isThisHost(address), address).toBe(false);
  });
});

// Limits of the API server (docs/api.md, Limits): requests in flight, the body limit, and what
// the HTTP parser refuses, each answered with the standard error body.
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { guardConnections, limitConcurrentRequests } from './limits.js';
import { dataplane, invalid, startApi, stdError, trafficRoute, type TestApi } from './testing.js';

const servers: Server[] = [];
const apis: TestApi[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const api of apis.splice(0)) await api.close();
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Sends raw bytes on a new connection; everything received until the server closes it. */
function exchange(url: string, bytes: string, options: { keepSending?: string } = {}): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    const timer = options.keepSending ? setInterval(() => socket.writable && socket.write(options.keepSending!), 50) : undefined;
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve(received);
    });
    setTimeout(() => reject(new Error(`no close; received: ${received}`)), 10_000);
  });
}

const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('limitConcurrentRequests', () => {
  it('answers 503 with the standard body beyond the limit, and serves again once requests finish', async () => {
    const held: ServerResponse[] = [];
    const limit = limitConcurrentRequests(2);
    const url = await listen(
      createServer((req, res) => {
        if (!limit(res)) return;
        if (req.url === '/hold') held.push(res);
        else res.end('ok');
      }),
    );
    const holding = [fetch(`${url}/hold`), fetch(`${url}/hold`)];
    while (held.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const refused = await fetch(`${url}/other`);
    expect([refused.status, refused.headers.get('retry-after'), refused.headers.get('content-type')]).toEqual([503, '1', 'application/json']);
    expect(await refused.json()).toEqual(stdError(503, 'Service Unavailable', 'Too many requests in flight (at most 2); try again later'));
    for (const res of held) res.end('done');
    await Promise.all(holding);
    expect(await (await fetch(`${url}/other`)).text()).toBe('ok');
  });

  it('lets every request through with 0', async () => {
    const limit = limitConcurrentRequests(0);
    const url = await listen(createServer((_req, res) => {
        if (limit(res)) setTimeout(() => res.end('ok'), 20);
      }));
    const replies = await Promise.all(Array.from({ length: 20 }, () => fetch(url)));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
  });
});

describe('guardConnections', () => {
  async function guarded(options: { headersTimeout?: number; requestTimeout?: number } = {}): Promise<string> {
    const server = createServer({ ...options, connectionsCheckingInterval: 50 }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    guardConnections(server);
    return listen(server);
  }

  it('answers headers too large with 431 and the standard body', async () => {
    const raw = await exchange(await guarded(), `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    expect(raw).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(bodyOf(raw)).toEqual(stdError(431, 'Request Header Fields Too Large', 'The request line and headers are larger than the server accepts'));
  });

  it('answers a malformed request with 400 and the standard body', async () => {
    const raw = await exchange(await guarded(), 'NOT HTTP AT ALL\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(bodyOf(raw)).toEqual(stdError(400, 'Bad Request', 'Malformed HTTP request'));
  });

  it('answers a client too slow with its headers with 408 and the standard body, then closes', async () => {
    const raw = await exchange(await guarded({ headersTimeout: 200, requestTimeout: 400 }), 'GET / HTTP/1.1\r\nHost: x\r\n', { keepSending: 'X-A: b\r\n' });
    expect(raw).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(bodyOf(raw)).toEqual(stdError(408, 'Request Timeout', 'The request was not received in time'));
  });

  it('lets a client that asked to close read an answer sent while its body is still coming', async () => {
    const api = await startApi({ limits: { maxRequestBodySize: 1024 } });
    apis.push(api);
    const body = Buffer.alloc(4 * 1024 * 1024, 0x20);
    for (let i = 0; i < 5; i++) {
      const status = await new Promise<number | string>((resolve) => {
        const { port } = new URL(api.url);
        // No agent: Node's client asks the server to close the connection after this request.
        const req = request({ host: '127.0.0.1', port: Number(port), method: 'PUT', path: '/meshes/default/traffic-routes/big', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        req.end(body);
      });
      expect(status).toBe(413);
    }
  });
});

describe('the request body limit', () => {
  it('is the configured one, for resources and tokens alike', async () => {
    const api = await startApi({ limits: { maxRequestBodySize: 300 } });
    apis.push(api);
    const small = await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    expect(small.status).toBe(201);
    const big = await api.put('/meshes/default/traffic-routes/tr-1', { ...trafficRoute('tr-1'), labels: { padding: 'x'.repeat(60) }, conf: { destination: { 'mesh.io/service': 'x'.repeat(300) } } });
    expect([big.status, big.body]).toEqual([413, stdError(413, 'Payload Too Large', 'Request body is larger than 300 bytes')]);
    const token = await api.request('POST', '/tokens/user', { body: { name: 'x'.repeat(400), validFor: '1h' } });
    expect([token.status, token.body]).toEqual([413, stdError(413, 'Payload Too Large', 'Request body is larger than 300 bytes')]);
  });
});

describe('the inbounds and outbounds of a Dataplane', () => {
  const sized = (name: string, inbounds: number, outbounds: number) => {
    const body = dataplane(name, { inbounds: Array.from({ length: inbounds }, (_, i) => ({ 'mesh.io/service': `in-${i}` })) });
    return { ...body, networking: { ...body.networking, outbound: Array.from({ length: outbounds }, (_, i) => ({ port: 30_000 + i, tags: { 'mesh.io/service': `out-${i}` } })) } };
  };

  it('are at most 1000 each: one more is a 400 naming the limit, and nothing is stored', async () => {
    const api = await startApi();
    apis.push(api);
    expect((await api.put('/meshes/default/dataplanes/at-limit', sized('at-limit', 1000, 1000))).status).toBe(201);
    const before = await api.snapshot();
    expect(await api.put('/meshes/default/dataplanes/over', sized('over', 1001, 1))).toMatchObject({
      status: 400,
      body: invalid('Could not process a resource', ['networking.inbound', 'must have at most 1000 inbounds (the limit per Dataplane), not 1001']),
    });
    expect(await api.put('/meshes/default/dataplanes/at-limit', sized('at-limit', 1, 1001))).toMatchObject({
      status: 400,
      body: invalid('Could not process a resource', ['networking.outbound', 'must have at most 1000 outbounds (the limit per Dataplane), not 1001']),
    });
    expect(await api.snapshot()).toEqual(before);
  }, 60_000);
});

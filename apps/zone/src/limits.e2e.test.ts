// End to end: the limits of the API server (docs/api.md, Limits) on the built zone binary: the
// request body limit (413), request headers too large (431), clients that trickle their headers or
// body (cut off with 408 while the others are served), the number of requests served at once (503
// beyond it), each with the standard error body; and resident memory under a flood of large list
// pages and of inspection requests.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlaneProcess, type Ports } from './testing/process.js';
import { sendRaw, standardErrorProblem, type RawReply } from './testing/raw-http.js';

type Started = ControlPlaneProcess & { ports: Ports };

const started: Started[] = [];
const json = { 'content-type': 'application/json' };
const ALL = [{ match: { 'mesh.io/service': '*' } }];
const route = (name: string, padding = '') => ({
  type: 'TrafficRoute',
  mesh: 'default',
  name,
  sources: ALL,
  destinations: ALL,
  conf: { destination: { 'mesh.io/service': 'web' } },
  ...(padding ? { labels: { padding } } : {}),
});

async function start(env: Record<string, string> = {}): Promise<Started> {
  const cp = await startControlPlane({ env });
  started.push(cp);
  return cp;
}

afterAll(async () => {
  await Promise.all(started.map((cp) => cp.stop('SIGKILL')));
});

function expectStandardError(reply: RawReply, status: number): void {
  expect(reply.status, reply.text).toBe(status);
  expect(standardErrorProblem(reply), reply.text).toBeUndefined();
}

/** A raw connection: what it received, and when it closed. */
function openConnection(cp: Started): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(cp.ports.http, '127.0.0.1');
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, received: () => received, closed }));
    socket.once('error', reject);
  });
}

/** Writes `text` a few bytes at a time, forever or until the connection closes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || socket.writableEnded) {
      clearInterval(timer);
      return;
    }
    socket.write(text.slice(at, at + 2));
    at = (at + 2) % text.length;
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

/** The status line and body of a raw answer. */
function answerOf(raw: string): { status: number; body: unknown } {
  const [head, body = ''] = raw.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]), body: body ? JSON.parse(body) : undefined };
}

describe('request body limit', () => {
  it('refuses a body over apiServer.maxRequestBodySize with 413, sent whole, streamed or to a client that closes', async () => {
    const cp = await start({ MESH_API_SERVER_MAX_REQUEST_BODY_SIZE: '2048' });
    const over = JSON.stringify(route('big')) + ' '.repeat(3000);
    expectStandardError(await sendRaw(cp.url, { method: 'PUT', path: '/meshes/default/traffic-routes/big', headers: json, body: over }), 413);
    expect(JSON.parse((await sendRaw(cp.url, { method: 'PUT', path: '/meshes/default/traffic-routes/big', headers: { ...json, connection: 'close' }, body: over })).text).status).toBe(413);
    // Streamed, with no length announced.
    const streamed = await fetch(`${cp.url}/meshes/default/traffic-routes/big`, {
      method: 'PUT',
      headers: json,
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(1000)));
          controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toMatchObject({ type: '/std-errors', status: 413, title: 'Payload Too Large', detail: 'Request body is larger than 2048 bytes' });
    // Under the limit, the same route is stored.
    expect((await sendRaw(cp.url, { method: 'PUT', path: '/meshes/default/traffic-routes/big', headers: json, body: JSON.stringify(route('big')) })).status).toBe(201);
    expect((await fetch(`${cp.url}/config`).then((r) => r.json()) as any).apiServer.maxRequestBodySize).toBe(2048);
  });
});

describe('slow and greedy clients', () => {
  let cp: Started;

  it('answers request headers too large with 431 and the standard body', async () => {
    cp = await start({ MESH_API_SERVER_READ_HEADER_TIMEOUT: '1s', MESH_API_SERVER_READ_TIMEOUT: '2s' });
    expectStandardError(await sendRaw(cp.url, { method: 'GET', path: '/meshes', headers: { 'x-padding': 'x'.repeat(20_000) } }), 431);
    expectStandardError(await sendRaw(cp.url, { method: 'PUT', path: `/meshes/${'a'.repeat(20_000)}`, headers: json, body: '{}' }), 431);
    expect((await sendRaw(cp.url, { method: 'GET', path: '/meshes' })).status).toBe(200);
  });

  it('cuts off clients that trickle their headers or their body, and serves the others meanwhile', async () => {
    const headers = await Promise.all(Array.from({ length: 20 }, () => openConnection(cp)));
    for (const { socket } of headers) {
      socket.write('GET /meshes HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      trickle(socket, 'ab', 100);
    }
    const bodies = await Promise.all(Array.from({ length: 20 }, () => openConnection(cp)));
    for (const { socket } of bodies) {
      socket.write('PUT /meshes/default/traffic-routes/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{');
      trickle(socket, '  ', 100);
    }
    // While they trickle, everyone else is served.
    for (let i = 0; i < 5; i++) expect((await sendRaw(cp.url, { method: 'GET', path: '/meshes', timeoutMs: 5000 })).status).toBe(200);
    await Promise.all([...headers, ...bodies].map((c) => c.closed));
    for (const connection of [...headers, ...bodies]) {
      const answer = answerOf(connection.received());
      expect(answer.status, connection.received()).toBe(408);
      expect(answer.body).toMatchObject({ type: '/std-errors', status: 408, title: 'Request Timeout' });
    }
    expect((await sendRaw(cp.url, { method: 'GET', path: '/meshes' })).status).toBe(200);
  }, 60_000);

  it('answers 503 with the standard body beyond apiServer.maxConcurrentRequests, and serves again once requests finish', async () => {
    const limited = await start({ MESH_API_SERVER_MAX_CONCURRENT_REQUESTS: '4' });
    // Four requests in flight: their handlers wait for bodies that do not come yet.
    const holding = await Promise.all(Array.from({ length: 4 }, () => openConnection(limited)));
    const body = JSON.stringify(route('held'));
    for (const { socket } of holding) socket.write(`PUT /meshes/default/traffic-routes/held HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    // Once the four handlers run, the next request is one too many.
    let refused = await sendRaw(limited.url, { method: 'GET', path: '/meshes' });
    while (refused.status === 200) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      refused = await sendRaw(limited.url, { method: 'GET', path: '/meshes' });
    }
    expectStandardError(refused, 503);
    expect(refused.headers['retry-after']).toBe('1');
    for (const { socket } of holding) socket.end(body.slice(10));
    await Promise.all(holding.map((c) => c.closed));
    // Each is answered; written together, the ones that lose the race to create the route get 409.
    const statuses = holding.map((c) => answerOf(c.received()).status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    for (const status of statuses) expect([200, 201, 409]).toContain(status);
    expect((await sendRaw(limited.url, { method: 'GET', path: '/meshes' })).status).toBe(200);
  });
});

describe('memory under a flood', () => {
  /** Resident memory of a process, from /proc. */
  const residentBytes = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

  it('stays bounded under a flood of size=1000 list requests and of inspection requests', async () => {
    const cp = await start();
    const dataplane = (i: number) => ({
      type: 'Dataplane',
      mesh: 'default',
      name: `dp-${i}`,
      networking: { address: `10.1.${Math.floor(i / 250)}.${i % 250}`, inbound: [{ port: 8080, tags: { 'mesh.io/service': `svc-${i % 50}`, version: `v${i % 3}` } }], outbound: [{ port: 10001, service: `svc-${(i + 1) % 50}` }] },
    });
    for (let i = 0; i < 2000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const res = await fetch(`${cp.url}/meshes/default/dataplanes/dp-${i + j}`, { method: 'PUT', headers: json, body: JSON.stringify(dataplane(i + j)) });
          expect(res.status).toBe(201);
        }),
      );
    }
    const loaded = residentBytes(cp.pid);
    let peak = loaded;
    const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(cp.pid))), 50);
    const paths = [
      '/meshes/default/dataplanes?size=1000',
      '/meshes/default/dataplanes?size=1000&offset=1000',
      '/dataplanes?size=1000&tag=version:v1',
      '/meshes/default/dataplanes+insights?size=1000',
      ...Array.from({ length: 20 }, (_, i) => `/meshes/default/dataplanes/dp-${i * 97}/policies`),
      ...Array.from({ length: 20 }, (_, i) => `/meshes/default/dataplanes/dp-${i * 89}/xds`),
    ];
    let answered = 0;
    const deadline = Date.now() + 8000;
    try {
      await Promise.all(
        Array.from({ length: 64 }, async (_, client) => {
          for (let i = client; Date.now() < deadline; i++) {
            const res = await fetch(`${cp.url}${paths[i % paths.length]}`);
            expect(res.status).toBe(200);
            await res.arrayBuffer();
            answered++;
          }
        }),
      );
    } finally {
      clearInterval(sampler);
    }
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    console.info(`memory under a flood: ${mb(loaded)} MB resident with 2,000 dataplanes, ${mb(peak)} MB at most while ${answered} requests (64 at a time) were answered`);
    // What the flood adds is bounded (pages and renders in flight), not proportional to the requests answered.
    expect(peak - loaded).toBeLessThan(256 * 1024 * 1024);
  }, 120_000);
});

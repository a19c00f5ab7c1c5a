#!/usr/bin/env node
// What one large Dataplane costs the built zone binary (SQLite on disk): for Dataplanes of N
// inbounds and N outbounds, the time of each request that handles it (create, update, read, the
// rendered configuration `/xds`, the matched policies) and, while it runs, the longest wait of a
// small request sent over and over beside it: how long the event loop was held. Then the same for
// a Dataplane one over the limit, and for one that fills the request body limit, which are
// refused. Prints figures; asserts nothing. See bench/README.md.
//
// Knobs (env): BENCH_SIZES, the values of N (10,100,1000); BENCH_ROUNDS, rounds per size (3,
// the figures are the worst round).
import { Agent, request } from 'node:http';
import { sleep, startZone } from './common.mjs';

const SIZES = (process.env.BENCH_SIZES ?? '10,100,1000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The documented limit of inbounds and of outbounds per Dataplane (docs/api.md, Limits). */
const LIMIT = 1000;
/** The request body limit's default, 8 MiB. */
const BODY_LIMIT = 8 * 1024 * 1024;

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function send(base, method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {};
    const req = request(`${base}${path}`, { method, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const dataplane = (name, inbounds, outbounds, version = 'v1') => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: {
    address: '10.0.0.1',
    inbound: Array.from({ length: inbounds }, (_, i) => ({ port: 10_000 + i, servicePort: 30_000 + i, tags: { 'mesh.io/service': `${name}-in-${i}`, 'mesh.io/protocol': 'http', version } })),
    outbound: Array.from({ length: outbounds }, (_, i) => ({ port: 50_000 + (i % 15_000), address: `127.0.${Math.floor(i / 15_000)}.1`, tags: { 'mesh.io/service': `${name}-out-${i}` } })),
  },
});

/**
 * Sends a small GET over and over, one after the other, while `work` runs: the longest wait is
 * about the longest time the event loop was held. Returns the work's own time too.
 */
async function withProbe(base, work) {
  let running = true;
  let longest = 0;
  const probing = (async () => {
    while (running) {
      const started = performance.now();
      await send(base, 'GET', '/meshes/default/dataplanes/probe');
      longest = Math.max(longest, performance.now() - started);
    }
  })();
  await sleep(20);
  const started = performance.now();
  const result = await work();
  const took = performance.now() - started;
  // What the write sets off afterwards (insights, proxy configuration) runs within this.
  await sleep(300);
  running = false;
  await probing;
  return { took, longest, status: result.status };
}

const { url: base } = await startZone({ MESH_LOG_LEVEL: 'warn' });
await send(base, 'PUT', '/meshes/default/dataplanes/probe', dataplane('probe', 1, 0));
const quiet = await withProbe(base, () => sleep(300).then(() => ({ status: 0 })));
console.log(`one large Dataplane (N inbounds and N outbounds), worst of ${ROUNDS} rounds; the longest wait of a small GET beside it (quiet: ${quiet.longest.toFixed(1)} ms)`);
console.log(`  ${'N'.padStart(6)}  ${'request'.padEnd(28)} ${'status'.padStart(6)} ${'took'.padStart(10)} ${'longest wait'.padStart(13)}`);
const row = (n, what, figures) =>
  console.log(`  ${String(n).padStart(6)}  ${what.padEnd(28)} ${String(figures.status).padStart(6)} ${figures.took.toFixed(1).padStart(7)} ms ${figures.longest.toFixed(1).padStart(10)} ms`);
const worst = (rounds) => rounds.reduce((a, b) => ({ status: b.status, took: Math.max(a.took, b.took), longest: Math.max(a.longest, b.longest) }));

for (const n of SIZES) {
  const steps = { 'PUT create': [], 'PUT update': [], 'GET': [], 'GET .../xds': [], 'GET .../policies': [], DELETE: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const name = `big-${n}-${round}`;
    const path = `/meshes/default/dataplanes/${name}`;
    steps['PUT create'].push(await withProbe(base, () => send(base, 'PUT', path, dataplane(name, n, n))));
    steps['PUT update'].push(await withProbe(base, () => send(base, 'PUT', path, dataplane(name, n, n, 'v2'))));
    steps.GET.push(await withProbe(base, () => send(base, 'GET', path)));
    steps['GET .../xds'].push(await withProbe(base, () => send(base, 'GET', `${path}/xds`)));
    steps['GET .../policies'].push(await withProbe(base, () => send(base, 'GET', `${path}/policies`)));
    steps.DELETE.push(await withProbe(base, () => send(base, 'DELETE', path)));
  }
  for (const [what, rounds] of Object.entries(steps)) row(n, what, worst(rounds));
}

// Refused: one inbound over the limit, and as many inbounds as the body limit lets through.
let filling = Math.floor(BODY_LIMIT / 100);
while (JSON.stringify(dataplane(`over-${filling}`, filling, 0)).length > BODY_LIMIT) filling = Math.floor(filling * 0.95);
for (const n of [LIMIT + 1, filling]) {
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push(await withProbe(base, () => send(base, 'PUT', `/meshes/default/dataplanes/over-${n}`, dataplane(`over-${n}`, n, 0))));
  row(n, 'PUT over the limit (inbounds)', worst(rounds));
}
agent.destroy();
process.exit(0);

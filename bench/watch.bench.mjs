// Change stream benchmark (bench/README.md, Change stream): 1,000 watchers of `GET /events` on one
// zone control plane while dataplanes are written at a steady rate. Prints figures; asserts nothing.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { quantile, sleep, startZone } from './common.mjs';

const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const PROXIES = 100;

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** A dataplane whose address carries the write's sequence number, so a watcher knows which write it sees. */
const dataplane = (name, seq) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address: `10.${(seq >> 16) & 255}.${(seq >> 8) & 255}.${seq & 255}`, inbound: [{ port: 8080, tags: { 'mesh.io/service': `svc-${name.slice(-1)}` } }] },
});

async function put(url, seq) {
  const name = `dp-${String(seq % PROXIES).padStart(3, '0')}`;
  const res = await fetch(`${url}/meshes/default/dataplanes/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(dataplane(name, seq)) });
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`PUT ${name}: ${res.status}`);
}

/** Writes at RATE a second for SECONDS, one at a time; each write's acknowledgement time by sequence number. */
async function writeSteadily(url, firstSeq) {
  const acknowledged = new Map();
  const latencies = [];
  const started = performance.now();
  const total = RATE * SECONDS;
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sent = performance.now();
    await put(url, firstSeq + i);
    const done = performance.now();
    acknowledged.set(firstSeq + i, done);
    latencies.push(done - sent);
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { acknowledged, rate: total / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

/** Opens a watcher of dataplanes; `seen(seq, at)` for each write it receives. */
function watch(url, seen) {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/events?type=Dataplane`, { headers: { accept: 'text/event-stream' }, agent: false }, (res) => {
      res.setEncoding('latin1');
      res.on('data', (chunk) => {
        const at = performance.now();
        for (const match of chunk.matchAll(/"address":"10\.(\d+)\.(\d+)\.(\d+)"/g)) seen((Number(match[1]) << 16) | (Number(match[2]) << 8) | Number(match[3]), at);
      });
      resolve(req);
    });
    req.on('error', reject);
    req.end();
  });
}

const zone = await startZone({});
console.log(`change stream: ${WATCHERS} watchers, ${RATE} writes/s for ${SECONDS} s, ${PROXIES} dataplanes written in turn`);
for (let seq = 0; seq < PROXIES; seq++) await put(zone.url, seq);

const alone = await writeSteadily(zone.url, PROXIES);
await sleep(1000);
const idleBefore = rssMb(zone.child.pid);

const arrivals = [];
const watchers = [];
for (let i = 0; i < WATCHERS; i++) watchers.push(await watch(zone.url, (seq, at) => arrivals.push(seq, at)));
await sleep(3000);
const idleAfter = rssMb(zone.child.pid);

const firstWatched = PROXIES + RATE * SECONDS;
const watched = await writeSteadily(zone.url, firstWatched);
await sleep(2000);
for (const req of watchers) req.destroy();

const delivery = [];
let missing = 0;
const counts = new Map();
for (let i = 0; i < arrivals.length; i += 2) {
  const acknowledgedAt = watched.acknowledged.get(arrivals[i]);
  if (acknowledgedAt === undefined) continue;
  counts.set(arrivals[i], (counts.get(arrivals[i]) ?? 0) + 1);
  // An event can reach a watcher before its write's answer reaches the writer.
  delivery.push(Math.max(0, arrivals[i + 1] - acknowledgedAt));
}
for (const seq of watched.acknowledged.keys()) missing += WATCHERS - (counts.get(seq) ?? 0);
delivery.sort((a, b) => a - b);
zone.child.kill('SIGTERM');

const ms = (value) => `${value.toFixed(1)} ms`;
const verdict = (ok) => (ok ? 'meets the target' : 'misses the target');
console.log(`writes without watchers: ${alone.rate.toFixed(1)}/s, latency p50 ${ms(alone.p50)} p99 ${ms(alone.p99)}`);
console.log(`writes with watchers:    ${watched.rate.toFixed(1)}/s, latency p50 ${ms(watched.p50)} p99 ${ms(watched.p99)}`);
const ratio = watched.rate / alone.rate;
console.log(`write rate with watchers / without: ${ratio.toFixed(3)} (target >= 0.9: ${verdict(ratio >= 0.9)})`);
console.log(`delivery, acknowledgement to watcher: ${delivery.length} events, p50 ${ms(quantile(delivery, 0.5))}, p99 ${ms(quantile(delivery, 0.99))} (target p99 < 100 ms: ${verdict(quantile(delivery, 0.99) < 100)}); events not received: ${missing}`);
const added = idleAfter - idleBefore;
console.log(`resident memory: ${idleBefore.toFixed(1)} MB before the watchers, ${idleAfter.toFixed(1)} MB with ${WATCHERS} idle: +${added.toFixed(1)} MB (target < 50 MB: ${verdict(added < 50)})`);
process.exit(0);

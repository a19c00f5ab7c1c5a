// Change stream benchmark (bench/README.md, Change stream): 1,000 watchers of `GET /events` on one
// zone control plane while dataplanes are written at a steady rate. Prints figures; asserts nothing.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { children, quantile, sleep, startZone } from './common.mjs';

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
    acknowledged.set(firstSeq + i, performance.timeOrigin + done);
    latencies.push(done - sent);
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { acknowledged, rate: total / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

/** Opens a watcher of dataplanes; `seen(seq, at)` for each write it receives, `at` on the clock every process shares. */
function watch(url, seen) {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/events?type=Dataplane`, { headers: { accept: 'text/event-stream' }, agent: false }, (res) => {
      res.setEncoding('latin1');
      res.on('data', (chunk) => {
        const at = performance.timeOrigin + performance.now();
        for (const match of chunk.matchAll(/"address":"10\.(\d+)\.(\d+)\.(\d+)"/g)) seen((Number(match[1]) << 16) | (Number(match[2]) << 8) | Number(match[3]), at);
      });
      resolve(req);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The watchers run in a child process, so that reading their events does not delay the writer's
 * own event loop: it opens them, says `open`, and once given the writes' acknowledgement times
 * answers with the delivery latencies.
 */
async function runWatchers(url) {
  const arrivals = [];
  const watchers = [];
  for (let i = 0; i < WATCHERS; i++) watchers.push(await watch(url, (seq, at) => arrivals.push(seq, at)));
  process.send({ open: true });
  process.on('message', ({ acknowledged }) => {
    for (const req of watchers) req.destroy();
    const ackAt = new Map(acknowledged);
    const delivery = [];
    const counts = new Map();
    for (let i = 0; i < arrivals.length; i += 2) {
      const at = ackAt.get(arrivals[i]);
      if (at === undefined) continue;
      counts.set(arrivals[i], (counts.get(arrivals[i]) ?? 0) + 1);
      // An event can reach a watcher before its write's answer reaches the writer.
      delivery.push(Math.max(0, arrivals[i + 1] - at));
    }
    let missing = 0;
    for (const [seq] of acknowledged) missing += WATCHERS - (counts.get(seq) ?? 0);
    delivery.sort((x, y) => x - y);
    process.send({ events: delivery.length, p50: quantile(delivery, 0.5), p99: quantile(delivery, 0.99), missing }, () => process.exit(0));
  });
}

if (process.argv[2] === 'watchers') {
  await runWatchers(process.argv[3]);
} else {
  const zone = await startZone({});
  console.log(`change stream: ${WATCHERS} watchers, ${RATE} writes/s for ${SECONDS} s, ${PROXIES} dataplanes written in turn`);
  for (let seq = 0; seq < PROXIES; seq++) await put(zone.url, seq);

  const alone = await writeSteadily(zone.url, PROXIES);
  await sleep(1000);
  const idleBefore = rssMb(zone.child.pid);

  const watcherProcess = fork(fileURLToPath(import.meta.url), ['watchers', zone.url]);
  children.add(watcherProcess);
  await once(watcherProcess, 'message');
  await sleep(3000);
  const idleAfter = rssMb(zone.child.pid);

  const watched = await writeSteadily(zone.url, PROXIES + RATE * SECONDS);
  await sleep(2000);
  const answer = once(watcherProcess, 'message');
  watcherProcess.send({ acknowledged: [...watched.acknowledged] });
  const [delivery] = await answer;
  zone.child.kill('SIGTERM');

  const ms = (value) => `${value.toFixed(1)} ms`;
  const verdict = (ok) => (ok ? 'meets the target' : 'misses the target');
  console.log(`writes without watchers: ${alone.rate.toFixed(1)}/s, latency p50 ${ms(alone.p50)} p99 ${ms(alone.p99)}`);
  console.log(`writes with watchers:    ${watched.rate.toFixed(1)}/s, latency p50 ${ms(watched.p50)} p99 ${ms(watched.p99)}`);
  const ratio = watched.rate / alone.rate;
  console.log(`write rate with watchers / without: ${ratio.toFixed(3)} (target >= 0.9: ${verdict(ratio >= 0.9)})`);
  console.log(`delivery, acknowledgement to watcher: ${delivery.events} events, p50 ${ms(delivery.p50)}, p99 ${ms(delivery.p99)} (target p99 < 100 ms: ${verdict(delivery.p99 < 100)}); events not received: ${delivery.missing}`);
  const added = idleAfter - idleBefore;
  console.log(`resident memory: ${idleBefore.toFixed(1)} MB before the watchers, ${idleAfter.toFixed(1)} MB with ${WATCHERS} idle: +${added.toFixed(1)} MB (target < 50 MB: ${verdict(added < 50)})`);
  process.exit(0);
}

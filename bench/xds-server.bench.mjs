#!/usr/bin/env node
// The data plane server under 5,000 simulated proxies, or 10,000 over 1,000 services with
// `npm run bench:xds-server:10k` (bench/xds-clients.mjs, processes of their own), connected to the
// real zone binary: time until every proxy has a full configuration, set against a bare grpc-js ADS server sending the same bytes (bench/xds-baseline-server.mjs); time
// for changes to reach every proxy they affect (median, p99) and the proxies that received
// anything they did not need; the control plane's CPU time (by thread) and resident memory. Prints figures;
// asserts nothing. See bench/README.md.
//
// Knobs (env): BENCH_PROXIES (5000), BENCH_SERVICES (a tenth of the proxies), BENCH_CLIENT_PROCESSES
// (one per 5,000 proxies), BENCH_PER_CHANNEL streams per client connection (50),
// BENCH_WIDE_CHANGES mesh-wide changes (and bare pushes) measured (5), BENCH_NODE_OPTIONS (Node options of the control plane:
// --max-semi-space-size=16 measures the engine's default young generation instead of the zone's own
// choice, docs/architecture.md, Memory),
// BENCH_CPU_PROF=<dir> (run the control plane under `node --cpu-prof`, profile written at the end).
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeResponse, encodeRequest, TYPES } from './xds-clients.mjs';
import { children, freePort, quantile, sleep } from './common.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const grpc = createRequire(join(root, 'apps', 'zone', 'package.json'))('@grpc/grpc-js');
const ZONE_BINARY = join(root, 'apps', 'zone', 'dist', 'main.js');
const PROXIES = Number(process.env.BENCH_PROXIES ?? 5000);
const PER_CHANNEL = Number(process.env.BENCH_PER_CHANNEL ?? 50);
const WIDE_CHANGES = Number(process.env.BENCH_WIDE_CHANGES ?? 5);
const NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '';
const SERVICES = Number(process.env.BENCH_SERVICES ?? Math.max(2, Math.round(PROXIES / 10)));
const CLIENT_PROCESSES = Number(process.env.BENCH_CLIENT_PROCESSES ?? Math.ceil(PROXIES / 5000));
const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';



const service = (index) => `svc-${String(index % SERVICES).padStart(4, '0')}`;
const dpName = (index) => `dp-${String(index).padStart(5, '0')}`;
/** Each proxy calls the next service and the seventh after its own. */
const outboundsOf = Array.from({ length: PROXIES }, (_, i) => [service((i % SERVICES) + 1), service((i % SERVICES) + 7)]);

/** CPU seconds (user + system) in a `/proc` stat file: a process's, or one thread's. */
function cpuOfStat(path) {
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds (user + system), resident MB and peak resident MB (the kernel's high-water mark) of a process, from /proc. */
function usage(pid) {
  const cpu = cpuOfStat(`/proc/${pid}/stat`);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
  const peakRss = Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024;
  return { cpu, rss, peakRss };
}

/**
 * The control plane's CPU seconds by thread, as the threads are named (docs/architecture.md,
 * Threads): its own (the main thread when an operator's engine flag keeps it there), the data plane
 * transport's, and the rest of the process (the engine's compiler and collector helpers, the
 * launcher, the checkpoints of the write-ahead log, threads that ended).
 */
function threadsCpu(pid) {
  const byName = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const key = name === 'control-plane' || name === 'dp-transport' ? name : tid === String(pid) ? 'main' : 'other';
      byName.set(key, (byName.get(key) ?? 0) + cpuOfStat(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // The thread ended meanwhile: its time is the process's, counted in the rest.
    }
  }
  const controlPlane = byName.get('control-plane') ?? byName.get('main') ?? 0;
  const transport = byName.get('dp-transport') ?? 0;
  return { controlPlane, transport, rest: usage(pid).cpu - controlPlane - transport };
}

/** The CPU seconds of each thread group between two `threadsCpu` readings. */
const threadsBetween = (before, after) => ({
  controlPlane: after.controlPlane - before.controlPlane,
  transport: after.transport - before.transport,
  rest: after.rest - before.rest,
});

const threadsText = ({ controlPlane, transport, rest }) => `its thread ${controlPlane.toFixed(2)} s, the transport's ${transport.toFixed(2)} s, the rest ${rest.toFixed(2)} s`;

/** Waits until a process used at most 20 ms of CPU in half a second (30 s at most). */
async function quiet(pid) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const before = usage(pid).cpu;
    await sleep(500);
    if (usage(pid).cpu - before <= 0.02 || Date.now() > deadline) return;
  }
}

async function startZone(workDir = mkdtempSync(join(tmpdir(), 'mesh-bench-xds-'))) {
  const ports = { http: await freePort(), https: await freePort(), diagnostics: await freePort(), dp: await freePort() };
  const flags = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...flags, ZONE_BINARY], {
    env: {
      PATH: process.env.PATH ?? '',
      MESH_GENERAL_WORK_DIR: workDir,
      MESH_API_SERVER_HTTP_PORT: String(ports.http),
      MESH_API_SERVER_HTTPS_PORT: String(ports.https),
      MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
      MESH_DP_SERVER_PORT: String(ports.dp),
      MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
      // Simulated proxies speak plain text: the bench measures the server, not TLS.
      MESH_DP_SERVER_TLS_ENABLED: 'false',
      MESH_LOG_LEVEL: 'warn',
      ...(NODE_OPTIONS ? { NODE_OPTIONS } : {}),
    },
    stdio: 'ignore',
  });
  children.add(child);
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${ports.diagnostics}/ready`)).ok) {
        return { url: `http://127.0.0.1:${ports.http}`, diagnostics: `http://127.0.0.1:${ports.diagnostics}`, dp: `127.0.0.1:${ports.dp}`, pid: child.pid, child, workDir };
      }
    } catch {}
    await sleep(100);
  }
  throw new Error('control plane did not become ready');
}

/** The control plane's garbage collections so far (its /metrics): full ones, and the seconds of all kinds; and the proxies' insights written. */
async function collections(cp) {
  const text = await (await fetch(`${cp.diagnostics}/metrics`)).text();
  const major = /^nodejs_gc_duration_seconds_count\{kind="major"\} (\S+)$/m.exec(text);
  let seconds = 0;
  for (const [, value] of text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="\w+"\} (\S+)$/gm)) seconds += Number(value);
  // The proxies' insights written (their status, every status flush interval while it changes).
  let insightWrites = 0;
  for (const [, value] of text.matchAll(/^store_count\{operation="(?:create|update)",resource_type="DataplaneInsight"\} (\S+)$/gm)) insightWrites += Number(value);
  return { major: Number(major?.[1] ?? 0), seconds, insightWrites };
}

/** The control plane's main-thread JavaScript heap in use and its memory outside the heap (buffers), in MB (its /metrics). */
async function heapOf(cp) {
  const text = await (await fetch(`${cp.diagnostics}/metrics`)).text();
  const metric = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1048576;
  return { used: metric('nodejs_heap_size_used_bytes'), external: metric('nodejs_external_memory_bytes') };
}

const api = async (cp, method, path, body) => {
  const res = await fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text;
};

const dataplane = (index, address = `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`) => ({
  type: 'Dataplane',
  mesh: 'default',
  name: dpName(index),
  networking: {
    address,
    inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': service(index), 'mesh.io/protocol': 'http' } }],
    outbound: outboundsOf[index].map((to, at) => ({ port: 10001 + at, tags: { 'mesh.io/service': to } })),
  },
});

async function load(cp) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < PROXIES) {
        const index = next++;
        await api(cp, 'PUT', `/meshes/default/dataplanes/${dpName(index)}`, dataplane(index));
      }
    }),
  );
}

/** One proxy's responses as they came (raw bytes), to replay from the baseline server. */
async function capture(address, token) {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('authorization', token);
  const call = client.makeBidiStreamRequest(ADS, (b) => b, (b) => b, metadata);
  const captured = {};
  await new Promise((resolve, reject) => {
    call.on('error', reject);
    call.on('data', (bytes) => {
      const response = decodeResponse(bytes);
      if (!captured[response.typeUrl]) captured[response.typeUrl] = Buffer.from(bytes).toString('base64');
      call.write(encodeRequest({ typeUrl: response.typeUrl, versionInfo: response.versionInfo, nonce: response.nonce, names: response.typeUrl === TYPES.endpoints ? outboundsOf[0] : [] }));
      if (response.typeUrl === TYPES.cluster) call.write(encodeRequest({ typeUrl: TYPES.endpoints, names: outboundsOf[0] }));
      if (Object.keys(captured).length === 3) resolve();
    });
    call.write(encodeRequest({ nodeId: `default.${dpName(0)}`, typeUrl: TYPES.cluster }));
    call.write(encodeRequest({ typeUrl: TYPES.listener }));
  });
  call.cancel();
  client.close();
  return captured;
}

/** One process of simulated proxies. */
function startClientProcess() {
  const child = fork(join(root, 'bench', 'xds-clients.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const waiters = [];
  let reportedErrors = 0;
  child.on('message', (message) => {
    for (const waiter of [...waiters]) {
      if (waiter.match(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
    if (message.progress && process.env.BENCH_VERBOSE) console.log('  progress', child.pid, JSON.stringify(message.progress));
    // Failed streams are not opened again, as a proxy would: say so at once, not only when the wait for all runs out.
    if (message.progress?.errors > reportedErrors) {
      reportedErrors = message.progress.errors;
      console.log(`  client process ${child.pid}: ${message.progress.completed} proxies configured, ${message.progress.errors} streams failed (first: ${message.progress.firstError})`);
    }
  });
  const next = (match) => new Promise((resolve) => waiters.push({ match, resolve }));
  return { child, next, send: (message) => child.send(message) };
}

/**
 * The simulated proxies, in CLIENT_PROCESSES processes of their own, each with a contiguous range of
 * them: one process's event loop would be the bottleneck at 10,000 streams.
 */
function startClients() {
  const processes = Array.from({ length: CLIENT_PROCESSES }, startClientProcess);
  const all = (match) => Promise.all(processes.map((one) => one.next(match)));
  const send = (message) => processes.forEach((one) => one.send(message));
  return {
    /** CPU seconds of all the client processes so far. */
    cpu: () => processes.reduce((sum, one) => sum + usage(one.child.pid).cpu, 0),
    /** Per process, its event loop's busy fraction and p99 delay since the last call. */
    async load() {
      const id = Math.random();
      const replies = all((message) => message.load?.id === id);
      send({ load: id });
      return (await replies).map((message) => message.load);
    },
    /** Connects every proxy; resolves with the seconds until the last one had clusters, endpoints and listeners. */
    async connectAll(address, token) {
      const started = Date.now();
      const done = all((message) => message.allComplete);
      const per = Math.ceil(PROXIES / processes.length);
      processes.forEach((one, at) => one.send({ start: { address, token, first: at * per, count: Math.min(per, PROXIES - at * per), perChannel: PER_CHANNEL, outboundsOf } }));
      const timeout = sleep(600_000).then(() => {
        throw new Error('not every proxy got its configuration within 10 minutes');
      });
      await Promise.race([done, timeout]);
      return (Date.now() - started) / 1000;
    },
    /** Marks the start of a change; resolves once marked, with a promise of every affected proxy having heard of it. */
    async mark(id, affected) {
      const marked = all((message) => message.marked?.id === id);
      const reached = all((message) => message.reached?.id === id);
      send({ mark: id, affected });
      await marked;
      return { reached };
    },
    async report() {
      const id = Math.random();
      const replies = all((message) => message.report?.id === id);
      send({ report: id });
      return (await replies).flatMap((message) => message.report.received);
    },
    async stop() {
      const stopped = all((message) => message.stopped);
      send({ stop: true });
      await stopped;
      for (const one of processes) {
        one.child.kill();
        children.delete(one.child);
      }
    },
  };
}

const ms = (value) => `${value.toFixed(1)} ms`;

/**
 * Applies a change and waits until every affected proxy heard of it: the latency of each (from just
 * before the write), and the unaffected proxies that received anything.
 */
async function propagate(clients, change, affected) {
  // The clients say when every affected proxy has heard of it: no polling while the server works.
  const { reached } = await clients.mark(Math.random(), [...affected]);
  const writing = performance.now();
  await change();
  const writeMs = performance.now() - writing;
  await Promise.race([reached, sleep(30_000)]);
  // A quiet second: anything arriving late to proxies the change did not concern counts too.
  await sleep(1000);
  const report = await clients.report();
  const latencies = report.filter((entry) => affected.has(entry.index)).map((entry) => entry.first);
  const unneeded = report.filter((entry) => !affected.has(entry.index)).length;
  return { latencies, unneeded, missed: affected.size - latencies.length, writeMs };
}

const p99Of = (result) => quantile([...result.latencies].sort((a, b) => a - b), 0.99);

/** The lowest and highest p99 of single changes. */
function p99Range(results) {
  const p99s = results.map(p99Of).sort((a, b) => a - b);
  return `p99 of one change ${ms(p99s[0])} to ${ms(p99s.at(-1))}`;
}

/** The client processes' event loops since the last look: whether the simulation kept up with the server. */
const clientLoad = (loads) =>
  `${loads.length} client process${loads.length > 1 ? 'es' : ''}, event loop busy ${loads.map((load) => `${(load.utilization * 100).toFixed(0)}%`).join('/')}, ` +
  `delay p99 ${loads.map((load) => ms(load.delayP99)).join('/')}`;

const consumersOf = (name) => new Set(outboundsOf.flatMap((outbounds, index) => (outbounds.includes(name) ? [index] : [])));

console.log(`xDS server bench: ${PROXIES} proxies over ${SERVICES} services, ${PER_CHANNEL} streams per client connection; control plane Node options: ${NODE_OPTIONS || '(none: the young generation the zone chooses)'}`);
const loading = await startZone();
let started = Date.now();
await load(loading);
console.log(`loaded ${PROXIES} dataplanes in ${((Date.now() - started) / 1000).toFixed(1)} s`);
// Thousands of proxies connect at once when their control plane restarts: it is restarted on its
// store, and renders their configurations ahead of them (docs/architecture.md, Start-up).
const loaded = new Promise((resolve) => loading.child.once('exit', resolve));
loading.child.kill('SIGTERM');
await loaded;
started = Date.now();
const cp = await startZone(loading.workDir);
const serving = (Date.now() - started) / 1000;
// The baseline is measured on a machine the control plane leaves alone.
await quiet(cp.pid);
console.log(
  `restarted on the store: ready in ${serving.toFixed(1)} s, configurations rendered ahead and quiet ${((Date.now() - started) / 1000 - 0.5).toFixed(1)} s after the spawn (CPU ${usage(cp.pid).cpu.toFixed(2)} s)`,
);
// One token for the whole mesh (no name, no tags): every proxy presents it.
const token = await api(cp, 'POST', '/tokens/dataplane', { mesh: 'default', validFor: '24h' });
const captured = await capture(cp.dp, token);
const capturedFile = join(mkdtempSync(join(tmpdir(), 'mesh-bench-xds-')), 'responses.json');
writeFileSync(capturedFile, JSON.stringify(captured));
await sleep(2000);

// Baseline: the same streams and bytes from a bare grpc-js server.
const baseline = spawn(process.execPath, [join(root, 'bench', 'xds-baseline-server.mjs'), capturedFile], { stdio: ['pipe', 'pipe', 'inherit'] });
children.add(baseline);
const baselinePort = await new Promise((resolve) => baseline.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
let clients = startClients();
await clients.load();
const baselineBefore = usage(baseline.pid);
let clientsBefore = clients.cpu();
const baselineSeconds = await clients.connectAll(`127.0.0.1:${baselinePort}`, token);
const baselineAfter = usage(baseline.pid);
console.log(
  `baseline: all ${PROXIES} proxies configured in ${baselineSeconds.toFixed(2)} s (server CPU ${(baselineAfter.cpu - baselineBefore.cpu).toFixed(2)} s, RSS ${baselineAfter.rss.toFixed(0)} MB); ` +
    `the clients' CPU ${(clients.cpu() - clientsBefore).toFixed(2)} s, ${clientLoad(await clients.load())}`,
);
// The floor of a mesh-wide change: the same three responses pushed again to every stream, ACKs read.
await sleep(2000);
const everyProxy = new Set(Array.from({ length: PROXIES }, (_, i) => i));
const clientsBeforePush = clients.cpu();
const baselinePushes = [];
for (let j = 0; j < WIDE_CHANGES; j++) baselinePushes.push(await propagate(clients, async () => baseline.stdin.write('push\n'), everyProxy));
const baselinePushed = usage(baseline.pid);
const baselinePushCpu = (baselinePushed.cpu - baselineAfter.cpu) / WIDE_CHANGES;
const baselinePushLatencies = baselinePushes.flatMap((push) => push.latencies).sort((a, b) => a - b);
console.log(
  `baseline: the same three responses pushed to all ${PROXIES} (${WIDE_CHANGES} times): median ${ms(quantile(baselinePushLatencies, 0.5))}, p99 ${ms(quantile(baselinePushLatencies, 0.99))} ` +
    `(${p99Range(baselinePushes)}); server CPU ${baselinePushCpu.toFixed(2)} s a push; the clients' CPU ${((clients.cpu() - clientsBeforePush) / WIDE_CHANGES).toFixed(2)} s a push, ` +
    clientLoad(await clients.load()),
);
await clients.stop();
baseline.kill();
await sleep(2000);

// The control plane.
const idle = usage(cp.pid);
const idleHeap = await heapOf(cp);
clients = startClients();
await clients.load();
clientsBefore = clients.cpu();
const threadsBeforeConnecting = threadsCpu(cp.pid);
const seconds = await clients.connectAll(cp.dp, token);
const connected = usage(cp.pid);
const threadsConnected = threadsCpu(cp.pid);
const connectedHeap = await heapOf(cp);
console.log(
  `control plane: all ${PROXIES} proxies configured in ${seconds.toFixed(2)} s (ratio to baseline ${(seconds / baselineSeconds).toFixed(2)}); ` +
    `CPU ${(connected.cpu - idle.cpu).toFixed(2)} s; RSS ${idle.rss.toFixed(0)} MB before, ${connected.rss.toFixed(0)} MB connected, peak ${connected.peakRss.toFixed(0)} MB ` +
    `(${((connected.rss * 1024) / PROXIES).toFixed(0)} KB a proxy in all, ${(((connected.rss - idle.rss) * 1024) / PROXIES).toFixed(0)} KB a proxy for the streams); ` +
    `the clients' CPU ${(clients.cpu() - clientsBefore).toFixed(2)} s, ${clientLoad(await clients.load())}`,
);
console.log(`  the control plane's CPU connecting by thread: ${threadsText(threadsBetween(threadsBeforeConnecting, threadsConnected))}`);
// Where a connected proxy's memory goes: the main thread's heap and its buffers; the rest of the
// resident growth is the transport thread (its heap, HTTP/2 sessions) and memory the heaps hold free.
const perProxyKb = (before, after) => `${(((after - before) * 1024) / PROXIES).toFixed(1)} KB`;
console.log(
  `  memory a connected proxy: main-thread heap in use ${perProxyKb(idleHeap.used, connectedHeap.used)} (${idleHeap.used.toFixed(0)} -> ${connectedHeap.used.toFixed(0)} MB), ` +
    `its buffers ${perProxyKb(idleHeap.external, connectedHeap.external)}, the rest of the resident memory ` +
    `${perProxyKb(idle.rss - idleHeap.used - idleHeap.external, connected.rss - connectedHeap.used - connectedHeap.external)}`,
);
// Let the connect-time insight writes settle before measuring changes.
await sleep(12_000);

const scenarios = [];
/** Prints a scenario's figures; `cpu` is the control plane's CPU seconds over its changes (each with its quiet second). */
const report = (name, results, cpu) => {
  const latencies = results.flatMap((result) => result.latencies).sort((a, b) => a - b);
  const unneeded = results.reduce((sum, result) => sum + result.unneeded, 0);
  const missed = results.reduce((sum, result) => sum + result.missed, 0);
  scenarios.push({ name, latencies, unneeded, missed, cpu });
  console.log(
    `${name}: ${latencies.length} proxies reached, median ${ms(quantile(latencies, 0.5))}, p99 ${ms(quantile(latencies, 0.99))}, max ${ms(latencies.at(-1))}; ` +
      `${unneeded} unaffected proxies received something; ${missed} affected proxies never heard of it; ` +
      `control plane CPU ${cpu.toFixed(2)} s (${((cpu * 1e6) / Math.max(1, latencies.length)).toFixed(0)} µs a proxy reached)`,
  );
  // A change late as a whole may have waited for its write to be answered before any proxy's turn.
  const slowest = results.reduce((worst, result) => (p99Of(result) > p99Of(worst) ? result : worst));
  const writes = results.map((result) => result.writeMs).sort((a, b) => a - b);
  console.log(`  the slowest change: p99 ${ms(p99Of(slowest))}, its write answered in ${ms(slowest.writeMs)}; the writes answered in ${ms(quantile(writes, 0.5))} (median), ${ms(writes.at(-1))} (max)`);
};

// A Timeout for one service: only its consumers' clusters change.
const before = usage(cp.pid);
const narrow = [];
const narrowTargets = new Set(Array.from({ length: 10 }, (_, j) => service(17 * j + 3)));
for (let j = 0; j < 10; j++) {
  const target = service(17 * j + 3);
  narrow.push(
    await propagate(
      clients,
      () =>
        api(cp, 'PUT', `/meshes/default/timeouts/bench-${j}`, {
          type: 'Timeout',
          mesh: 'default',
          name: `bench-${j}`,
          sources: [{ match: { 'mesh.io/service': '*' } }],
          destinations: [{ match: { 'mesh.io/service': target } }],
          conf: { connectTimeout: '3s' },
        }),
      consumersOf(target),
    ),
  );
}
const afterNarrow = usage(cp.pid);
report('Timeout for one service (its ~20 consumers)', narrow, afterNarrow.cpu - before.cpu);

// A new instance of a service: only its consumers' endpoints change.
const endpoints = [];
for (let j = 0; j < 10; j++) {
  const index = PROXIES + j;
  const body = { ...dataplane(j * 13, `10.200.0.${j + 1}`), name: dpName(index) };
  endpoints.push(await propagate(clients, () => api(cp, 'PUT', `/meshes/default/dataplanes/${dpName(index)}`, body), consumersOf(service(j * 13))));
}
const afterEndpoints = usage(cp.pid);
report('A new endpoint of one service (its ~20 consumers)', endpoints, afterEndpoints.cpu - afterNarrow.cpu);

// A mesh-wide Timeout that wins over the default one, changed again and again: every proxy's
// clusters, endpoints and listeners, each time; not a proxy whose outbounds all have a Timeout of
// their own above (none at the default sizes, a good part of a mesh of 20 services).
const wideAffected = new Set([...everyProxy].filter((index) => outboundsOf[index].some((name) => !narrowTargets.has(name))));
const clientsBeforeWide = clients.cpu();
const wide = [];
/** Per change, from just before it to the end of its quiet second: CPU of both sides (the control plane's by thread), its garbage collections and the insights it wrote. */
const wideCollections = [];
for (let j = 0; j < WIDE_CHANGES; j++) {
  const collectedBefore = await collections(cp);
  const cpuBefore = { server: usage(cp.pid).cpu, clients: clients.cpu() };
  const threadsBefore = threadsCpu(cp.pid);
  wide.push(
    await propagate(
      clients,
      () =>
        api(cp, 'PUT', '/meshes/default/timeouts/bench-all', {
          type: 'Timeout',
          mesh: 'default',
          name: 'bench-all',
          sources: [{ match: { 'mesh.io/service': '*' } }],
          destinations: [{ match: { 'mesh.io/service': '*' } }],
          conf: { connectTimeout: `${4 + j}s`, http: { requestTimeout: `${20 + j}s` } },
        }),
      wideAffected,
    ),
  );
  const cpuAfter = { server: usage(cp.pid).cpu, clients: clients.cpu() };
  const threadsAfter = threadsCpu(cp.pid);
  const collectedAfter = await collections(cp);
  wideCollections.push({
    cpu: cpuAfter.server - cpuBefore.server,
    threads: threadsBetween(threadsBefore, threadsAfter),
    insightWrites: collectedAfter.insightWrites - collectedBefore.insightWrites,
    clientsCpu: cpuAfter.clients - cpuBefore.clients,
    gcSeconds: collectedAfter.seconds - collectedBefore.seconds,
    fullCollections: collectedAfter.major - collectedBefore.major,
  });
}
const after = usage(cp.pid);
const wideCpu = (after.cpu - afterEndpoints.cpu) / WIDE_CHANGES;
report(`A mesh-wide Timeout (${wideAffected.size === PROXIES ? "all " : ""}${wideAffected.size} of ${PROXIES} proxies, ${WIDE_CHANGES} changes)`, wide, after.cpu - afterEndpoints.cpu);
const wideLatencies = scenarios.at(-1).latencies;
console.log(
  `  ${p99Range(wide)}; control plane CPU ${wideCpu.toFixed(2)} s a change; the clients' CPU ${((clients.cpu() - clientsBeforeWide) / WIDE_CHANGES).toFixed(2)} s a change, ` +
    clientLoad(await clients.load()),
);
console.log(
  `  each change in turn:${wide
    .map((result, at) => {
      const { cpu, threads, insightWrites, clientsCpu, gcSeconds, fullCollections } = wideCollections[at];
      return `\n    p99 ${ms(p99Of(result))}: CPU ${cpu.toFixed(2)} s (${threadsText(threads)}), GC ${gcSeconds.toFixed(2)} s, ${fullCollections} full, ${insightWrites} insights written; clients ${clientsCpu.toFixed(2)} s`;
    })
    .join('')}`,
);
console.log(
  `  against the bare push of the same bytes: median ${(quantile(wideLatencies, 0.5) / quantile(baselinePushLatencies, 0.5)).toFixed(2)}x, ` +
    `p99 ${(quantile(wideLatencies, 0.99) / quantile(baselinePushLatencies, 0.99)).toFixed(2)}x, CPU ${(wideCpu / baselinePushCpu).toFixed(2)}x`,
);
console.log(`changes: control plane CPU ${(after.cpu - before.cpu).toFixed(2)} s over the ${20 + WIDE_CHANGES} changes; RSS ${after.rss.toFixed(0)} MB, peak ${after.peakRss.toFixed(0)} MB`);

// The targets of a zone of 10,000 proxies (bench/README.md, Data plane server benchmark), each with how far off it is.
const verdict = (met, text) => console.log(`  ${met ? 'met' : 'MISSED'}: ${text}`);
const oneServiceP99 = quantile([...scenarios[0].latencies, ...scenarios[1].latencies].sort((a, b) => a - b), 0.99);
const wideP99 = quantile(wideLatencies, 0.99);
const connectedKb = (connected.rss * 1024) / PROXIES;
const unneededAll = scenarios.reduce((sum, scenario) => sum + scenario.unneeded, 0);
const missedAll = scenarios.reduce((sum, scenario) => sum + scenario.missed, 0);
console.log(`verdicts (${PROXIES} proxies over ${SERVICES} services):`);
verdict(true, `all ${PROXIES} proxies connected, configured and ACKed in ${seconds.toFixed(2)} s (${(seconds / baselineSeconds).toFixed(2)}x the bare server's ${baselineSeconds.toFixed(2)} s)`);
for (const scenario of scenarios.slice(0, 2)) {
  const p99 = quantile(scenario.latencies, 0.99);
  verdict(p99 < 100, `${scenario.name}: p99 ${ms(p99)} against 100 ms (${(p99 / 100).toFixed(2)}x)`);
}
verdict(oneServiceP99 < 100, `one-service changes pooled: p99 ${ms(oneServiceP99)} against 100 ms`);
verdict(wideP99 < 1000, `mesh-wide change pooled: p99 ${ms(wideP99)} against 1 s (${(wideP99 / 1000).toFixed(2)}x)`);
verdict(connectedKb < 100, `resident memory connected: ${connectedKb.toFixed(0)} KB a proxy against 100 KB (${(connectedKb / 100).toFixed(2)}x)`);
verdict(after.peakRss < 1536, `resident memory in all: ${connected.rss.toFixed(0)} MB connected, peak ${after.peakRss.toFixed(0)} MB against 1.5 GB (${(after.peakRss / 1536).toFixed(2)}x)`);
verdict(unneededAll === 0 && missedAll === 0, `${unneededAll} proxies received something they did not need; ${missedAll} affected proxies never heard of a change`);

await clients.stop();
// A clean stop writes the CPU profile, when asked for.
const exited = new Promise((resolve) => cp.child.once('exit', resolve));
cp.child.kill('SIGTERM');
await Promise.race([exited, sleep(30_000)]);
console.log(
  JSON.stringify({
    proxies: PROXIES,
    nodeOptions: NODE_OPTIONS,
    baselineSeconds,
    baselinePush: { median: quantile(baselinePushLatencies, 0.5), p99: quantile(baselinePushLatencies, 0.99), cpu: baselinePushCpu },
    seconds,
    ratio: seconds / baselineSeconds,
    services: SERVICES,
    rssMb: { idle: idle.rss, connected: connected.rss, after: after.rss, peak: after.peakRss },
    scenarios: scenarios.map(({ name, latencies, unneeded, missed, cpu }) => ({ name, median: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), unneeded, missed, cpu })),
    wideChanges: wide.map((result, at) => ({ p99: p99Of(result), ...wideCollections[at] })),
  }),
);
process.exit(0);

#!/usr/bin/env node
// Soak of the built zone control plane: a realistic mesh on SQLite, a few hundred simulated ADS
// proxies (bench/xds-clients.mjs, a process of their own) and a paced mixed read/write load over
// the REST API for minutes on end. Every interval prints requests, errors, read and write
// latency, the control plane's resident memory (and what it is made of) and CPU time, proxies
// online and the xDS responses they received; at the end a summary and whether memory plateaued.
// Asserts nothing; exits non-zero only when the setup fails. See bench/README.md.
//
// Knobs (env): BENCH_SOAK_MINUTES (10; fractions such as 0.5 work), BENCH_SOAK_PROXIES (300),
// BENCH_SOAK_CLIENTS concurrent HTTP clients (4), BENCH_SOAK_RATE requests per second in all
// (50), BENCH_SOAK_INTERVAL seconds between report lines (30, less on short runs).
import { fork, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { children, freePort, quantile, sleep } from './common.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ZONE_BINARY = join(root, 'apps', 'zone', 'dist', 'main.js');

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
const PROXIES = Number(process.env.BENCH_SOAK_PROXIES ?? 300);
const CLIENTS = Number(process.env.BENCH_SOAK_CLIENTS ?? 4);
const RATE = Number(process.env.BENCH_SOAK_RATE ?? 50);
const DURATION_MS = MINUTES * 60_000;
const INTERVAL_MS = 1000 * Number(process.env.BENCH_SOAK_INTERVAL ?? Math.min(30, Math.max(3, (MINUTES * 60) / 10)));
const SAMPLE_MS = 1000;
const REQUEST_TIMEOUT_MS = 30_000;
// Growth between the medians of the middle and last thirds beyond which memory is "still growing":
// 1 MB a minute is 1.4 GB a day, while the median of a minute's samples moves by far less than that.
const GROWTH_LIMIT_MB_PER_MINUTE = 1;

const MESH = 'default';
const DATAPLANES = 1_000;
const SERVICES = 100;
const PER_CHANNEL = 50;
const DP_CHURN_SLOTS = 40;
const POLICY_CHURN_SLOTS = 20;

const dpName = (i) => `dp-${String(i).padStart(5, '0')}`; // the node id bench/xds-clients.mjs presents
const service = (i) => `svc-${String(i % SERVICES).padStart(3, '0')}`;
/** Each dataplane calls the next service and the seventh after its own. */
const outboundsOf = (i) => [service((i % SERVICES) + 1), service((i % SERVICES) + 7)];
/** Addresses stay unique: dataplane i moves within 10.0-249.x.y, churned ones live in 10.251.0.x. */
const address = (i, generation) => `10.${generation % 250}.${(i >> 8) & 255}.${i & 255}`;

const dataplane = (name, i, at = address(i, 0)) => ({
  type: 'Dataplane',
  mesh: MESH,
  name,
  networking: {
    address: at,
    inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': service(i), 'mesh.io/protocol': 'http', version: `v${i % 3}` } }],
    outbound: outboundsOf(i).map((to, at) => ({ port: 10001 + at, tags: { 'mesh.io/service': to } })),
  },
});

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const to = (s) => [{ match: { 'mesh.io/service': s } }];
const MESH_REF = { kind: 'Mesh' };
const serviceRef = (s) => ({ kind: 'MeshService', name: s });
// The policies loaded, each aimed at one service; `body(s, generation)` differs per generation so
// that every update is a real change that proxies hear of.
const POLICY_KINDS = {
  TrafficRoute: {
    path: 'traffic-routes',
    count: 50,
    body: (s, g) => ({
      sources: ALL,
      destinations: to(s),
      conf: { split: [{ weight: 90 - (g % 5) * 10, destination: { 'mesh.io/service': s, version: 'v1' } }, { weight: 10 + (g % 5) * 10, destination: { 'mesh.io/service': s, version: 'v2' } }] },
    }),
  },
  Timeout: { path: 'timeouts', count: 50, body: (s, g) => ({ sources: ALL, destinations: to(s), conf: { connectTimeout: `${1 + (g % 9)}s`, http: { requestTimeout: '15s' } } }) },
  MeshTimeout: {
    path: 'meshtimeouts',
    count: 20,
    body: (s, g) => ({ spec: { targetRef: MESH_REF, to: [{ targetRef: serviceRef(s), default: { connectionTimeout: '5s', http: { requestTimeout: `${10 + (g % 20)}s` } } }] } }),
  },
  MeshRetry: {
    path: 'meshretries',
    count: 10,
    body: (s, g) => ({ spec: { targetRef: MESH_REF, to: [{ targetRef: serviceRef(s), default: { http: { numRetries: 1 + (g % 5), perTryTimeout: '2s' } } }] } }),
  },
  MeshHealthCheck: {
    path: 'meshhealthchecks',
    count: 10,
    body: (s, g) => ({ spec: { targetRef: MESH_REF, to: [{ targetRef: serviceRef(s), default: { interval: `${5 + (g % 10)}s`, timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1, tcp: {} } }] } }),
  },
};
const policy = (type, name, s, generation = 0) => ({ type, mesh: MESH, name, ...POLICY_KINDS[type].body(s, generation) });
const policyPath = (type, name) => `/meshes/${MESH}/${POLICY_KINDS[type].path}/${name}`;
/** Every loaded policy: kind, name, the service it aims at. Spread over services from different offsets per kind. */
const LOADED_POLICIES = Object.entries(POLICY_KINDS).flatMap(([type, kind], k) =>
  Array.from({ length: kind.count }, (_, j) => ({ type, name: `soak-${kind.path}-${j}`, service: service(j + 17 * k) })),
);

// ---------------------------------------------------------------------------------------------
// Processes and /proc

/** CPU seconds (user + system) and resident MB of a process; NaN once it is gone (or a zombie). */
function usage(pid) {
  try {
    // Fields after the `(comm)`, which may itself hold spaces: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
    return { cpu: (Number(fields[11]) + Number(fields[12])) / 100, rss };
  } catch {
    return { cpu: NaN, rss: NaN };
  }
}

/**
 * The zone on free ports with a fresh work dir. Its output goes to zone.log there and is kept in
 * memory: log lines (JSON, warnings and errors only) on stdout; the banner, and a crash's trace, on stderr.
 */
async function startZone(workDir) {
  const ports = { http: await freePort(), https: await freePort(), diagnostics: await freePort(), dp: await freePort() };
  const child = spawn(process.execPath, [ZONE_BINARY], {
    env: {
      PATH: process.env.PATH ?? '',
      MESH_GENERAL_WORK_DIR: workDir,
      MESH_API_SERVER_HTTP_PORT: String(ports.http),
      MESH_API_SERVER_HTTPS_PORT: String(ports.https),
      MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
      MESH_DP_SERVER_PORT: String(ports.dp),
      MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
      // Simulated proxies speak plain text and present no token: the soak is about the server.
      MESH_DP_SERVER_TLS_ENABLED: 'false',
      MESH_DP_SERVER_AUTHN_DP_PROXY_TYPE: 'none',
      // One line per request at info would be most of the log; 5xx answers are logged as errors.
      MESH_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const log = createWriteStream(join(workDir, 'zone.log'));
  const lines = [];
  let partial = '';
  const keep = (chunk) => {
    log.write(chunk);
    const parts = (partial + chunk).split('\n');
    partial = parts.pop();
    lines.push(...parts.filter(Boolean));
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const zone = { url: `http://127.0.0.1:${ports.http}`, metrics: `http://127.0.0.1:${ports.diagnostics}/metrics`, dp: `127.0.0.1:${ports.dp}`, pid: child.pid, child, exited, lines, exit: undefined };
  exited.then((exit) => ((zone.exit = exit), children.delete(child), log.end()));
  for (let i = 0; i < 300; i++) {
    if (zone.exit) throw new Error(`control plane exited (${JSON.stringify(zone.exit)}):\n${lines.join('\n')}`);
    if (await fetch(`http://127.0.0.1:${ports.diagnostics}/ready`).then((r) => r.ok, () => false)) return zone;
    await sleep(100);
  }
  throw new Error(`control plane did not become ready:\n${lines.join('\n')}`);
}

/** The simulated proxies in their own process, driven over IPC (see bench/xds-clients.mjs). */
function startProxies() {
  const child = fork(join(root, 'bench', 'xds-clients.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const waiters = [];
  let lastProgress;
  child.on('message', (message) => {
    if (message.progress) lastProgress = message.progress;
    for (const waiter of [...waiters]) {
      if (waiter.match(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  });
  const next = (match) => new Promise((resolve) => waiters.push({ match, resolve }));
  return {
    next,
    send: (message) => child.send(message),
    progress: () => lastProgress,
    /** Responses received since the previous call (the clients count from a mark on): total and proxies reached. */
    async responsesSinceLast() {
      const id = Math.random();
      const reply = next((message) => message.report?.id === id);
      // Report and new mark back to back: the clients handle both before reading more responses.
      child.send({ report: id });
      child.send({ mark: id });
      const answer = await Promise.race([reply, sleep(5_000)]);
      if (!answer) return { responses: NaN, proxies: NaN }; // the clients' process is stuck or gone
      const { received } = answer.report;
      return { responses: received.reduce((sum, entry) => sum + entry.count, 0), proxies: received.length };
    },
    async stop() {
      if (child.exitCode !== null) return;
      const stopped = next((message) => message.stopped);
      child.send({ stop: true });
      await Promise.race([stopped, sleep(5_000)]);
      child.kill();
      children.delete(child);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP

const agent = new Agent({ keepAlive: true, maxSockets: Math.max(8, CLIENTS) });

/**
 * One request: its status and body, or `error` (connection refused, reset, timed out). A reset of
 * a reused keep-alive connection is the race Node's documentation describes (the server closed it
 * as the request went out): such a request is sent once more, and marked `resent`.
 */
function call(base, method, path, body, resend = true) {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${base}${path}`, { method, agent, timeout: REQUEST_TIMEOUT_MS, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', (error) => {
      if (resend && req.reusedSocket && error.code === 'ECONNRESET') resolve(call(base, method, path, body, false).then((result) => ({ ...result, resent: true })));
      else resolve({ error: error.message });
    });
    req.end(payload);
  });
}

/** PUTs every [path, body] with 8 requests in flight; any answer but 201 fails the setup. */
async function putAll(base, items) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const [path, body] = items[next++];
      const res = await call(base, 'PUT', path, body);
      if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status ?? res.error} ${res.body ?? ''}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function onlineProxies(base) {
  const res = await call(base, 'GET', `/mesh-insights/${MESH}`);
  return res.status === 200 ? (JSON.parse(res.body).dataplanes?.online ?? 0) : NaN;
}

// ---------------------------------------------------------------------------------------------
// The load

const pick = (items) => items[Math.floor(Math.random() * items.length)];
const page = (size, total) => `size=${size}&offset=${size * Math.floor(Math.random() * Math.ceil(total / size))}`;

/**
 * The mix, by weight: 70% reads and 30% writes. Each client updates and churns only its own
 * share of the resources (index modulo CLIENTS), so no write races another and none is expected
 * to fail; churn alternates create and delete over a fixed set of names, so the resource count
 * stays bounded and memory should plateau.
 */
function operations(client) {
  const mine = (items) => items.filter((_, i) => i % CLIENTS === client);
  const myDataplanes = mine(Array.from({ length: DATAPLANES }, (_, i) => i));
  const myPolicies = mine(LOADED_POLICIES);
  const myDpSlots = mine(Array.from({ length: DP_CHURN_SLOTS }, (_, i) => i));
  const myPolicySlots = mine(Array.from({ length: POLICY_CHURN_SLOTS }, (_, i) => i));
  const present = new Set(); // paths of the churned resources that exist now
  let generation = 0;
  let dpSlot = 0;
  let policySlot = 0;
  const churn = (create) => (present.has(create.path) ? { method: 'DELETE', path: create.path, onOk: () => present.delete(create.path) } : { ...create, onOk: () => present.add(create.path) });
  return [
    { name: 'GET dataplane', weight: 18, read: true, request: () => ({ method: 'GET', path: `/meshes/${MESH}/dataplanes/${dpName(Math.floor(Math.random() * DATAPLANES))}` }) },
    {
      name: 'GET policy',
      weight: 8,
      read: true,
      request: () => {
        const { type, name } = pick(LOADED_POLICIES);
        return { method: 'GET', path: policyPath(type, name) };
      },
    },
    { name: 'GET dataplanes page', weight: 8, read: true, request: () => ({ method: 'GET', path: `/meshes/${MESH}/dataplanes?${page(100, DATAPLANES)}` }) },
    {
      name: 'GET policies page',
      weight: 5,
      read: true,
      request: () => ({ method: 'GET', path: `/meshes/${MESH}/${pick(Object.values(POLICY_KINDS)).path}?size=20` }),
    },
    { name: 'GET dataplanes+insights', weight: 8, read: true, request: () => ({ method: 'GET', path: `/meshes/${MESH}/dataplanes+insights?${page(100, DATAPLANES)}` }) },
    { name: 'GET mesh-insights', weight: 5, read: true, request: () => ({ method: 'GET', path: `/mesh-insights/${MESH}` }) },
    { name: 'GET service-insights', weight: 5, read: true, request: () => ({ method: 'GET', path: `/meshes/${MESH}/service-insights?size=100` }) },
    {
      name: 'GET dataplane policies',
      weight: 8,
      read: true,
      request: () => ({ method: 'GET', path: `/meshes/${MESH}/dataplanes/${dpName(Math.floor(Math.random() * DATAPLANES))}/policies` }),
    },
    // `/xds` shows what was sent on a live stream, so only connected proxies are asked for.
    { name: 'GET dataplane xds', weight: 5, read: true, request: () => ({ method: 'GET', path: `/meshes/${MESH}/dataplanes/${dpName(Math.floor(Math.random() * PROXIES))}/xds` }) },
    {
      name: 'PUT dataplane update',
      weight: 10,
      request: () => {
        const i = pick(myDataplanes);
        return { method: 'PUT', path: `/meshes/${MESH}/dataplanes/${dpName(i)}`, body: dataplane(dpName(i), i, address(i, ++generation)) };
      },
    },
    {
      name: 'PUT policy update',
      weight: 8,
      request: () => {
        const p = pick(myPolicies);
        return { method: 'PUT', path: policyPath(p.type, p.name), body: policy(p.type, p.name, p.service, ++generation) };
      },
    },
    {
      name: 'dataplane create/delete',
      weight: 6,
      request: () => {
        const slot = myDpSlots[dpSlot++ % myDpSlots.length];
        const name = `churn-${slot}`;
        // Slot i registers as an instance of service i, so its creation and deletion reach that service's consumers.
        return churn({ method: 'PUT', path: `/meshes/${MESH}/dataplanes/${name}`, body: dataplane(name, slot, `10.251.0.${slot}`) });
      },
    },
    {
      name: 'policy create/delete',
      weight: 6,
      request: () => {
        const slot = myPolicySlots[policySlot++ % myPolicySlots.length];
        const type = slot % 2 === 0 ? 'MeshTimeout' : 'TrafficRoute';
        const name = `churn-${slot}`;
        return churn({ method: 'PUT', path: policyPath(type, name), body: policy(type, name, service(3 * slot + 1)) });
      },
    },
  ];
}

const counts = () => ({ requests: 0, ok: 0, client4xx: 0, server5xx: 0, network: 0 });
const newInterval = () => ({ ...counts(), reads: [], writes: [] });
/** An answer's class: 2xx, 4xx (a 3xx, never expected either, counts with them), 5xx, or no answer. */
const classOf = (result) => (result.error ? 'network' : result.status >= 500 ? 'server5xx' : result.status >= 300 ? 'client4xx' : 'ok');

/** What every request did, per interval and per operation over the whole run. */
class Recorder {
  constructor() {
    this.interval = newInterval();
    this.byOperation = new Map();
    this.failures = []; // the first few non-2xx answers and network errors, for the report
    this.failureCount = 0;
    this.resent = 0;
  }

  record(operation, method, path, result, ms) {
    const total = this.byOperation.get(operation.name) ?? { ...counts(), latencies: [] };
    this.byOperation.set(operation.name, total);
    const answer = classOf(result);
    for (const stats of [this.interval, total]) {
      stats.requests++;
      stats[answer]++;
    }
    (operation.read ? this.interval.reads : this.interval.writes).push(ms);
    total.latencies.push(ms);
    if (result.resent) this.resent++;
    if (answer !== 'ok') {
      this.failureCount++;
      if (this.failures.length < 20) this.failures.push(`${method} ${path}: ${result.error ?? `${result.status} ${result.body.slice(0, 300)}`}`);
    }
  }

  takeInterval() {
    const stats = this.interval;
    this.interval = newInterval();
    return stats;
  }
}

/** One client, paced to RATE / CLIENTS requests per second, until `until()` says stop. */
async function runClient(base, client, recorder, until) {
  const mix = operations(client);
  const totalWeight = mix.reduce((sum, op) => sum + op.weight, 0);
  const period = (1000 * CLIENTS) / RATE;
  // Clients start spread over one period, not all at once.
  let due = performance.now() + (period * client) / CLIENTS;
  while (!until()) {
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    // A client that fell behind (the server slowed down) does not burst to catch up.
    else if (wait < -1000) due = performance.now();
    due += period;
    let roll = Math.random() * totalWeight;
    const operation = mix.find((op) => (roll -= op.weight) < 0) ?? mix.at(-1);
    const { method, path, body, onOk } = operation.request();
    const started = performance.now();
    const result = await call(base, method, path, body);
    recorder.record(operation, method, path, result, performance.now() - started);
    if (classOf(result) === 'ok') onOk?.();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');
const clock = (ms) => `${Math.floor(ms / 60_000)}:${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}`;
const sorted = (values) => Float64Array.from(values).sort();
const median = (values) => quantile(sorted(values), 0.5);
const row = (cells, widths) => cells.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join(' ');

const INTERVAL_COLUMNS = [
  ['elapsed', 7],
  ['requests', 8],
  ['req/s', 6],
  ['4xx', 4],
  ['5xx', 4],
  ['net', 4],
  ['err %', 6],
  ['read p50', 8],
  ['p99 ms', 7],
  ['write p50', 9],
  ['p99 ms', 7],
  ['RSS MB', 7],
  ['heap MB', 8],
  ['held', 5],
  ['ext', 5],
  ['cache', 6],
  ['CPU s', 7],
  ['CPU %', 6],
  ['online', 6],
  ['xDS resp', 8],
  ['to proxies', 10],
];
const intervalWidths = INTERVAL_COLUMNS.map(([, width]) => width);

function printInterval({ elapsed, seconds, stats, rss, memory, cpu, cpuDelta, online, xds }) {
  const reads = sorted(stats.reads);
  const writes = sorted(stats.writes);
  const errors = stats.client4xx + stats.server5xx + stats.network;
  console.log(
    row(
      [
        clock(elapsed),
        fmt(stats.requests),
        fmt(stats.requests / seconds),
        stats.client4xx,
        stats.server5xx,
        stats.network,
        fmt((100 * errors) / Math.max(1, stats.requests), 2),
        fmt(quantile(reads, 0.5), 1),
        fmt(quantile(reads, 0.99), 1),
        fmt(quantile(writes, 0.5), 1),
        fmt(quantile(writes, 0.99), 1),
        fmt(rss),
        fmt(memory.heapUsed),
        fmt(memory.heapTotal),
        fmt(memory.external),
        fmt(memory.cache, 1),
        fmt(cpu, 1),
        fmt((100 * cpuDelta) / seconds),
        fmt(online),
        fmt(xds.responses),
        fmt(xds.proxies),
      ],
      intervalWidths,
    ),
  );
}

function printSummary(recorder) {
  const widths = [26, 8, 7, 5, 5, 5, 8, 8, 9];
  console.log(`\n${row(['operation', 'requests', '2xx', '4xx', '5xx', 'net', 'p50 ms', 'p99 ms', 'max ms'], widths)}`);
  const all = counts();
  for (const [name, total] of recorder.byOperation) {
    const latencies = sorted(total.latencies);
    for (const key of Object.keys(all)) all[key] += total[key];
    console.log(
      row([name, fmt(total.requests), fmt(total.ok), total.client4xx, total.server5xx, total.network, fmt(quantile(latencies, 0.5), 1), fmt(quantile(latencies, 0.99), 1), fmt(latencies.at(-1), 1)], widths),
    );
  }
  const errors = all.client4xx + all.server5xx + all.network;
  console.log(row(['all', fmt(all.requests), fmt(all.ok), all.client4xx, all.server5xx, all.network, '', '', ''], widths));
  console.log(`error rate ${fmt((100 * errors) / Math.max(1, all.requests), 3)}% (4xx ${all.client4xx}, 5xx ${all.server5xx}, network ${all.network})`);
  if (recorder.resent > 0) console.log(`${recorder.resent} requests sent again after a reset of a reused keep-alive connection (counted by their second answer)`);
  if (recorder.failures.length > 0) {
    console.log(`first ${recorder.failures.length} of ${recorder.failureCount} failed requests:`);
    for (const failure of recorder.failures) console.log(`  ${failure}`);
  }
}

/**
 * What the resident memory is made of, from the control plane's own metrics (MB): the JavaScript
 * heap in use (garbage included) and held, memory outside it (buffers), and of those buffers the
 * xDS encodings in use, found by content.
 */
async function memoryParts(metricsUrl) {
  const text = await fetch(metricsUrl).then((r) => r.text(), () => '');
  const mb = (series) => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return { heapUsed: mb('nodejs_heap_size_used_bytes'), heapTotal: mb('nodejs_heap_size_total_bytes'), external: mb('nodejs_external_memory_bytes'), cache: mb('xds_encoding_cache_bytes') };
}

/** Median RSS of the middle and last thirds of the run, and the growth between them per minute. */
function memoryVerdict(samples, elapsedMs) {
  const third = elapsedMs / 3;
  const during = (from, to) => samples.filter((s) => s.at >= from && s.at < to).map((s) => s.rss);
  const [first, middle, last] = [during(0, third), during(third, 2 * third), during(2 * third, Infinity)].map(median);
  const growth = (last - middle) / (third / 60_000);
  const all = samples.map((s) => s.rss);
  console.log(
    `\nRSS of the control plane (${samples.length} samples, every ${SAMPLE_MS / 1000} s): min ${fmt(Math.min(...all))} MB, max ${fmt(Math.max(...all))} MB; ` +
      `median of the first third ${fmt(first)} MB, middle third ${fmt(middle)} MB, last third ${fmt(last)} MB`,
  );
  const verdict = growth < GROWTH_LIMIT_MB_PER_MINUTE ? 'memory plateaued' : 'memory still growing';
  console.log(`memory: ${growth >= 0 ? '+' : ''}${fmt(growth, 2)} MB/minute from the middle to the last third (limit ${GROWTH_LIMIT_MB_PER_MINUTE} MB/minute): ${verdict}`);
}

// ---------------------------------------------------------------------------------------------

async function setup(workDir) {
  if (!existsSync(ZONE_BINARY)) throw new Error(`${ZONE_BINARY} is missing: build first (npm run setup)`);
  const zone = await startZone(workDir);
  let started = performance.now();
  await putAll(
    zone.url,
    Array.from({ length: DATAPLANES }, (_, i) => [`/meshes/${MESH}/dataplanes/${dpName(i)}`, dataplane(dpName(i), i)]),
  );
  await putAll(
    zone.url,
    LOADED_POLICIES.map((p) => [policyPath(p.type, p.name), policy(p.type, p.name, p.service)]),
  );
  const kinds = Object.entries(POLICY_KINDS).map(([type, kind]) => `${kind.count} ${type}`).join(', ');
  console.log(`loaded ${fmt(DATAPLANES)} dataplanes over ${SERVICES} services and ${LOADED_POLICIES.length} policies (${kinds}) in ${fmt((performance.now() - started) / 1000, 1)} s`);

  const proxies = startProxies();
  started = performance.now();
  const complete = proxies.next((message) => message.allComplete);
  const outbounds = Array.from({ length: PROXIES }, (_, i) => outboundsOf(i));
  proxies.send({ start: { address: zone.dp, token: '', first: 0, count: PROXIES, perChannel: PER_CHANNEL, outboundsOf: outbounds } });
  const timedOut = sleep(120_000).then(() => 'timeout');
  if ((await Promise.race([complete, timedOut])) === 'timeout') {
    throw new Error(`not every proxy got clusters, endpoints and listeners within 2 minutes: ${JSON.stringify(proxies.progress())}`);
  }
  console.log(`${PROXIES} simulated proxies (${PER_CHANNEL} streams a connection) have clusters, endpoints and listeners after ${fmt((performance.now() - started) / 1000, 1)} s`);
  return { zone, proxies };
}

async function soak(zone, proxies) {
  const recorder = new Recorder();
  const samples = [];
  const begin = performance.now();
  const elapsed = () => performance.now() - begin;
  const zoneGone = () => zone.exit !== undefined;
  const done = () => elapsed() >= DURATION_MS || zoneGone();

  const mix = operations(0);
  const readShare = mix.filter((op) => op.read).reduce((sum, op) => sum + op.weight, 0) / mix.reduce((sum, op) => sum + op.weight, 0);
  await proxies.responsesSinceLast(); // counting starts now
  const logFrom = zone.lines.length;
  const before = usage(zone.pid);
  console.log(
    `\nsoak: ${MINUTES} min, ${CLIENTS} clients, ${RATE} requests/s in all (${fmt(100 * readShare)}% reads), a line every ${INTERVAL_MS / 1000} s; RSS ${fmt(before.rss)} MB, CPU ${fmt(before.cpu, 1)} s at the start`,
  );
  console.log(row(INTERVAL_COLUMNS.map(([title]) => title), intervalWidths));

  const sampler = setInterval(() => {
    const { rss } = usage(zone.pid);
    if (Number.isFinite(rss)) samples.push({ at: elapsed(), rss });
  }, SAMPLE_MS);
  const clients = Array.from({ length: CLIENTS }, (_, client) => runClient(zone.url, client, recorder, done));

  let lastCpu = before.cpu;
  let lastAt = 0;
  let xdsTotal = 0;
  while (!done()) {
    await Promise.race([sleep(Math.min(INTERVAL_MS, DURATION_MS - elapsed())), zone.exited]);
    if (zoneGone()) break;
    const now = elapsed();
    const { rss, cpu } = usage(zone.pid);
    const [online, xds, memory] = await Promise.all([onlineProxies(zone.url), proxies.responsesSinceLast(), memoryParts(zone.metrics)]);
    xdsTotal += xds.responses;
    printInterval({ elapsed: now, seconds: (now - lastAt) / 1000, stats: recorder.takeInterval(), rss, memory, cpu, cpuDelta: cpu - lastCpu, online, xds });
    lastCpu = cpu;
    lastAt = now;
  }
  await Promise.all(clients);
  clearInterval(sampler);
  const seconds = elapsed() / 1000;

  if (zoneGone()) {
    console.log(`\nTHE CONTROL PLANE DIED after ${clock(elapsed())} (${JSON.stringify(zone.exit)}); its last log lines:`);
    for (const line of zone.lines.slice(-30)) console.log(`  ${line}`);
  }
  printSummary(recorder);
  const after = zoneGone() ? undefined : usage(zone.pid);
  if (after) {
    const online = await onlineProxies(zone.url);
    console.log(`CPU of the control plane: ${fmt(after.cpu - before.cpu, 1)} s over ${fmt(seconds)} s (${fmt((100 * (after.cpu - before.cpu)) / seconds)}% of one core)`);
    console.log(`proxies online at the end: ${online} of ${PROXIES}; xDS responses received: ${fmt(xdsTotal)} (${fmt(xdsTotal / seconds, 1)}/s)`);
  }
  if (samples.length >= 3) memoryVerdict(samples, elapsed());
  return { failed: recorder.failureCount > 0, logged: zone.lines.slice(logFrom) };
}

async function main() {
  console.log(`soak of the zone control plane; node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const workDir = mkdtempSync(join(tmpdir(), 'mesh-bench-soak-'));
  let zone;
  let proxies;
  try {
    ({ zone, proxies } = await setup(workDir));
  } catch (error) {
    console.error(`setup failed: ${error.message}`);
    console.error(`work directory kept: ${workDir}`);
    process.exit(1);
  }
  const { failed, logged } = await soak(zone, proxies);
  await proxies.stop();
  agent.destroy();
  if (!zone.exit) {
    zone.child.kill('SIGTERM');
    const exit = await Promise.race([zone.exited, sleep(30_000).then(() => 'no exit within 30 s of SIGTERM')]);
    if (exit.code !== 0) console.log(`control plane on SIGTERM: ${JSON.stringify(exit)}`);
  }
  console.log(`\ncontrol plane log during the soak (warnings and errors): ${logged.length} lines${logged.length > 0 ? ', the first ones:' : ''}`);
  for (const line of logged.slice(0, 10)) console.log(`  ${line.slice(0, 500)}`);
  console.log(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on the machine moves latency and CPU figures)`);
  // The work directory (database, zone.log) is worth a look when anything went wrong.
  if (failed || logged.length > 0 || zone.exit?.code !== 0) console.log(`work directory kept: ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}

await main();
// The timeouts raced against setup and shutdown would keep the process up for a while.
process.exit(0);

#!/usr/bin/env node
// REST API benchmark of the built zone control plane against two baselines that return the same
// bytes: a plain node:http server (what one Node process can serve at best) and a bare Express 5
// app (the framework the API is built on, with nothing behind the route); its writes also against
// a bare Express 5 app that parses the same bodies and stores them in SQLite. Prints figures and
// the targets next to them; asserts nothing. See bench/README.md.
//
// Knobs (env): BENCH_DURATION seconds per measurement (5), BENCH_WARMUP seconds (1),
// BENCH_CONNECTIONS for the concurrent scenarios (10), BENCH_CPU_PROF=<dir> to run the control
// plane under `node --cpu-prof` and write its profiles there on exit, BENCH_ONLY=get,first,deep,
// mesh-insight,service-insights,overview,overview-deep,global-insight,policies,off-page-put,
// first-after-change,update,create,concurrent-writes to run only some scenarios (with a profile, to see one
// request's costs alone); MESH_RUNTIME_HEAP_GROWTH_PERCENT
// is passed on to the control plane.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { children, freePort, quantile } from './common.mjs';
import { dataplane, dataplaneInsightRows, DATAPLANES, DP_PATH, dpName, MESH, policy, POLICIES, POLICY_KINDS } from './zone-data.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ZONE_BINARY = join(root, 'apps', 'zone', 'dist', 'main.js');
const BASELINE = join(root, 'bench', 'baseline-server.mjs');
const WRITE_BASELINE = join(root, 'bench', 'write-baseline-server.mjs');

const LOAD_CONCURRENCY = 8;
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;

const DEEP_OFFSET = DATAPLANES - 200;
// The GETs measured; the control plane's answers to them are what the baselines serve.
const GET_PATHS = {
  get: `${DP_PATH}/${dpName(DATAPLANES / 2)}`,
  first: `${DP_PATH}?size=100&offset=0`,
  deep: `${DP_PATH}?size=100&offset=${DEEP_OFFSET}`,
  'mesh-insight': `/mesh-insights/${MESH}`,
  'service-insights': `/meshes/${MESH}/service-insights?size=100`,
  overview: `/meshes/${MESH}/dataplanes+insights?size=100`,
  'overview-deep': `/meshes/${MESH}/dataplanes+insights?size=100&offset=${DEEP_OFFSET}`,
  'global-insight': '/global-insight',
  // Inspection: the policies matched to one proxy.
  policies: `${DP_PATH}/${dpName(DATAPLANES / 2)}/policies`,
};
// `/global-insight` stamps each answer with the time it was made (`createdAt`); the rest must match.
const GLOBAL_INSIGHT_TIME = /"createdAt":"[^"]*"/;

// Cached GETs against plain node:http sending the same bytes; sequential writes against Express
// storing into SQLite; a page assembled again after a write against Express.
const TARGETS = { vsNodeHttp: 0.9, vsExpress: 0.9, deepVsFirst: 0.9, writesVsExpressSqlite: 0.9, concurrentVsSequential: 2.5, rssMb: 300 };
/** Writers in flight in the `concurrent-writes` scenario. */
const CONCURRENT_WRITERS = 16;
/** The servers of the write scenarios: the control plane, Express answering alone, Express storing in SQLite. */
const WRITE_SERVERS = ['control plane', 'express', 'express+sqlite'];

/** Writes the DataplaneInsights into the (stopped) control plane's SQLite file, in one transaction. */
async function seedInsights(workDir) {
  const { SqliteResourceStore } = await import(pathToFileURL(join(root, 'packages', 'store-sqlite', 'dist', 'index.js')).href);
  const store = new SqliteResourceStore({ path: join(workDir, 'mesh.db') });
  try {
    return (await store.createMissing(dataplaneInsightRows())).length;
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Processes



/** Spawns `node args…`, keeps the tail of its output for error messages. */
function spawnNode(args, env) {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let tail = '';
  const keep = (chunk) => (tail = (tail + chunk).slice(-8_000));
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise((done) => child.once('exit', (code) => (children.delete(child), done(code))));
  return {
    child,
    output: () => tail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

async function startControlPlane(workDir) {
  const ports = { http: await freePort(), https: await freePort(), diagnostics: await freePort() };
  const flags = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
  const proc = spawnNode([...flags, ZONE_BINARY], {
    MESH_GENERAL_WORK_DIR: workDir,
    MESH_API_SERVER_HTTP_PORT: String(ports.http),
    MESH_API_SERVER_HTTPS_PORT: String(ports.https),
    MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
    MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
    MESH_DP_SERVER_PORT: '0',
    MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
    // The heap setting under test, when one is given (docs/architecture.md, Memory).
    ...(process.env.MESH_RUNTIME_HEAP_GROWTH_PERCENT ? { MESH_RUNTIME_HEAP_GROWTH_PERCENT: process.env.MESH_RUNTIME_HEAP_GROWTH_PERCENT } : {}),
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`control plane exited with ${proc.child.exitCode}:\n${proc.output()}`);
    const ready = await fetch(`http://127.0.0.1:${ports.diagnostics}/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`control plane did not become ready:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ...proc, url: `http://127.0.0.1:${ports.http}`, pid: proc.child.pid };
}

/** A baseline server: `file` holds the captured responses, or for express+sqlite is its database. */
async function startBaseline(flavour, file) {
  const proc = spawnNode(flavour === 'express+sqlite' ? [WRITE_BASELINE, file] : [BASELINE, flavour, file], {});
  const port = await new Promise((found, reject) => {
    proc.child.stdout.on('data', () => {
      const match = /listening (\d+)/.exec(proc.output());
      if (match) found(Number(match[1]));
    });
    proc.child.once('exit', (code) => reject(new Error(`${flavour} baseline exited with ${code}:\n${proc.output()}`)));
  });
  return { ...proc, url: `http://127.0.0.1:${port}`, pid: proc.child.pid };
}

/** CPU time (user + system) a process has used, in seconds, from /proc (10 ms ticks). */
function cpuSeconds(pid) {
  // Fields after the `(comm)`, which may itself hold spaces: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Waits until a process stays nearly idle for half a second (background work after a load). */
async function settle(pid, limitSeconds = 15) {
  const started = performance.now();
  for (;;) {
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 500));
    if (cpuSeconds(pid) - before <= 0.02 || performance.now() - started > limitSeconds * 1000) break;
  }
  return (performance.now() - started) / 1000;
}

/** Resident and peak resident memory of a process, in MB, from /proc. */
function memoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

// ---------------------------------------------------------------------------------------------
// Data

const agent = new Agent({ keepAlive: true, maxSockets: LOAD_CONCURRENCY });

function call(base, method, path, body) {
  return new Promise((done, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${base}${path}`, { method, agent, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => done({ status: res.statusCode, body: text }));
    });
    req.on('error', fail);
    req.end(payload);
  });
}

/** PUTs every [path, body] with a few requests in flight; returns requests per second. */
async function putAll(base, items) {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < items.length) {
      const [path, body] = items[next++];
      const res = await call(base, 'PUT', path, body);
      if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${res.body}`);
    }
  };
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
  return items.length / ((performance.now() - started) / 1000);
}

// ---------------------------------------------------------------------------------------------
// Measurement

/**
 * The measured requests. `requests()` is called once per server (warm-up and run share it), so
 * each server sees the same sequence of PUTs.
 */
function scenarios(captured) {
  const get = (key) => ({ key, connections: CONNECTIONS, requests: () => [{ method: 'GET', path: GET_PATHS[key] }], expectBody: captured[GET_PATHS[key]] });
  return [
    { title: 'GET one dataplane', ...get('get') },
    { title: 'GET list page, offset=0', ...get('first') },
    { title: `GET list page, offset=${DEEP_OFFSET}`, ...get('deep') },
    // Insights before the PUTs: creating dataplanes changes them (and the captured bytes).
    { title: `GET ${GET_PATHS['mesh-insight']}`, ...get('mesh-insight') },
    { title: `GET ${GET_PATHS['service-insights']}`, ...get('service-insights') },
    { title: `GET ${GET_PATHS.overview}`, ...get('overview') },
    { title: `GET ${GET_PATHS['overview-deep']}`, ...get('overview-deep') },
    { title: `GET ${GET_PATHS['global-insight']} (createdAt aside)`, ...get('global-insight'), normalize: (body) => body.replace(GLOBAL_INSIGHT_TIME, '') },
    { title: `GET ${GET_PATHS.policies}`, ...get('policies') },
    // A page assembled again after a change: every write of a kind retires its cached pages, so a
    // PUT of the last dataplane (off the first page, whose bytes stay the same) before each GET
    // makes every GET assemble the page. The GET's own CPU is the pair's less the PUT's alone.
    {
      key: 'off-page-put',
      title: `PUT update of ${dpName(DATAPLANES - 1)} (off the first page), sequential`,
      connections: 1,
      expectBody: '{}',
      requests: () => putSequence(offPageDataplane),
    },
    {
      key: 'first-after-change',
      title: `GET list page, offset=0, each after that PUT (sequential pairs)`,
      connections: 1,
      expectBody: captured[GET_PATHS.first],
      normalize: (body) => (body === '{}' ? captured[GET_PATHS.first] : body),
      requests: () => [...putSequence(offPageDataplane), { method: 'GET', path: GET_PATHS.first }],
    },
    {
      key: 'update',
      title: 'PUT update, sequential',
      connections: 1,
      servers: WRITE_SERVERS,
      expectBody: '{}',
      // Walks the loaded dataplanes, each pass with new addresses, so every PUT is a real change.
      requests: () =>
        putSequence((c) => {
          const i = c % DATAPLANES;
          return dataplane(i, `10.${1 + (Math.floor(c / DATAPLANES) % 250)}.${i >> 8}.${i & 255}`);
        }),
    },
    {
      key: 'create',
      title: 'PUT create, sequential',
      connections: 1,
      servers: WRITE_SERVERS,
      expectBody: '{}',
      requests: () => putSequence((c) => ({ ...dataplane(c), name: `new-${dpName(c)}` })),
    },
    {
      // Every other PUT creates a dataplane, the others update the loaded ones with addresses the
      // sequential updates never gave them, so every PUT is a real change.
      key: 'concurrent-writes',
      title: `PUT creates and updates, ${CONCURRENT_WRITERS} in flight`,
      connections: CONCURRENT_WRITERS,
      servers: WRITE_SERVERS,
      expectBody: '{}',
      requests: () =>
        putSequence((c) => {
          if (c % 2 === 1) return { ...dataplane(c), name: `many-${dpName(c)}` };
          const i = (c / 2) % DATAPLANES;
          return dataplane(i, `11.${Math.floor(c / 2 / DATAPLANES) % 256}.${i >> 8}.${i & 255}`);
        }),
    },
  ];
}

/** The last dataplane with a new address at each call. */
const offPageDataplane = (c) => dataplane(DATAPLANES - 1, `10.${1 + (c % 250)}.${(DATAPLANES - 1) >> 8}.${(DATAPLANES - 1) & 255}`);

function putSequence(bodyOf) {
  let count = 0;
  return [
    {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req) => {
        const body = bodyOf(count++);
        return { ...req, path: `${DP_PATH}/${body.name}`, body: JSON.stringify(body) };
      },
    },
  ];
}


/** One autocannon run; latencies come from the `response` event because autocannon's own histogram counts whole milliseconds. */
async function run(server, scenario, requests, duration, record) {
  const latencies = [];
  const expected = scenario.normalize?.(scenario.expectBody);
  const cpuBefore = cpuSeconds(server.pid);
  const instance = autocannon({
    url: server.url,
    connections: scenario.connections,
    duration,
    requests,
    // Counted as mismatches: every answer must be the captured bytes (`normalize`d, where given).
    verifyBody: scenario.normalize ? (body) => scenario.normalize(body) === expected : (body) => body === scenario.expectBody,
  });
  if (record) instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const started = performance.now();
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const sorted = Float64Array.from(latencies).sort();
  return {
    rps: result.requests.total / seconds,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    bad: result.non2xx + result.errors + result.timeouts + result.mismatches,
    // The server's own CPU per request does not depend on how much CPU the load generator took.
    cpuUs: (cpu / result.requests.total) * 1e6,
    cpuShare: cpu / seconds,
  };
}

async function measure(server, scenario, everyServer) {
  // A server just measured may still be collecting garbage; on two cores that would slow the next.
  await Promise.all(everyServer.map((other) => settle(other.pid, 5)));
  const requests = scenario.requests();
  if (WARMUP > 0) await run(server, scenario, requests, WARMUP, false);
  return run(server, scenario, requests, DURATION, true);
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');
const verdict = (value, target) => (value >= target ? 'ok' : `MISSED by ${fmt((1 - value / target) * 100)}%`);
const pad = (text, width) => String(text).padEnd(width);
const padL = (text, width) => String(text).padStart(width);

function printScenario(scenario, results) {
  console.log(`\n${scenario.title} (${scenario.connections} connection${scenario.connections > 1 ? 's' : ''}, ${DURATION}s)`);
  console.log(`  ${pad('server', 15)}${padL('req/s', 9)}${padL('p50 ms', 9)}${padL('p99 ms', 9)}${padL('CPU µs/req', 12)}${padL('CPU', 6)}${padL('failed', 8)}`);
  for (const [name, r] of Object.entries(results)) {
    const cells = [fmt(r.rps), fmt(r.p50, 2), fmt(r.p99, 2)].map((c) => padL(c, 9)).join('');
    console.log(`  ${pad(name, 15)}${cells}${padL(fmt(r.cpuUs), 12)}${padL(`${fmt(r.cpuShare * 100)}%`, 6)}${padL(r.bad, 8)}`);
  }
  const cp = results['control plane'];
  const ratio = (baseline) => `${fmt(cp.rps / results[baseline].rps, 2)} (CPU/req: ${fmt(results[baseline].cpuUs / cp.cpuUs, 2)})`;
  const ratios = Object.keys(results)
    .filter((name) => name !== 'control plane')
    .map((name) => `/ ${name} ${ratio(name)}`)
    .join(', ');
  const vsNodeHttp = results['node:http'] ? cp.rps / results['node:http'].rps : undefined;
  const target = WRITE_SCENARIOS.has(scenario.key)
    ? `target >= ${TARGETS.writesVsExpressSqlite} of express+sqlite: ${verdict(cp.rps / results['express+sqlite'].rps, TARGETS.writesVsExpressSqlite)}`
    : scenario.key === 'concurrent-writes'
      ? 'against the sequential writes below'
      : scenario.key === 'off-page-put' || scenario.key === 'first-after-change'
        ? 'the GET alone is below'
        : `target >= ${TARGETS.vsNodeHttp} of node:http: ${verdict(vsNodeHttp, TARGETS.vsNodeHttp)}`;
  console.log(`  control plane ${ratios}; ${target}`);
  if (scenario.key in GET_PATHS && vsNodeHttp < TARGETS.vsNodeHttp) {
    // Where the time goes: bench/README.md breaks a cached GET's own CPU down (request log, metrics, routing).
    console.log(`  the control plane spends ${fmt(cp.cpuUs - results['node:http'].cpuUs)} µs of CPU per request more than node:http sending the same bytes`);
  }
}

/** The sequential write scenarios, measured against the Express + SQLite baseline. */
const WRITE_SCENARIOS = new Set(['update', 'create']);

/** The concurrent writes against the sequential ones of the same run, and against the baseline with as many writers. */
function printConcurrentWrites(all) {
  const concurrent = all['concurrent-writes'];
  const sequential = ['update', 'create'].filter((key) => all[key]);
  if (sequential.length === 0) {
    console.log(`\n${CONCURRENT_WRITERS} writers against sequential writes: run update and create too (BENCH_ONLY) for the ratio`);
    return;
  }
  // Half creates, half updates: the sequential rate of the same mix is the harmonic mean of the two.
  const sequentialRate = (name) => sequential.length / sequential.reduce((sum, key) => sum + 1 / all[key][name].rps, 0);
  const line = (name) => `${name} ${fmt(concurrent[name].rps)}/s, ${fmt(concurrent[name].rps / sequentialRate(name), 2)}x its ${fmt(sequentialRate(name))}/s sequential`;
  const cpRatio = concurrent['control plane'].rps / sequentialRate('control plane');
  console.log(`\n${CONCURRENT_WRITERS} writers against one (${sequential.join(' and ')} in the same run): ${line('control plane')}; target >= ${TARGETS.concurrentVsSequential}x: ${verdict(cpRatio, TARGETS.concurrentVsSequential)}`);
  console.log(`  ${line('express+sqlite')}; control plane / express+sqlite with ${CONCURRENT_WRITERS} writers ${fmt(concurrent['control plane'].rps / concurrent['express+sqlite'].rps, 2)} (CPU/req: ${fmt(concurrent['express+sqlite'].cpuUs / concurrent['control plane'].cpuUs, 2)})`);
}

// ---------------------------------------------------------------------------------------------

async function main() {
  if (!existsSync(ZONE_BINARY)) throw new Error(`${ZONE_BINARY} is missing: build first (npm run setup)`);
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('load generator (autocannon) runs in this process; each server is its own process.');

  const workDir = mkdtempSync(join(tmpdir(), 'mesh-bench-'));
  const servers = {};
  try {
    servers['control plane'] = await startControlPlane(workDir);
    let cp = servers['control plane'];

    // Load through the API, as an operator would.
    const dpItems = Array.from({ length: DATAPLANES }, (_, i) => [`${DP_PATH}/${dpName(i)}`, dataplane(i)]);
    const dpRate = await putAll(cp.url, dpItems);
    const policyItems = Array.from({ length: POLICIES }, (_, i) => {
      const { path, body } = policy(i);
      return [path, body];
    });
    const policyRate = await putAll(cp.url, policyItems);
    console.log(`\nloaded ${fmt(DATAPLANES)} dataplanes at ${fmt(dpRate)}/s and ${fmt(POLICIES)} policies (${POLICY_KINDS.map((k) => k.type).join(', ')}) at ${fmt(policyRate)}/s, ${LOAD_CONCURRENCY} requests in flight`);
    const settled = await settle(cp.pid);
    const loaded = memoryMb(cp.pid);
    console.log(`control plane idle ${fmt(settled, 1)}s after loading; RSS ${fmt(loaded.rss)} MB (target < ${TARGETS.rssMb} MB: ${loaded.rss < TARGETS.rssMb ? 'ok' : `MISSED by ${fmt((loaded.rss / TARGETS.rssMb - 1) * 100)}%`})`);

    // Proxies' insights are written by the control plane itself, never through the API: stop it,
    // write them into its SQLite file, start it again on the same work directory.
    agent.destroy();
    const exitCode = await cp.stop();
    if (exitCode !== 0) throw new Error(`control plane exited with ${exitCode} on SIGTERM:\n${cp.output()}`);
    delete servers['control plane'];
    const seeded = await seedInsights(workDir);
    const restartedAt = performance.now();
    servers['control plane'] = cp = await startControlPlane(workDir);
    const ready = (performance.now() - restartedAt) / 1000;
    const idle = await settle(cp.pid);
    const restarted = memoryMb(cp.pid);
    console.log(
      `restarted with ${fmt(seeded)} DataplaneInsights written into its store file (half the dataplanes online, a quarter disconnected): ready in ${fmt(ready, 1)}s, idle ${fmt(idle, 1)}s later; RSS ${fmt(restarted.rss)} MB`,
    );

    // The baselines serve exactly what the control plane answered.
    const captured = {};
    for (const path of Object.values(GET_PATHS)) {
      const res = await call(cp.url, 'GET', path);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body}`);
      captured[path] = res.body;
    }
    agent.destroy();
    const responsesFile = join(workDir, 'bench-responses.json');
    writeFileSync(responsesFile, JSON.stringify({ get: captured, dataplaneNames: Array.from({ length: DATAPLANES }, (_, i) => dpName(i)) }));
    servers['node:http'] = await startBaseline('node', responsesFile);
    servers.express = await startBaseline('express', responsesFile);
    servers['express+sqlite'] = await startBaseline('express+sqlite', join(workDir, 'express-sqlite.db'));
    const baselineRate = await putAll(servers['express+sqlite'].url, dpItems);
    agent.destroy();
    console.log(`express+sqlite loaded the same ${fmt(DATAPLANES)} dataplanes at ${fmt(baselineRate)}/s (control plane: ${fmt(dpRate)}/s), ${LOAD_CONCURRENCY} requests in flight`);

    // Servers take turns within a scenario, so drift on the machine hits all three alike.
    const all = {};
    for (const scenario of scenarios(captured)) {
      if (ONLY && !ONLY.has(scenario.key)) continue;
      const results = {};
      for (const name of scenario.servers ?? ['control plane', 'node:http', 'express']) results[name] = await measure(servers[name], scenario, Object.values(servers));
      all[scenario.key] = results;
      printScenario(scenario, results);
    }

    if (all['concurrent-writes']) printConcurrentWrites(all);

    if (all['off-page-put'] && all['first-after-change']) {
      // Each pair is two requests: its CPU is twice the CPU per request measured.
      const getCpu = (name) => 2 * all['first-after-change'][name].cpuUs - all['off-page-put'][name].cpuUs;
      const cpGet = getCpu('control plane');
      const vsExpress = getCpu('express') / cpGet;
      console.log(
        `\nGET list page assembled again after a change (a pair's CPU less the PUT's): control plane ${fmt(cpGet)} µs, node:http ${fmt(getCpu('node:http'))} µs, express ${fmt(getCpu('express'))} µs; express / control plane ${fmt(vsExpress, 2)}; target >= ${TARGETS.vsExpress} of express: ${verdict(vsExpress, TARGETS.vsExpress)}`,
      );
    }

    for (const [first, deep, what] of [
      ['first', 'deep', ''],
      ['overview', 'overview-deep', ' of dataplanes+insights'],
    ]) {
      if (!all[deep] || !all[first]) continue;
      const ratio = (name) => all[deep][name].rps / all[first][name].rps;
      const cpRatio = ratio('control plane');
      const byCpu = all[first]['control plane'].cpuUs / all[deep]['control plane'].cpuUs;
      console.log(`\ndeep page / first page${what}, control plane: ${fmt(cpRatio, 2)} (CPU/req: ${fmt(byCpu, 2)}); target ~1, >= ${TARGETS.deepVsFirst}: ${verdict(cpRatio, TARGETS.deepVsFirst)}`);
      console.log(`  same bytes from the baselines, for the noise: node:http ${fmt(ratio('node:http'), 2)}, express ${fmt(ratio('express'), 2)}`);
    }
    const end = memoryMb(cp.pid);
    console.log(`control plane RSS at the end: ${fmt(end.rss)} MB, peak ${fmt(end.peak)} MB`);
    console.log(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on the machine skews req/s; CPU µs/req much less)`);
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()));
    rmSync(workDir, { recursive: true, force: true });
  }
  if (CPU_PROF_DIR) console.log(`control plane CPU profile written to ${CPU_PROF_DIR}`);
}

await main();

#!/usr/bin/env node
// Start-up benchmark: a zone control plane restarted on a SQLite file holding 10,000 dataplanes,
// 1,000 policies and 7,500 DataplaneInsights. From the spawn of each start it prints when the API
// answers (`GET /` 200), when the diagnostics' `/ready` does, and when every proxy's configuration
// is computed (the control plane's "proxy configurations ready" log line); beside them, in the same
// run, the floor: a bare node process, and one that opens the same file with better-sqlite3 and
// reads every row. A first start without the binary's code cache is printed apart, then the starts
// measured with it. Prints figures and the targets next to them; asserts nothing. See bench/README.md.
//
// Knobs (env): BENCH_STARTS starts measured (3), BENCH_CPU_PROF=<dir> to run each start under
// `node --cpu-prof` and write its profile there, BENCH_WORK_DIR=<dir> to write the work directory
// there once and start on it as it is in later runs (kept; the store file takes a while to write).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { children, freePort, sleep, zoneEnv } from './common.mjs';
import { dataplane, dataplaneInsightRows, DATAPLANES, dpName, MESH, policy, POLICIES } from './zone-data.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ZONE_BINARY = join(root, 'apps', 'zone', 'dist', 'main.js');
/** The engine's code for the binary's bundle, written by the build and by a start that finds none (docs/architecture.md, Start-up). */
const CODE_CACHE = join(root, 'apps', 'zone', 'dist', 'control-plane.cjs.code-cache');
const STARTS = Number(process.env.BENCH_STARTS ?? 3);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
const KEPT_WORK_DIR = process.env.BENCH_WORK_DIR ? resolve(process.env.BENCH_WORK_DIR) : undefined;
const TARGETS = { apiSeconds: 1, configurationsSeconds: 3 };
const CONFIGURATIONS_READY = 'proxy configurations ready';
const POLL_MS = 10;

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const seconds = (ms) => `${fmt(ms / 1000, 2)} s`;
const importDist = (pkg) => import(pathToFileURL(join(root, 'packages', pkg, 'dist', 'index.js')).href);

/** CPU time (user + system) a process has used, in seconds, from /proc (10 ms ticks); NaN once it is gone. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The status of a GET, or 0 when nothing answers. */
function status(url) {
  return new Promise((done) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', () => done(0));
    req.end();
  });
}

/** Spawns the zone binary on `workDir`; its JSON log lines are parsed as they come. */
async function spawnZone(workDir) {
  const ports = { http: await freePort(), https: await freePort(), diagnostics: await freePort() };
  const flags = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
  const spawnedAt = Date.now();
  const started = performance.now();
  const child = spawn(process.execPath, [...flags, ZONE_BINARY], {
    env: zoneEnv(workDir, ports),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const exited = new Promise((done) => child.once('exit', (code) => (children.delete(child), done(code))));
  let tail = '';
  let pending = '';
  const lines = [];
  child.stderr.setEncoding('utf8').on('data', (chunk) => (tail = (tail + chunk).slice(-8_000)));
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    tail = (tail + chunk).slice(-8_000);
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop();
    for (const line of complete) {
      try {
        lines.push(JSON.parse(line));
      } catch {}
    }
  });
  return {
    child,
    ports,
    started,
    spawnedAt,
    lines,
    output: () => tail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Milliseconds from `zone.started` until `check()` holds, polled; fails when the process exits or after 60 s. */
async function until(zone, check) {
  for (;;) {
    if (await check()) return performance.now() - zone.started;
    if (zone.child.exitCode !== null) throw new Error(`control plane exited with ${zone.child.exitCode}:\n${zone.output()}`);
    if (performance.now() - zone.started > 60_000) throw new Error(`control plane did not start in 60 s:\n${zone.output()}`);
    await sleep(POLL_MS);
  }
}

/** The work directory as a zone left it, with the zone's data written into its SQLite file. */
async function prepare(workDir) {
  // A first start makes what a running zone has: the schema, the default mesh, its keys.
  const first = await spawnZone(workDir);
  await until(first, async () => (await status(`http://127.0.0.1:${first.ports.diagnostics}/ready`)) === 200);
  if ((await first.stop()) !== 0) throw new Error(`control plane did not stop cleanly:\n${first.output()}`);

  const [{ SqliteResourceStore }, { ResourceManager }, { registerCaHooks }, { registerSigningKeyHooks }, { getKind }] = await Promise.all(
    ['store-sqlite', 'resource-manager', 'pki', 'tokens', 'model'].map(importDist),
  );
  const store = new SqliteResourceStore({ path: join(workDir, 'mesh.db') });
  try {
    // Through the write path, as the API writes them: the same defaults and the same stored form.
    const manager = new ResourceManager({ store, mode: 'standalone' });
    registerCaHooks(manager);
    registerSigningKeyHooks(manager);
    const dataplaneKind = getKind('Dataplane');
    for (let i = 0; i < DATAPLANES; i++) await manager.apply(dataplaneKind, { mesh: MESH, name: dpName(i) }, dataplane(i));
    for (let i = 0; i < POLICIES; i++) {
      const { kind, body } = policy(i);
      await manager.apply(getKind(kind.type), { mesh: MESH, name: body.name }, body);
    }
    // Insights are the control plane's own writes, not the API's.
    await store.createMissing(dataplaneInsightRows());
  } finally {
    await store.close();
  }
  return workDir;
}

/** Milliseconds from spawn to exit of `node args…`. */
function timeNode(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} failed:\n${result.stderr}`);
  return { ms: performance.now() - started, stdout: result.stdout.trim() };
}

/** One start: the times from spawn, and how the configurations were reported. */
async function measureStart(workDir) {
  const zone = await spawnZone(workDir);
  const api = `http://127.0.0.1:${zone.ports.http}`;
  const diagnostics = `http://127.0.0.1:${zone.ports.diagnostics}`;
  const apiMs = await until(zone, async () => (await status(`${api}/`)) === 200);
  const apiCpu = cpuSeconds(zone.child.pid);
  const readyMs = await until(zone, async () => (await status(`${diagnostics}/ready`)) === 200);
  // A proxy's configuration as inspection serves it: the last dataplane's, read once the API answers.
  const xdsStarted = performance.now();
  const xdsStatus = await status(`${api}/meshes/${MESH}/dataplanes/${dpName(DATAPLANES - 1)}/xds`);
  const xdsMs = performance.now() - xdsStarted;
  let configurations;
  const deadline = performance.now() + 30_000;
  while (!configurations && performance.now() < deadline) {
    configurations = zone.lines.find((line) => line.msg === CONFIGURATIONS_READY);
    if (!configurations) await sleep(50);
  }
  const result = {
    apiMs,
    apiCpu,
    readyMs,
    xdsMs,
    xdsStatus,
    configurationsMs: configurations ? configurations.time - zone.spawnedAt : undefined,
    configurations,
    cpuAfter: cpuSeconds(zone.child.pid),
  };
  if ((await zone.stop()) !== 0) throw new Error(`control plane did not stop cleanly:\n${zone.output()}`);
  return result;
}

const verdict = (ms, targetSeconds) => (ms <= targetSeconds * 1000 ? 'ok' : `MISSED by ${seconds(ms - targetSeconds * 1000)} (${fmt((ms / (targetSeconds * 1000) - 1) * 100)}%)`);

async function main() {
  if (!existsSync(ZONE_BINARY)) throw new Error(`${ZONE_BINARY} is missing: build first (npm run setup)`);
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const preparedAt = performance.now();
  const workDir = KEPT_WORK_DIR ?? mkdtempSync(join(tmpdir(), 'mesh-bench-start-'));
  const database = join(workDir, 'mesh.db');
  const reused = existsSync(database);
  if (!reused) await prepare(workDir);
  console.log(
    `store file: ${fmt(DATAPLANES)} dataplanes, ${fmt(POLICIES)} policies, DataplaneInsights for three quarters of the dataplanes; ${fmt(statSync(database).size / 1e6, 1)} MB, ${reused ? `kept from an earlier run in ${workDir}` : `written in ${seconds(performance.now() - preparedAt)}`}`,
  );
  try {
    // The floor, in the same run: node itself, and reading every row of the file with better-sqlite3.
    const betterSqlite = createRequire(join(root, 'packages', 'store-sqlite', 'package.json')).resolve('better-sqlite3');
    // Each prints what it read and its own CPU time (user + system, ms).
    const cpu = 'const u=process.cpuUsage();console.log(n,(u.user+u.system)/1000)';
    const readAll = `const D=require(${JSON.stringify(betterSqlite)});const db=new D(${JSON.stringify(database)},{readonly:true});let n=0;for(const r of db.prepare('SELECT * FROM resources').iterate())n+=r.spec.length>0;${cpu}`;
    const bare = timeNode(['-e', `const n=0;${cpu}`]);
    const read = timeNode(['-e', readAll]);
    const [rows, readCpuMs] = read.stdout.split(' ').map(Number);
    const bareCpuMs = Number(bare.stdout.split(' ')[1]);
    console.log(
      `baselines: bare node process ${seconds(bare.ms)} (CPU ${fmt(bareCpuMs / 1000, 2)} s); node opening the file with better-sqlite3 and reading all ${fmt(rows)} rows ${seconds(read.ms)} (CPU ${fmt(readCpuMs / 1000, 2)} s)`,
    );

    const describe = (result) => {
      const configurations = result.configurations
        ? `every proxy's configuration (${fmt(result.configurations.proxies)}) ready ${seconds(result.configurationsMs)}`
        : 'proxy configurations not computed ahead (no "proxy configurations ready" line)';
      return (
        `API answers ${seconds(result.apiMs)} (CPU ${fmt(result.apiCpu, 2)} s), /ready ${seconds(result.readyMs)}, ${configurations}; ` +
        `then GET .../dataplanes/${dpName(DATAPLANES - 1)}/xds ${result.xdsStatus} in ${fmt(result.xdsMs)} ms; CPU ${fmt(result.cpuAfter, 2)} s in all`
      );
    };
    // A start without the cache compiles the bundle and keeps the code cache the others start with.
    rmSync(CODE_CACHE, { force: true });
    console.log(`start without the code cache: ${describe(await measureStart(workDir))}`);
    const results = [];
    for (let i = 0; i < STARTS; i++) {
      const result = await measureStart(workDir);
      results.push(result);
      console.log(`start ${i + 1}: ${describe(result)}`);
    }
    const best = (pick) => Math.min(...results.map(pick));
    const apiMs = best((r) => r.apiMs);
    const readyMs = best((r) => r.readyMs);
    console.log(`\nbest of ${STARTS} with the code cache, from the spawn:`);
    const apiCpu = best((r) => r.apiCpu);
    console.log(`  API answers      ${seconds(apiMs)}  (target < ${TARGETS.apiSeconds} s: ${verdict(apiMs, TARGETS.apiSeconds)}); ${fmt(apiMs / read.ms, 1)}× reading the file with better-sqlite3`);
    console.log(`                   CPU ${fmt(apiCpu, 2)} s until then; ${fmt((apiCpu * 1000) / readCpuMs, 1)}× the CPU of reading the file with better-sqlite3 (busy-machine figures: judge by this one)`);
    console.log(`  /ready           ${seconds(readyMs)}`);
    if (results.every((r) => r.configurationsMs !== undefined)) {
      const configurationsMs = best((r) => r.configurationsMs);
      console.log(`  configurations   ${seconds(configurationsMs)}  (target < ${TARGETS.configurationsSeconds} s: ${verdict(configurationsMs, TARGETS.configurationsSeconds)})`);
    } else console.log(`  configurations   not computed ahead: each is computed when its proxy connects (target < ${TARGETS.configurationsSeconds} s: MISSED)`);
  } finally {
    if (!KEPT_WORK_DIR) rmSync(workDir, { recursive: true, force: true });
  }
}

await main();

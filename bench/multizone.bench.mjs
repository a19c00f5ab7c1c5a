#!/usr/bin/env node
// Zone sync on this machine: one global and three zones, each a real process on its own SQLite
// file (startTopology of packages/testing starts them). Measures, against a baseline taken in the same run
// (a write then read on one control plane):
//   - a PUT on the global until readable on every zone (median, p99 over BENCH_SAMPLES changes);
//   - a dataplane PUT on a zone until readable on the global;
//   - a zone that was down converging after BENCH_CHANGES changes on the global;
//   - the global's resident memory with 3 zones x BENCH_DATAPLANES dataplanes synced.
// Prints figures; asserts nothing. See bench/README.md.
import { startTopology } from '../packages/testing/dist/index.js';
import { sleep } from './common.mjs';
import { dataplane, inParallel, ms, percentile, put, route, rssMb, status, until } from './multizone-common.mjs';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 10_000);
const DATAPLANES = Number(process.env.BENCH_DATAPLANES ?? 5_000);
const ZONES = 3;

console.log(`zone sync: 1 global, ${ZONES} zones, ${SAMPLES} samples, ${CHANGES} changes while a zone is down, ${DATAPLANES} dataplanes a zone`);
const quiet = { MESH_LOG_LEVEL: 'warn' };
const topology = await startTopology({ zones: ZONES, globalEnv: quiet, zoneEnv: () => quiet });
const { global, zones } = topology;
process.on('exit', () => [global, ...zones].forEach((cp) => cp.pid && process.kill(cp.pid, 'SIGKILL')));
await until(async () => (await Promise.all(zones.map((z) => status(z, '/meshes/default')))).every((s) => s === 200));

// Baseline: a write then a read on the global itself.
const local = [];
for (let i = 0; i < SAMPLES; i++) {
  const t0 = performance.now();
  await put(global, `/meshes/default/traffic-routes/local-${i}`, route(`local-${i}`));
  await until(async () => (await status(global, `/meshes/default/traffic-routes/local-${i}`)) === 200);
  local.push(performance.now() - t0);
}

const down = [];
for (let i = 0; i < SAMPLES; i++) {
  const t0 = performance.now();
  await put(global, `/meshes/default/traffic-routes/down-${i}`, route(`down-${i}`));
  await Promise.all(zones.map((zone) => until(async () => (await status(zone, `/meshes/default/traffic-routes/down-${i}`)) === 200)));
  down.push(performance.now() - t0);
}

const up = [];
for (let i = 0; i < SAMPLES; i++) {
  const zone = zones[i % ZONES];
  const name = `up-${i}`;
  const t0 = performance.now();
  await put(zone, `/meshes/default/dataplanes/${name}`, dataplane(name, i));
  await until(async () => (await status(global, `/meshes/default/dataplanes/zone-${(i % ZONES) + 1}.${name}`)) === 200);
  up.push(performance.now() - t0);
}

console.log('');
console.log('| path | median | p99 | median / baseline |');
console.log('|---|---|---|---|');
console.log(`| baseline: PUT then GET on the global | ${ms(percentile(local, 50))} | ${ms(percentile(local, 99))} | 1.00 |`);
console.log(`| PUT on the global, readable on all ${ZONES} zones | ${ms(percentile(down, 50))} | ${ms(percentile(down, 99))} | ${(percentile(down, 50) / percentile(local, 50)).toFixed(2)} |`);
console.log(`| dataplane PUT on a zone, readable on the global | ${ms(percentile(up, 50))} | ${ms(percentile(up, 99))} | ${(percentile(up, 50) / percentile(local, 50)).toFixed(2)} |`);

// A zone down while the global changes, then back.
const away = zones[ZONES - 1];
await away.stop();
const t1 = performance.now();
await inParallel(CHANGES, 8, (i) => put(global, `/meshes/default/traffic-routes/away-${i}`, route(`away-${i}`, `svc-${i % 50}`)));
const writing = performance.now() - t1;
const t2 = performance.now();
await away.start();
const ready = performance.now() - t2;
await until(async () => (await status(away, `/meshes/default/traffic-routes/away-${CHANGES - 1}`)) === 200);
const routesOnGlobal = (await (await fetch(`${global.api}/meshes/default/traffic-routes?size=1`)).json()).total;
await until(async () => (await (await fetch(`${away.api}/meshes/default/traffic-routes?size=1`)).json()).total === routesOnGlobal);
const converged = performance.now() - t2;
console.log('');
console.log(`${CHANGES} changes on the global while zone-3 was down (written in ${(writing / 1000).toFixed(1)} s): zone-3 restarted and ready in ${(ready / 1000).toFixed(2)} s, converged ${(converged / 1000).toFixed(2)} s after its start (target < 5 s)`);

// Memory of the global with every zone's dataplanes synced.
const idle = rssMb(global.pid);
await Promise.all(zones.map((zone, z) => inParallel(DATAPLANES, 4, (i) => put(zone, `/meshes/default/dataplanes/dp-${i}`, dataplane(`dp-${i}`, z * DATAPLANES + i)))));
await until(async () => (await (await fetch(`${global.api}/meshes/default/dataplanes?size=1`)).json()).total >= ZONES * DATAPLANES);
await sleep(2000);
const loaded = rssMb(global.pid);
console.log(`global resident memory: ${idle.toFixed(0)} MB before, ${loaded.toFixed(0)} MB with ${ZONES} x ${DATAPLANES} dataplanes synced (${(loaded / idle).toFixed(2)} x)`);
await topology.stop();
process.exit(0);

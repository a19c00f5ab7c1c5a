#!/usr/bin/env node
// Zone sync at scale: one global and BENCH_ZONES (10) zones of BENCH_DATAPLANES (1,000) proxies
// each, every control plane a real process on its own SQLite file (startTopology of
// packages/testing). Measures:
//   - each zone's dataplanes and their insights, registered while the zone was away, reaching the
//     global after the zone's process starts (and after the global sees it online);
//   - a policy PUT on the global until readable on every zone (BENCH_SAMPLES, median and p99),
//     against a PUT then GET on the global in the same run;
//   - one zone stopped for BENCH_AWAY_SECONDS (60) while BENCH_AWAY_CHANGES (1,000) changes are
//     made on the global, from its restart (and its reconnection) until it holds them all;
//   - the global's resident memory (peak and at the end) and CPU time per phase.
// Prints figures and targets; asserts nothing. See bench/README.md, Multi-zone benchmark.
import { startTopology } from '../packages/testing/dist/index.js';
import { SqliteResourceStore } from '../packages/store-sqlite/dist/index.js';
import { join } from 'node:path';
import { sleep } from './common.mjs';
import { cpuMs, dataplane, inParallel, ms, percentile, put, route, rssMb, status, total, until } from './multizone-common.mjs';

const ZONES = Number(process.env.BENCH_ZONES ?? 10);
const DATAPLANES = Number(process.env.BENCH_DATAPLANES ?? 1_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const AWAY_SECONDS = Number(process.env.BENCH_AWAY_SECONDS ?? 60);
const AWAY_CHANGES = Number(process.env.BENCH_AWAY_CHANGES ?? 1_000);
const CPU_PROF = process.env.BENCH_CPU_PROF;
/** How often the bench asks the global whether a zone's proxies are there: often enough for the 2 s targets, seldom enough to cost the global little. */
const POLL_MS = 20;
const TARGETS = { registeredMs: 2_000, policyP99Ms: 100, rssMb: 600, catchUpMs: 2_000 };

const verdict = (value, target, unit = 'ms') => (value <= target ? `meets < ${target} ${unit}` : `MISSES < ${target} ${unit} by ${(value - target).toFixed(0)} ${unit} (${(value / target).toFixed(2)} x)`);

// A connected proxy's insight as its zone writes it: one open subscription, its responses
// acknowledged, its certificate. The API never writes insights; they go into the zone's store file.
const INSIGHT_TIME = new Date().toISOString();
const insight = (zone, i) => ({
  subscriptions: [
    {
      id: `${zone}-subscription-${i}`,
      controlPlaneInstanceId: `${zone}-cp`,
      connectTime: INSIGHT_TIME,
      status: { lastUpdateTime: INSIGHT_TIME, total: { responsesSent: '4', responsesAcknowledged: '4' }, cds: { responsesSent: '1', responsesAcknowledged: '1' }, eds: { responsesSent: '2', responsesAcknowledged: '2' }, lds: { responsesSent: '1', responsesAcknowledged: '1' } },
      version: { meshDp: { version: '2.5.0' }, envoy: { version: '1.28.0' } },
      generation: 3,
    },
  ],
  mTLS: { certificateExpirationTime: INSIGHT_TIME, lastCertificateRegeneration: INSIGHT_TIME, certificateRegenerations: 1, issuedBackend: 'ca-1', supportedBackends: ['ca-1'] },
});
const dpName = (i) => `dp-${String(i).padStart(5, '0')}`;

/**
 * Writes the insights of the (stopped) zone's proxies into its store file, and drops its cursor of
 * the global, so that its next session is a first one both ways (a full sync each way).
 */
async function seedInsights(zone) {
  const store = new SqliteResourceStore({ path: join(zone.workDir, 'mesh.db') });
  try {
    const insights = Array.from({ length: DATAPLANES }, (_, i) => ({ type: 'DataplaneInsight', mesh: 'default', name: dpName(i), spec: JSON.stringify(insight(zone.name, i)) }));
    await store.createMissing(insights);
    await store.writeBatch([], { settings: { 'sync.cursor.global': null } });
  } finally {
    await store.close();
  }
}

const zoneStatuses = async (global) => new Map((await (await fetch(`${global.api}/status/zones`)).json()).map((z) => [z.name, z.active]));

console.log(`zone sync at scale: 1 global, ${ZONES} zones x ${DATAPLANES} dataplanes, ${SAMPLES} samples, one zone away ${AWAY_SECONDS} s while ${AWAY_CHANGES} changes are made`);
const quiet = { MESH_LOG_LEVEL: 'warn' };
// With BENCH_CPU_PROF, the global and the last zone run under `node --cpu-prof`: their profiles
// are written into <dir>/global and <dir>/zone-N (one a process run) when they stop.
const profiled = new Set(['global', `zone-${ZONES}`]);
const nodeOptions = (name) => (CPU_PROF && profiled.has(name) ? ['--cpu-prof', `--cpu-prof-dir=${join(CPU_PROF, name)}`] : []);
const startedAt = performance.now();
const topology = await startTopology({ zones: ZONES, globalEnv: quiet, zoneEnv: () => quiet, nodeOptions });
const { global, zones } = topology;
process.on('exit', () => [global, ...zones].forEach((cp) => cp.pid && process.kill(cp.pid, 'SIGKILL')));
let peakRss = rssMb(global.pid);
const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(global.pid))), 100);
console.log(`topology up in ${((performance.now() - startedAt) / 1000).toFixed(1)} s; global resident memory ${rssMb(global.pid).toFixed(0)} MB`);

// Every zone registers its proxies while away from the global: its Zone disabled there, which
// refuses its session; then the zone stops, its proxies' insights go into its store file, and its
// Zone is deleted on the global (with the global's cursor of it): the zone connects as a new one.
for (const zone of zones) await put(global, `/zones/${zone.name}`, { type: 'Zone', name: zone.name, enabled: false });
await until(async () => [...(await zoneStatuses(global)).values()].every((active) => !active), 50);
const registering = performance.now();
await Promise.all(zones.map((zone, z) => inParallel(DATAPLANES, 4, (i) => put(zone, `/meshes/default/dataplanes/${dpName(i)}`, dataplane(dpName(i), z * DATAPLANES + i)))));
console.log(`${ZONES} x ${DATAPLANES} dataplanes registered on their zones in ${((performance.now() - registering) / 1000).toFixed(1)} s`);
await Promise.all(zones.map((zone) => zone.stop()));
for (const zone of zones) await seedInsights(zone);
for (const zone of zones) {
  const res = await fetch(`${global.api}/zones/${zone.name}`, { method: 'DELETE' });
  if (!res.ok) throw new Error(`DELETE /zones/${zone.name}: ${res.status} ${await res.text()}`);
}

const lastInsight = async (zone) => {
  const res = await fetch(`${global.api}/meshes/default/dataplanes+insights/${zone.name}.${dpName(DATAPLANES - 1)}`);
  return res.ok && (await res.json()).dataplaneInsight?.subscriptions?.length > 0;
};
const connecting = [];
for (const [z, zone] of zones.entries()) {
  const cpu0 = cpuMs(global.pid);
  const t0 = performance.now();
  const starting = zone.start();
  let online;
  let dataplanes;
  await Promise.all([
    until(async () => (await zoneStatuses(global)).get(zone.name) === true, POLL_MS).then(() => (online = performance.now() - t0)),
    until(async () => (await total(global, '/meshes/default/dataplanes')) >= (z + 1) * DATAPLANES, POLL_MS).then(() => (dataplanes = performance.now() - t0)),
  ]);
  await until(() => lastInsight(zone), POLL_MS);
  const insights = performance.now() - t0;
  await starting;
  connecting.push({ online, dataplanes, insights, cpu: cpuMs(global.pid) - cpu0 });
}
console.log('');
console.log(`| zone connecting with ${DATAPLANES} dataplanes (and insights) | median | max | target |`);
console.log('|---|---|---|---|');
const row = (what, values) => console.log(`| ${what} | ${ms(percentile(values, 50))} | ${ms(Math.max(...values))} | |`);
row('process start until the global sees it online', connecting.map((c) => c.online));
row('process start until the global has its dataplanes', connecting.map((c) => c.dataplanes));
row('process start until the global has their insights too', connecting.map((c) => c.insights));
row('online until the global has dataplanes and insights', connecting.map((c) => c.insights - c.online));
row("the global's CPU time over one zone's connection", connecting.map((c) => c.cpu));
const slowest = Math.max(...connecting.map((c) => c.insights));
const slowestSync = Math.max(...connecting.map((c) => c.insights - c.online));
console.log(`slowest zone: ${ms(slowest)} from its process start: ${verdict(slowest, TARGETS.registeredMs)}; ${ms(slowestSync)} from online: ${verdict(slowestSync, TARGETS.registeredMs)}`);

// A policy made on the global, readable on every zone, against a PUT then GET on the global.
const local = [];
for (let i = 0; i < SAMPLES; i++) {
  const t0 = performance.now();
  await put(global, `/meshes/default/traffic-routes/local-${i}`, route(`local-${i}`));
  await until(async () => (await status(global, `/meshes/default/traffic-routes/local-${i}`)) === 200);
  local.push(performance.now() - t0);
}
const down = [];
const downCpu0 = cpuMs(global.pid);
for (let i = 0; i < SAMPLES; i++) {
  const t0 = performance.now();
  await put(global, `/meshes/default/traffic-routes/down-${i}`, route(`down-${i}`));
  await Promise.all(zones.map((zone) => until(async () => (await status(zone, `/meshes/default/traffic-routes/down-${i}`)) === 200)));
  down.push(performance.now() - t0);
}
const downCpu = (cpuMs(global.pid) - downCpu0) / SAMPLES;
console.log('');
console.log('| path | median | p99 | median / baseline | target |');
console.log('|---|---|---|---|---|');
console.log(`| baseline: PUT then GET on the global | ${ms(percentile(local, 50))} | ${ms(percentile(local, 99))} | 1.00 | |`);
console.log(`| PUT on the global, readable on all ${ZONES} zones | ${ms(percentile(down, 50))} | ${ms(percentile(down, 99))} | ${(percentile(down, 50) / percentile(local, 50)).toFixed(2)} | ${verdict(percentile(down, 99), TARGETS.policyP99Ms)} |`);
console.log(`the global's CPU time per policy written and sent to ${ZONES} zones: ${downCpu.toFixed(1)} ms (its PUT included; the bench polls the zones, not the global)`);

// One zone away while the global changes, then back.
const away = zones[ZONES - 1];
await away.stop();
const stoppedAt = performance.now();
const awayCpu0 = cpuMs(global.pid);
await inParallel(AWAY_CHANGES, 8, (i) => put(global, `/meshes/default/traffic-routes/away-${i}`, route(`away-${i}`, `svc-${i % 50}`)));
const writing = performance.now() - stoppedAt;
const routesOnGlobal = await total(global, '/meshes/default/traffic-routes');
await sleep(Math.max(0, AWAY_SECONDS * 1000 - writing));
const restartCpu0 = cpuMs(global.pid);
const t2 = performance.now();
await away.start();
const reconnected = performance.now() - t2;
await until(async () => (await total(away, '/meshes/default/traffic-routes')) === routesOnGlobal, POLL_MS);
const caughtUp = performance.now() - t2;
console.log('');
console.log(`${away.name} away ${((t2 - stoppedAt) / 1000).toFixed(0)} s while ${AWAY_CHANGES} changes were made on the global (written in ${(writing / 1000).toFixed(1)} s, the global's CPU ${((restartCpu0 - awayCpu0) / AWAY_CHANGES).toFixed(2)} ms a change):`);
console.log(`  restarted and reconnected in ${ms(reconnected)} (its /ready, polled every 100 ms); held all ${routesOnGlobal} routes ${ms(caughtUp)} after its restart, ${ms(caughtUp - reconnected)} after its reconnection: ${verdict(caughtUp, TARGETS.catchUpMs)}`);
console.log(`  the global's CPU time over the catch-up: ${cpuMs(global.pid) - restartCpu0} ms`);

clearInterval(sampler);
const endRss = rssMb(global.pid);
peakRss = Math.max(peakRss, endRss);
console.log('');
console.log(`global resident memory with ${ZONES} zones x ${DATAPLANES} dataplanes: peak ${peakRss.toFixed(0)} MB, ${endRss.toFixed(0)} MB at the end: ${verdict(peakRss, TARGETS.rssMb, 'MB')}`);
await topology.stop();
process.exit(0);

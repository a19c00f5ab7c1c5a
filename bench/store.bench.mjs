#!/usr/bin/env node
// The two stores side by side, in one run, through the real zone binary: the embedded SQLite
// file and PostgreSQL (a private server started here). Write throughput (sequential PUT), a
// single GET, a list page, and for PostgreSQL the propagation of a change from one instance to
// another (PUT on one, readable on the other). Prints figures; asserts nothing. See bench/README.md.
//
// Knobs (env): BENCH_DURATION seconds per measurement (3), BENCH_SAMPLES propagation samples (200).
import autocannon from 'autocannon';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { quantile, startZone } from './common.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 3);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const SEEDED = 1_000;

const { startPostgresServer } = await import(pathToFileURL(join(root, 'packages', 'store-postgres', 'dist', 'testing', 'index.js')).href);

const route = (name) => ({
  type: 'TrafficRoute',
  mesh: 'default',
  name,
  sources: [{ match: { 'mesh.io/service': '*' } }],
  destinations: [{ match: { 'mesh.io/service': name } }],
  conf: { destination: { 'mesh.io/service': '*' } },
});
const put = (url, name) => fetch(`${url}/meshes/default/traffic-routes/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(route(name)) });

async function measure(url, connections, requests) {
  const result = await autocannon({ url, connections, duration: DURATION, requests });
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx + result.errors };
}

let created = 0;
async function scenarios(label, url) {
  for (let i = 0; i < SEEDED; i++) await put(url, `seed-${i}`);
  const write = await measure(url, 1, [
    {
      method: 'PUT',
      setupRequest: (req) => {
        const name = `w-${label}-${created++}`;
        return { ...req, path: `/meshes/default/traffic-routes/${name}`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(route(name)) };
      },
    },
  ]);
  const one = await measure(url, 10, [{ method: 'GET', path: '/meshes/default/traffic-routes/seed-500' }]);
  const page = await measure(url, 10, [{ method: 'GET', path: '/meshes/default/traffic-routes?size=100&offset=0' }]);
  return { write, one, page };
}


async function propagation(from, to) {
  const times = [];
  for (let i = 0; i < SAMPLES; i++) {
    const name = `p-${i}`;
    const started = performance.now();
    await put(from.url, name);
    for (;;) {
      if ((await fetch(`${to.url}/meshes/default/traffic-routes/${name}`)).status === 200) break;
    }
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { median: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

const row = (name, figures) =>
  `  ${name.padEnd(10)} ${figures.write.rps.toFixed(0).padStart(8)}/s ${figures.one.rps.toFixed(0).padStart(10)}/s (p99 ${figures.one.p99} ms) ${figures.page.rps.toFixed(0).padStart(10)}/s (p99 ${figures.page.p99} ms)`;

const sqlite = await startZone({});
const sqliteFigures = await scenarios('sqlite', sqlite.url);
sqlite.child.kill('SIGTERM');

const pg = await startPostgresServer();
try {
  const env = {
    MESH_STORE_TYPE: 'postgres',
    MESH_STORE_POSTGRES_HOST: pg.host,
    MESH_STORE_POSTGRES_PORT: String(pg.port),
    MESH_STORE_POSTGRES_USER: pg.user,
    MESH_STORE_POSTGRES_PASSWORD: '',
    MESH_STORE_POSTGRES_DB_NAME: await pg.createDatabase(),
  };
  const first = await startZone(env);
  const second = await startZone(env);
  const pgFigures = await scenarios('postgres', first.url);
  const spread = await propagation(first, second);
  console.log(`stores through the zone binary (${SEEDED} routes seeded; ${DURATION}s each; PUT 1 connection, GETs 10)`);
  console.log(`  ${'store'.padEnd(10)} ${'PUT create'.padStart(10)} ${'GET one'.padStart(12)} ${''.padEnd(13)} ${'GET page of 100'.padStart(14)}`);
  console.log(row('sqlite', sqliteFigures));
  console.log(row('postgres', pgFigures));
  console.log(`  postgres/sqlite: PUT ${(pgFigures.write.rps / sqliteFigures.write.rps).toFixed(2)}, GET one ${(pgFigures.one.rps / sqliteFigures.one.rps).toFixed(2)}, page ${(pgFigures.page.rps / sqliteFigures.page.rps).toFixed(2)}`);
  console.log(`change propagation between two instances on PostgreSQL (${SAMPLES} PUTs): median ${spread.median.toFixed(1)} ms, p99 ${spread.p99.toFixed(1)} ms`);
  for (const cp of [first, second]) cp.child.kill('SIGTERM');
} finally {
  await pg.stop();
}
process.exit(0);

#!/usr/bin/env node
// Proxy configuration benchmark: a mesh of 5,000 dataplanes over 500 services with 1,000
// policies in an in-memory store, matched and rendered by @mesh/proxy-config, then changed one
// resource at a time; then the same mesh with 500 targetRef policies more, from a cold service.
// Each figure is printed next to a baseline measured in the same run (the matcher and renderer
// called directly from scratch; JSON.stringify of the output as a physical floor; the figures
// without targetRef policies) and the target. Uses the built packages; asserts nothing. See
// bench/README.md.
import { dirname, join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const load = (pkg) => import(pathToFileURL(join(root, 'packages', pkg, 'dist', 'index.js')).href);
const { decodeSpec, getKind, targetRefPolicyKinds } = await load('model');
const { SqliteResourceStore } = await load('store-sqlite');
const { indexPolicies, indexTargetRefPolicies, matchPolicies, matchTargetRefPolicies, targetRefProxyOf } = await load('policy-matcher');
const { prepareMeshContext, renderProxyConfig } = await load('xds-renderer');
const { ProxyConfigService } = await load('proxy-config');

const DATAPLANES = 5_000;
const SERVICES = 500;
const MESH = 'default';
const TARGET_MS = 10_000;
const SAMPLES = 200;
const ROUNDS = 5;

const serviceName = (index) => `svc-${index % SERVICES}`;
const match = (name) => ({ match: { 'mesh.io/service': name } });
const ANY = match('*');
const dpName = (index) => `dp-${String(index).padStart(4, '0')}`;

function dataplaneBody(index, address = `10.${Math.floor(index / 250)}.${index % 250}.1`) {
  return {
    networking: {
      address,
      inbound: [{ port: 8080, servicePort: 8081, tags: { 'mesh.io/service': serviceName(index), 'mesh.io/protocol': 'http', version: `v${index % 3}` } }],
      outbound: [1, 7, 31, 101].map((step, at) => ({ port: 10001 + at, tags: { 'mesh.io/service': serviceName(index + step) } })),
    },
  };
}

const timeoutBody = (i, connectTimeout = '5s') => ({ sources: [ANY], destinations: [match(serviceName(i * 3))], conf: { connectTimeout, http: { requestTimeout: '15s' } } });
const permissionBody = (i, sources = [match(serviceName(i + 1))]) => ({ sources, destinations: [match(serviceName(i))] });

/** 1,000 policies: per-service routes with a version split and per-service connection policies. */
function policies() {
  const list = [['TrafficRoute', 'route-all', { sources: [ANY], destinations: [ANY], conf: { destination: { 'mesh.io/service': '*' } } }]];
  const add = (type, count, name, body) => {
    for (let i = 0; i < count; i++) list.push([type, `${name}-${i}`, body(i)]);
  };
  add('TrafficRoute', 299, 'route', (i) => ({
    sources: [ANY],
    destinations: [match(serviceName(i))],
    conf: { split: [{ weight: 80, destination: { 'mesh.io/service': serviceName(i), version: 'v1' } }, { weight: 20, destination: { 'mesh.io/service': serviceName(i), version: 'v2' } }] },
  }));
  add('Timeout', 150, 'timeout', (i) => timeoutBody(i));
  add('HealthCheck', 100, 'hc', (i) => ({ sources: [ANY], destinations: [match(serviceName(i * 5))], conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } }));
  add('CircuitBreaker', 100, 'cb', (i) => ({ sources: [ANY], destinations: [match(serviceName(i * 5 + 1))], conf: { thresholds: { maxConnections: 100 } } }));
  add('Retry', 100, 'retry', (i) => ({ sources: [ANY], destinations: [match(serviceName(i * 5 + 2))], conf: { http: { numRetries: 3 } } }));
  add('TrafficPermission', 100, 'tp', (i) => permissionBody(i));
  add('TrafficLog', 50, 'log', (i) => ({ sources: [ANY], destinations: [match(serviceName(i * 10))] }));
  add('RateLimit', 100, 'rl', (i) => ({ sources: [match(serviceName(i + 2))], destinations: [match(serviceName(i))], conf: { http: { requests: 100, interval: '1s' } } }));
  return list;
}

/** The spec text the API would store: decoded, defaults applied. */
function specText(type, body) {
  const kind = getKind(type);
  const decoded = decodeSpec(kind, body);
  if (!decoded.ok) throw new Error(`${type}: ${decoded.message}`);
  return JSON.stringify(kind.applyDefaults ? kind.applyDefaults(decoded.spec) : decoded.spec);
}

const meshBody = {
  mtls: { enabledBackend: 'ca', backends: [{ name: 'ca', type: 'builtin' }] },
  logging: { defaultBackend: 'file', backends: [{ name: 'file', type: 'file', conf: { path: '/tmp/access.log' } }] },
};

async function update(store, type, name, body) {
  const key = { type, mesh: MESH, name };
  const current = await store.get(key);
  await store.update({ ...key, spec: specText(type, body), version: current.version });
}

const rssMb = () => process.memoryUsage().rss / 2 ** 20;

/** Collects garbage when run with --expose-gc and returns the heap then in use (MB); undefined otherwise. */
function collectGarbage() {
  if (typeof globalThis.gc !== 'function') return undefined;
  globalThis.gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function timed(fn) {
  const started = performance.now();
  const result = fn();
  return { ms: performance.now() - started, result };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (ms) => (ms >= 100 ? `${Math.round(ms).toLocaleString('en-US')} ms` : ms >= 1 ? `${ms.toFixed(1)} ms` : `${Math.round(ms * 1000)} µs`);
const ratio = (value, baseline) => `${(value / baseline).toFixed(2)}x`;

function row(label, value, baseline, baselineLabel, note = '') {
  console.log(`  ${label.padEnd(44)} ${value.padStart(10)}   ${baseline.padStart(10)} ${baselineLabel.padEnd(28)} ${note}`);
}

// --- The store ------------------------------------------------------------------------------
console.log(`xds bench: ${DATAPLANES.toLocaleString('en-US')} dataplanes, ${SERVICES} services, 1,000 policies; node ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0].toFixed(2)}`);
const store = new SqliteResourceStore({ path: ':memory:' });
const resources = [{ type: 'Mesh', mesh: '', name: MESH, spec: specText('Mesh', meshBody) }];
for (let i = 0; i < DATAPLANES; i++) resources.push({ type: 'Dataplane', mesh: MESH, name: dpName(i), spec: specText('Dataplane', dataplaneBody(i)) });
for (const [type, name, body] of policies()) resources.push({ type, mesh: MESH, name, spec: specText(type, body) });
await store.createMissing(resources);
const heapStore = collectGarbage();
const rssStore = rssMb();
console.log(`store: ${resources.length.toLocaleString('en-US')} resources in memory; RSS ${rssStore.toFixed(0)} MB`);

// --- Baseline: the matcher and the renderer called directly, from scratch -------------------
const parsed = (type) => store.list({ type, mesh: MESH, offset: 0, size: 0 }).then(({ items }) => items);
const dataplanes = (await parsed('Dataplane')).map((r) => ({ mesh: r.mesh, name: r.name, spec: JSON.parse(r.spec) }));
const byKind = {};
for (const type of ['TrafficRoute', 'Timeout', 'HealthCheck', 'CircuitBreaker', 'Retry', 'TrafficPermission', 'TrafficLog', 'RateLimit']) {
  byKind[type] = (await parsed(type)).map((r) => ({ mesh: r.mesh, name: r.name, creationTime: r.creationTime, modificationTime: r.modificationTime, spec: JSON.parse(r.spec) }));
}
const meshSpec = JSON.parse((await store.get({ type: 'Mesh', mesh: '', name: MESH })).spec);

/** Every proxy matched, then rendered, by the packages alone over a fresh context. */
function directFullRecompute() {
  const context = prepareMeshContext({ snapshot: { mesh: MESH, meshSpec, policies: byKind, externalServices: [] }, dataplanes });
  const index = indexPolicies(context.state.snapshot);
  const matched = timed(() => dataplanes.map((dp) => matchPolicies(dp, index)));
  const rendered = timed(() => dataplanes.map((dp, at) => renderProxyConfig({ context, dataplane: dp, policies: matched.result[at] })));
  return { matchMs: matched.ms, renderMs: rendered.ms };
}

// Both sides run on a warmed-up JIT: the first pass only warms it.
directFullRecompute();
collectGarbage();

// --- The service, from a cold start ----------------------------------------------------------
let service = new ProxyConfigService({ store });
const startedAt = performance.now();
await service.start();
const startMs = performance.now() - startedAt;
let mesh = service.mesh(MESH);
const names = mesh.dataplaneNames();
const firstMatch = timed(() => mesh.match(names[0]));
const oneMatch = [];
const matchAll = timed(() => {
  for (const name of names.slice(1)) {
    const t = performance.now();
    mesh.match(name);
    if (oneMatch.length < SAMPLES) oneMatch.push(performance.now() - t);
  }
});
const heapMatched = collectGarbage();
const oneRender = [];
const renderAll = timed(() => {
  for (const name of names) {
    const t = performance.now();
    mesh.proxyConfig(name);
    if (oneRender.length < SAMPLES) oneRender.push(performance.now() - t);
  }
});
const fullMs = firstMatch.ms + matchAll.ms + renderAll.ms;
const heapRendered = collectGarbage();
const rssRendered = rssMb();

const direct = directFullRecompute();
collectGarbage();
const floor = timed(() => names.reduce((bytes, name) => bytes + JSON.stringify(mesh.proxyConfig(name)).length, 0));
const outputMb = floor.result / 2 ** 20;
const stringifyOne = median(names.slice(0, SAMPLES).map((name) => timed(() => JSON.stringify(mesh.proxyConfig(name))).ms));

console.log('\nfrom scratch (cold service)                        service   baseline');
row('match one dataplane (median)', fmt(median(oneMatch)), fmt(direct.matchMs / DATAPLANES), 'matcher direct, mean', ratio(median(oneMatch), direct.matchMs / DATAPLANES));
row('  first match, policy index built', fmt(firstMatch.ms), '', '');
row(`match all ${DATAPLANES.toLocaleString('en-US')}`, fmt(firstMatch.ms + matchAll.ms), fmt(direct.matchMs), 'matcher direct', ratio(firstMatch.ms + matchAll.ms, direct.matchMs));
row('render one dataplane (median)', fmt(median(oneRender)), fmt(stringifyOne), 'JSON.stringify of it', ratio(median(oneRender), stringifyOne));
row(`render all ${DATAPLANES.toLocaleString('en-US')}`, fmt(renderAll.ms), fmt(floor.ms), 'JSON.stringify of all', ratio(renderAll.ms, floor.ms));
row('', '', fmt(direct.renderMs), 'renderer direct', ratio(renderAll.ms, direct.renderMs));
row(`match + render all ${DATAPLANES.toLocaleString('en-US')}`, fmt(fullMs), fmt(direct.matchMs + direct.renderMs), 'matcher + renderer direct', ratio(fullMs, direct.matchMs + direct.renderMs));
row('', '', fmt(TARGET_MS), 'target', fullMs < TARGET_MS ? 'MEETS target' : 'MISSES target');
console.log(`  rendered output: ${outputMb.toFixed(0)} MB of JSON; service load from the store ${fmt(startMs)}`);

// --- Incremental changes ---------------------------------------------------------------------
/** Applies one write, then reads every proxy's configuration (cached ones cost a lookup); repeated with alternating writes. */
async function absorb(label, write) {
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = { ...service.counters };
    await write(round);
    const t = performance.now();
    await service.settled();
    const current = service.mesh(MESH);
    for (const name of current.dataplaneNames()) current.proxyConfig(name);
    runs.push({ ms: performance.now() - t, matched: service.counters.matched - before.matched, rendered: service.counters.rendered - before.rendered, of: current.dataplaneNames().length });
  }
  const typical = median(runs.map((run) => run.ms));
  const { matched, rendered, of } = runs[0];
  row(label, fmt(typical), fmt(fullMs), 'full recompute', `${ratio(typical, fullMs)}; first ${fmt(runs[0].ms)}; matched ${matched}, rendered ${rendered} of ${of}`);
}

console.log(`\nabsorbing one change (write applied, every proxy read; median of ${ROUNDS})   baseline`);
await absorb('Timeout of one service (timeout-3)', (round) => update(store, 'Timeout', 'timeout-3', timeoutBody(3, `${round + 6}s`)));
await absorb('TrafficPermission of one service (tp-5)', (round) => update(store, 'TrafficPermission', 'tp-5', permissionBody(5, [match(serviceName(8 + round))])));
await absorb('dataplane moved (dp-0042, new address)', (round) => update(store, 'Dataplane', dpName(42), dataplaneBody(42, `10.200.0.${round + 1}`)));
await absorb('dataplane added (dp-5000 and on)', (round) =>
  store.create({ type: 'Dataplane', mesh: MESH, name: dpName(DATAPLANES + round), spec: specText('Dataplane', dataplaneBody(DATAPLANES + round, `10.201.0.${round + 1}`)) }),
);
await absorb('mesh-wide policy (route-all, reaches all)', (round) =>
  update(store, 'TrafficRoute', 'route-all', { sources: [ANY], destinations: [ANY], conf: { destination: { 'mesh.io/service': '*' }, loadBalancer: round % 2 ? {} : { random: {} } } }),
);

console.log('\nmemory');
row('RSS, every proxy matched and rendered', `${rssRendered.toFixed(0)} MB`, `${rssStore.toFixed(0)} MB`, 'RSS with the store alone', `+${(rssRendered - rssStore).toFixed(0)} MB`);
if (heapRendered !== undefined) {
  row('heap: matches (all proxies)', `${(heapMatched - heapStore).toFixed(0)} MB`, '', '');
  row('heap: rendered configurations (all proxies)', `${(heapRendered - heapMatched).toFixed(0)} MB`, `${outputMb.toFixed(0)} MB`, 'as JSON text', ratio(heapRendered - heapMatched, outputMb));
} else console.log('  (run with node --expose-gc for heap figures)');

await service.stop();
// The configurations above are not kept while the next ones are measured.
service = undefined;
mesh = undefined;
collectGarbage();

// --- The same mesh with targetRef policies ---------------------------------------------------
const meshRef = { kind: 'Mesh' };
const serviceRef = (index) => ({ kind: 'MeshService', name: serviceName(index) });
const meshTimeoutBody = (i, connectionTimeout = '5s') => ({ targetRef: serviceRef(i), to: [{ targetRef: meshRef, default: { connectionTimeout, http: { requestTimeout: '15s' } } }] });
const meshTraceBody = (overall = 10) => ({ targetRef: meshRef, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin:9411/api/v2/spans' } }], sampling: { overall } } });

/** 500 targetRef policies of every kind: most per service, a few mesh-wide. */
function targetRefPolicies() {
  const list = [
    ['MeshTrace', 'trace', meshTraceBody()],
    ['MeshAccessLog', 'logs', { targetRef: meshRef, to: [{ targetRef: meshRef, default: { backends: [{ type: 'File', file: { path: '/tmp/out.log' } }] } }] }],
    ['MeshProxyPatch', 'patch', { targetRef: meshRef, default: { appendModifications: [{ cluster: { match: { origin: 'outbound' }, operation: 'Patch', value: 'perConnectionBufferLimitBytes: 65536' } }] } }],
  ];
  const add = (type, count, name, body) => {
    for (let i = 0; i < count; i++) list.push([type, `${name}-${i}`, body(i)]);
  };
  add('MeshHTTPRoute', 100, 'mhr', (i) => ({
    targetRef: meshRef,
    to: [{ targetRef: serviceRef(i), rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/api' } }], default: { backendRefs: ['v1', 'v2'].map((version) => ({ kind: 'MeshServiceSubset', name: serviceName(i), tags: { version }, weight: 50 })) } }] }],
  }));
  add('MeshTimeout', 100, 'mt', (i) => meshTimeoutBody(i * 5));
  add('MeshTrafficPermission', 100, 'mtp', (i) => ({ targetRef: serviceRef(i), from: [{ targetRef: serviceRef(i + 1), default: { action: 'Allow' } }] }));
  add('MeshRetry', 40, 'mr', (i) => ({ targetRef: meshRef, to: [{ targetRef: serviceRef(i * 7), default: { http: { numRetries: 3 } } }] }));
  add('MeshCircuitBreaker', 40, 'mcb', (i) => ({ targetRef: meshRef, to: [{ targetRef: serviceRef(i * 7 + 1), default: { connectionLimits: { maxConnections: 100 } } }] }));
  add('MeshHealthCheck', 40, 'mhc', (i) => ({ targetRef: meshRef, to: [{ targetRef: serviceRef(i * 7 + 2), default: { http: { path: '/health' } } }] }));
  add('MeshLoadBalancingStrategy', 20, 'mlb', (i) => ({ targetRef: meshRef, to: [{ targetRef: serviceRef(i * 11), default: { loadBalancer: { type: 'LeastRequest' } } }] }));
  add('MeshRateLimit', 20, 'mrl', (i) => ({ targetRef: serviceRef(i * 13), from: [{ targetRef: meshRef, default: { local: { http: { requestRate: { num: 100, interval: '1s' } } } } }] }));
  add('MeshFaultInjection', 20, 'mfi', (i) => ({ targetRef: serviceRef(i * 17), from: [{ targetRef: meshRef, default: { http: [{ delay: { value: '1s', percentage: 1 } }] } }] }));
  add('MeshTCPRoute', 17, 'mtr', (i) => ({ targetRef: meshRef, to: [{ targetRef: serviceRef(i * 19) }] }));
  return list;
}

const targetRefResources = targetRefPolicies().map(([type, name, body]) => ({ type, mesh: MESH, name, spec: specText(type, body) }));
await store.createMissing(targetRefResources);
console.log(`\nwith ${targetRefResources.length} targetRef policies more, of every kind, on a service started cold`);

const targetRefByKind = {};
for (const kind of targetRefPolicyKinds()) {
  targetRefByKind[kind.name] = (await parsed(kind.name)).map((r) => ({ mesh: r.mesh, name: r.name, creationTime: r.creationTime, modificationTime: r.modificationTime, spec: JSON.parse(r.spec) }));
}

/** Every proxy matched (both policy systems), then rendered, by the packages alone. */
function directWithTargetRef() {
  const context = prepareMeshContext({ snapshot: { mesh: MESH, meshSpec, policies: byKind, externalServices: [] }, dataplanes });
  const index = indexPolicies(context.state.snapshot);
  const targetRefIndex = indexTargetRefPolicies({ mesh: MESH, policies: targetRefByKind });
  const matched = timed(() => dataplanes.map((dp) => [matchPolicies(dp, index), matchTargetRefPolicies(targetRefProxyOf(dp, index), targetRefIndex)]));
  const rendered = timed(() => dataplanes.map((dp, at) => renderProxyConfig({ context, dataplane: dp, policies: matched.result[at][0], targetRef: matched.result[at][1] })));
  return { matchMs: matched.ms, renderMs: rendered.ms };
}
directWithTargetRef();
collectGarbage();

const withTargetRef = new ProxyConfigService({ store });
await withTargetRef.start();
const meshWith = withTargetRef.mesh(MESH);
const matchAllWith = timed(() => {
  for (const name of names) meshWith.match(name);
});
const oneRenderWith = [];
const renderAllWith = timed(() => {
  for (const name of names) {
    const t = performance.now();
    meshWith.proxyConfig(name);
    if (oneRenderWith.length < SAMPLES) oneRenderWith.push(performance.now() - t);
  }
});
const fullWithMs = matchAllWith.ms + renderAllWith.ms;
const rssWith = rssMb();
const directWith = directWithTargetRef();
const stringifyOneWith = median(names.slice(0, SAMPLES).map((name) => timed(() => JSON.stringify(meshWith.proxyConfig(name))).ms));
const rulesPerProxy = meshWith.targetRefMatch(names[0]).kinds.length;

console.log('from scratch (cold service)                        service   baseline');
row('render one dataplane, rules built (median)', fmt(median(oneRenderWith)), fmt(median(oneRender)), 'without targetRef policies', ratio(median(oneRenderWith), median(oneRender)));
row('', '', fmt(stringifyOneWith), 'JSON.stringify of it', ratio(median(oneRenderWith), stringifyOneWith));
row(`match + rules + render all ${DATAPLANES.toLocaleString('en-US')}`, fmt(fullWithMs), fmt(fullMs), 'without targetRef policies', ratio(fullWithMs, fullMs));
row('', '', fmt(directWith.matchMs + directWith.renderMs), 'matcher + renderer direct', ratio(fullWithMs, directWith.matchMs + directWith.renderMs));
row('', '', fmt(TARGET_MS), 'target', fullWithMs < TARGET_MS ? 'MEETS target' : 'MISSES target');
console.log(`  ${rulesPerProxy} targetRef kinds select ${names[0]}; RSS ${rssWith.toFixed(0)} MB`);

/** As `absorb`, on the service with targetRef policies, counting the proxies whose rules were built again. */
async function absorbWith(label, write) {
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = { ...withTargetRef.counters };
    await write(round);
    const t = performance.now();
    await withTargetRef.settled();
    const current = withTargetRef.mesh(MESH);
    for (const name of current.dataplaneNames()) current.proxyConfig(name);
    const counters = withTargetRef.counters;
    runs.push({ ms: performance.now() - t, rules: counters.targetRefMatched - before.targetRefMatched, rendered: counters.rendered - before.rendered, of: current.dataplaneNames().length });
  }
  const typical = median(runs.map((run) => run.ms));
  const { rules, rendered, of } = runs[0];
  row(label, fmt(typical), fmt(fullWithMs), 'full recompute', `${ratio(typical, fullWithMs)}; first ${fmt(runs[0].ms)}; rules ${rules}, rendered ${rendered} of ${of}`);
}

console.log(`\nabsorbing one change with targetRef policies (median of ${ROUNDS})         baseline`);
await absorbWith('MeshTimeout of one service (mt-3)', (round) => update(store, 'MeshTimeout', 'mt-3', meshTimeoutBody(15, `${round + 6}s`)));
await absorbWith('Timeout of one service (timeout-3)', (round) => update(store, 'Timeout', 'timeout-3', timeoutBody(3, `${round + 11}s`)));
await absorbWith('mesh-wide MeshTrace (reaches all)', (round) => update(store, 'MeshTrace', 'trace', meshTraceBody(20 + round)));

await withTargetRef.stop();
await store.close();

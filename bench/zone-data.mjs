// The zone the API and start benchmarks load: 10,000 dataplanes over 100 services in mesh
// `default`, 1,000 policies aimed at those services, and DataplaneInsights for three quarters of
// the dataplanes (the control plane writes those itself, never through the API).

export const DATAPLANES = 10_000;
export const POLICIES = 1_000;
export const MESH = 'default';
export const DP_PATH = `/meshes/${MESH}/dataplanes`;
export const dpName = (i) => `dp-${String(i).padStart(5, '0')}`; // padded, so list order is index order

export const dataplane = (i, address = `10.0.${i >> 8}.${i & 255}`) => ({
  type: 'Dataplane',
  mesh: MESH,
  name: dpName(i),
  networking: {
    address,
    inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': `svc-${i % 100}`, 'mesh.io/protocol': 'http', version: `v${i % 3}` } }],
    outbound: [
      { port: 10001, service: `svc-${(i + 1) % 100}` },
      { port: 10002, service: `svc-${(i + 2) % 100}` },
    ],
  },
});

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const to = (service) => [{ match: { 'mesh.io/service': service } }];
// Bodies after apps/zone/src/testing/examples.ts, each aimed at one of the dataplanes' services.
export const POLICY_KINDS = [
  {
    type: 'TrafficRoute',
    path: 'traffic-routes',
    spec: (s) => ({
      sources: ALL,
      destinations: to(s),
      conf: { split: [{ weight: 90, destination: { 'mesh.io/service': s, version: 'v1' } }, { weight: 10, destination: { 'mesh.io/service': s, version: 'v2' } }] },
    }),
  },
  { type: 'TrafficPermission', path: 'traffic-permissions', spec: (s) => ({ sources: ALL, destinations: to(s) }) },
  { type: 'Timeout', path: 'timeouts', spec: (s) => ({ sources: ALL, destinations: to(s), conf: { connectTimeout: '5s', http: { requestTimeout: '15s' } } }) },
  { type: 'Retry', path: 'retries', spec: (s) => ({ sources: ALL, destinations: to(s), conf: { http: { numRetries: 3, perTryTimeout: '2s' } } }) },
  {
    type: 'HealthCheck',
    path: 'health-checks',
    spec: (s) => ({ sources: ALL, destinations: to(s), conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } }),
  },
];

/** The i-th policy: its API path and body. */
export function policy(i) {
  const kind = POLICY_KINDS[i % POLICY_KINDS.length];
  const name = `bench-${kind.path}-${i}`;
  return { kind, path: `/meshes/${MESH}/${kind.path}/${name}`, body: { type: kind.type, mesh: MESH, name, ...kind.spec(`svc-${i % 100}`) } };
}

// DataplaneInsights by dataplane index modulo 4: 0 and 1 connected (half the dataplanes online),
// 2 disconnected, 3 without an insight. Connected ones have a certificate.
const INSIGHT_TIME = '2024-05-06T07:00:00.000Z';
function dataplaneInsight(i) {
  const kind = i % 4;
  if (kind === 3) return undefined;
  const hex = (n, width) => n.toString(16).padStart(width, '0');
  const subscription = {
    id: `7b0c9a3e-1d2f-4e5a-9b8c-${hex(i, 12)}`,
    controlPlaneInstanceId: 'zone-cp-0f1e2d3c',
    connectTime: INSIGHT_TIME,
    ...(kind === 2 ? { disconnectTime: '2024-05-06T07:05:00.000Z' } : {}),
    status: { lastUpdateTime: INSIGHT_TIME, total: { responsesSent: '4', responsesAcknowledged: '4' }, cds: { responsesSent: '1', responsesAcknowledged: '1' } },
    version: { meshDp: { version: i % 3 === 0 ? '2.4.3' : '2.5.0' }, envoy: { version: i % 3 === 0 ? '1.27.2' : '1.28.0' } },
  };
  const mTLS =
    kind === 2
      ? undefined
      : { certificateExpirationTime: '2024-05-07T07:00:00.000Z', lastCertificateRegeneration: INSIGHT_TIME, certificateRegenerations: 1, issuedBackend: 'ca-1', supportedBackends: ['ca-1'] };
  return { subscriptions: [subscription], ...(mTLS ? { mTLS } : {}) };
}

/** The DataplaneInsights as store rows (their spec is JSON text). */
export function dataplaneInsightRows() {
  const rows = [];
  for (let i = 0; i < DATAPLANES; i++) {
    const spec = dataplaneInsight(i);
    if (spec) rows.push({ type: 'DataplaneInsight', mesh: MESH, name: dpName(i), spec: JSON.stringify(spec) });
  }
  return rows;
}

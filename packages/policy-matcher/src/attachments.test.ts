import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { attachmentsOfPolicy, listAttachments } from './attachments.js';
import { matchPolicies } from './match-policies.js';
import { dataplanesSelectedBy, matchesAnySelector } from './policy-dataplanes.js';
import { ANY, connection, dataplane, policy, service, snapshotOf, web1 } from './test-fixtures.js';

// The reference's `inspect dataplane` test (pkg/api-server/testdata/inspect_dataplane.json).
const backend1 = dataplane('backend-1', {
  address: '127.0.0.1',
  inbound: [{ port: 80, servicePort: 8080, tags: { [SERVICE_TAG]: 'backend', 'mesh.io/protocol': 'http' } }],
  outbound: ['redis', 'elastic', 'postgres', 'web'].map((name, i) => ({ port: 10001 + i, tags: { [SERVICE_TAG]: name } })),
});
const inspectSnapshot = snapshotOf({
  TrafficPermission: [connection('TrafficPermission', 'tp-1', ANY, ANY)],
  FaultInjection: [
    connection('FaultInjection', 'fi-1', ANY, service('backend', { 'mesh.io/protocol': 'http' })),
    connection('FaultInjection', 'fi-2', ANY, service('backend', { 'mesh.io/protocol': 'http' })),
  ],
  Timeout: [connection('Timeout', 't-1', ANY, service('redis'))],
  HealthCheck: [connection('HealthCheck', 'hc-1', service('backend'), ANY)],
});

describe('listAttachments', () => {
  it('reproduces the reference inspection of a sidecar', () => {
    const items = listAttachments(matchPolicies(backend1, inspectSnapshot), (p, kind) => `${kind}/${p.name}`);
    expect(items).toEqual([
      { type: 'inbound', name: '127.0.0.1:80:8080', service: 'backend', matchedPolicies: { FaultInjection: ['FaultInjection/fi-1', 'FaultInjection/fi-2'], TrafficPermission: ['TrafficPermission/tp-1'] } },
      { type: 'outbound', name: '127.0.0.1:10001', service: 'redis', matchedPolicies: { Timeout: ['Timeout/t-1'] } },
      ...['elastic', 'postgres', 'redis', 'web'].map((name) => ({ type: 'service', name, service: name, matchedPolicies: { HealthCheck: ['HealthCheck/hc-1'] } })),
    ]);
    expect(Object.keys(items[0]?.matchedPolicies ?? {})).toEqual(['FaultInjection', 'TrafficPermission']);
  });

  it('puts the dataplane attachment first and drops empty ones', () => {
    const snapshot = snapshotOf({ TrafficTrace: [policy('TrafficTrace', 'trace', { selectors: [ANY] })], ProxyTemplate: [policy('ProxyTemplate', 'pt', {})] });
    expect(listAttachments(matchPolicies(web1(), snapshot))).toEqual([
      { type: 'dataplane', matchedPolicies: { ProxyTemplate: [snapshot.policies.ProxyTemplate?.[0]], TrafficTrace: [snapshot.policies.TrafficTrace?.[0]] } },
    ]);
    expect(listAttachments(matchPolicies(web1(), snapshotOf({})))).toEqual([]);
  });
});

describe('attachmentsOfPolicy', () => {
  it('inverts the attachments of one policy, sorted', () => {
    const matched = matchPolicies(backend1, inspectSnapshot);
    expect(attachmentsOfPolicy(matched, 'HealthCheck', 'hc-1').map((a) => a.name)).toEqual(['elastic', 'postgres', 'redis', 'web']);
    expect(attachmentsOfPolicy(matched, 'FaultInjection', 'fi-2')).toEqual([{ type: 'inbound', name: '127.0.0.1:80:8080', service: 'backend' }]);
    expect(attachmentsOfPolicy(matched, 'Timeout', 'unknown')).toEqual([]);
  });
});

describe('dataplanesSelectedBy', () => {
  it('lists dataplanes by name with where the policy attaches, skipping those it cannot reach', () => {
    const dataplanes = [
      web1(),
      backend1,
      dataplane('other-1', { address: '10.0.0.8', inbound: [{ port: 80, tags: { [SERVICE_TAG]: 'other' } }], outbound: [{ port: 10001, tags: { [SERVICE_TAG]: 'redis' } }] }),
    ];
    const snapshot = snapshotOf({ Timeout: [connection('Timeout', 'web-to-backend', service('web'), service('backend')), connection('Timeout', 'any-to-redis', ANY, service('redis'))] });
    expect(dataplanesSelectedBy('Timeout', 'any-to-redis', dataplanes, snapshot)).toEqual([
      { kind: 'SidecarDataplane', dataplane: { mesh: 'default', name: 'backend-1' }, attachments: [{ type: 'outbound', name: '127.0.0.1:10001', service: 'redis' }] },
      { kind: 'SidecarDataplane', dataplane: { mesh: 'default', name: 'other-1' }, attachments: [{ type: 'outbound', name: '127.0.0.1:10001', service: 'redis' }] },
    ]);
    expect(dataplanesSelectedBy('Timeout', 'web-to-backend', dataplanes, snapshot).map((item) => item.dataplane.name)).toEqual(['web-1']);
    expect(dataplanesSelectedBy('Timeout', 'missing', dataplanes, snapshot)).toEqual([]);
  });
});

describe('matchesAnySelector', () => {
  it('matches any source, destination or selector without ranking', () => {
    const lost = connection('Timeout', 'lost', service('web'), service('nothing'));
    expect(matchesAnySelector(lost.spec, web1())).toBe(true);
    expect(matchesAnySelector(connection('Timeout', 'to-web', service('other'), service('web', { version: 'v1' })).spec, web1())).toBe(true);
    expect(matchesAnySelector(connection('Timeout', 'none', service('other'), service('backend')).spec, web1())).toBe(false);
    expect(matchesAnySelector(policy('TrafficTrace', 'trace', { selectors: [service('web', { version: 'v2' })] }).spec, web1())).toBe(false);
  });
});

// The inspection views of targetRef policies: `/rules` items (the reference's own inspection
// cases, with this project's tag names and hence its cluster names), the proxy-wide attachment of
// `/policies`, and the items of `/{policy-path}/{name}/dataplanes`.
import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { listAttachments } from './attachments.js';
import { matchPolicies } from './match-policies.js';
import type { DataplaneResource } from './snapshot.js';
import { listRuleItems, targetRefPolicyDataplaneItem, withTargetRefPolicies } from './target-ref-inspection.js';
import { matchTargetRefPolicies } from './target-ref-match.js';
import type { TargetRefPoliciesByKind } from './target-ref-policies.js';
import { targetRefProxyOf } from './target-ref-select.js';
import { ANY, dataplane, policy, snapshotOf, targetRefPolicy, targetRefSnapshotOf } from './test-fixtures.js';

const SERVICE = SERVICE_TAG;
const PROTOCOL = 'mesh.io/protocol';
const WEB_HTTP = 'web-f9f39c2c3421f6b7';
const WEB = { kind: 'MeshService', name: 'web' };
const ZIPKIN = { type: 'Zipkin', zipkin: { url: 'http://jaeger-collector.mesh-observability:9411/api/v2/spans' } };
const FILE = { type: 'File', file: { path: '/tmp/access.logs' } };

const match = (proxy: DataplaneResource, policies: TargetRefPoliciesByKind) => matchTargetRefPolicies(targetRefProxyOf(proxy, snapshotOf({})), targetRefSnapshotOf(policies));

const permission = (name: string, tags: Record<string, string>, action: string) =>
  targetRefPolicy('MeshTrafficPermission', name, { targetRef: WEB, from: [{ targetRef: { kind: 'MeshServiceSubset', name: 'client', tags }, default: { action } }] });
const accessLog = targetRefPolicy('MeshAccessLog', 'mal-1', { targetRef: WEB, to: [{ targetRef: { kind: 'Mesh' }, default: { backends: [FILE] } }] });
const trace = targetRefPolicy('MeshTrace', 'mt-1', { targetRef: WEB, default: { backends: [ZIPKIN] } });

describe('/rules items', () => {
  it('one item per inbound rule, per destination cluster and for the proxy, sorted by name', () => {
    const web = dataplane('web-01', {
      address: '192.168.0.2',
      inbound: [{ port: 80, tags: { [SERVICE]: 'web', [PROTOCOL]: 'http' } }],
      outbound: [{ port: 10001, tags: { [SERVICE]: 'backend' } }],
    });
    const policies = { MeshTrafficPermission: [permission('mtp-1', { 'mesh.io/zone': 'east' }, 'Deny')], MeshAccessLog: [accessLog], MeshTrace: [trace] };
    expect(listRuleItems(match(web, policies))).toEqual([
      { type: 'singleItem', policyType: 'MeshTrace', subset: {}, conf: { backends: [ZIPKIN] }, origins: [{ mesh: 'default', name: 'mt-1' }] },
      {
        type: 'destinationSubset',
        name: 'backend',
        addresses: ['127.0.0.1:10001'],
        service: 'backend',
        tags: { [SERVICE]: 'backend' },
        policyType: 'MeshAccessLog',
        subset: {},
        conf: { backends: [FILE] },
        origins: [{ mesh: 'default', name: 'mal-1' }],
      },
      {
        type: 'clientSubset',
        name: WEB_HTTP,
        addresses: ['192.168.0.2:80'],
        service: 'web',
        tags: { [SERVICE]: 'web', [PROTOCOL]: 'http' },
        policyType: 'MeshTrafficPermission',
        subset: { [SERVICE]: 'client', 'mesh.io/zone': 'east' },
        conf: { action: 'Deny' },
        origins: [{ mesh: 'default', name: 'mtp-1' }],
      },
    ]);
  });

  it('gathers the addresses of outbounds of one cluster, and writes negations as `!value`', () => {
    const outbound = (address: string, port: number, tags: Record<string, string> = {}) => ({ address, port, tags: { [SERVICE]: 'backend', ...tags } });
    const dp = dataplane('dp-1', {
      address: '127.0.0.1',
      inbound: [{ port: 80, tags: { [SERVICE]: 'web', [PROTOCOL]: 'http' } }],
      outbound: [outbound('240.0.0.1', 2300, { version: 'v2' }), outbound('240.0.0.2', 2300, { version: 'v1' }), outbound('10.3.2.3', 2300), outbound('240.0.0.0', 80)],
    });
    const policies = {
      MeshTrafficPermission: [permission('mtp-1', { 'mesh.io/zone': 'east' }, 'Deny'), permission('mtp-2', { 'mesh.io/zone': 'east', version: '2' }, 'Allow')],
      MeshAccessLog: [accessLog],
      MeshTrace: [trace],
    };
    const items = listRuleItems(match(dp, policies));
    expect(items.map((item) => [item.type, item.name ?? '', item.addresses ?? []])).toEqual([
      ['singleItem', '', []],
      ['destinationSubset', 'backend', ['10.3.2.3:2300', '240.0.0.0:80']],
      ['destinationSubset', 'backend-682413cd9359626a', ['240.0.0.2:2300']],
      ['destinationSubset', 'backend-a10be8a87b9201bd', ['240.0.0.1:2300']],
      ['clientSubset', WEB_HTTP, ['127.0.0.1:80']],
      ['clientSubset', WEB_HTTP, ['127.0.0.1:80']],
    ]);
    expect(items[2]?.tags).toEqual({ [SERVICE]: 'backend', version: 'v1' });
    expect(items.slice(4).map((item) => [item.subset, item.conf, item.origins.map((origin) => origin.name)])).toEqual([
      [{ [SERVICE]: 'client', 'mesh.io/zone': 'east', version: '2' }, { action: 'Allow' }, ['mtp-1', 'mtp-2']],
      [{ [SERVICE]: 'client', 'mesh.io/zone': 'east', version: '!2' }, { action: 'Deny' }, ['mtp-1']],
    ]);
  });

  it('lists the DNS names of a virtual IP before the IP', () => {
    const dp = dataplane('dp-1', { address: '10.0.0.1', inbound: [{ port: 80, tags: { [SERVICE]: 'web' } }], outbound: [{ address: '240.0.0.3', port: 80, tags: { [SERVICE]: 'backend' } }] });
    const [item] = listRuleItems(match(dp, { MeshAccessLog: [accessLog] }), [{ address: '240.0.0.3', domains: ['backend.mesh', 'backend.svc'] }]);
    expect(item?.addresses).toEqual(['backend.mesh:80', 'backend.svc:80', '240.0.0.3:80']);
  });

  it('has no item for a destination no rule holds, and none at all without targetRef policies', () => {
    const dp = dataplane('dp-1', { address: '10.0.0.1', inbound: [{ port: 80, tags: { [SERVICE]: 'web' } }], outbound: [{ port: 10001, tags: { [SERVICE]: 'db' } }] });
    const toBackend = targetRefPolicy('MeshTimeout', 'to-backend', { targetRef: WEB, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { connectionTimeout: '1s' } }] });
    expect(listRuleItems(match(dp, { MeshTimeout: [toBackend] }))).toEqual([]);
    expect(listRuleItems(match(dp, {}))).toEqual([]);
  });
});

describe('targetRef policies in /policies and /{policy-path}/{name}/dataplanes', () => {
  const web = dataplane('web-1', { address: '10.0.0.1', inbound: [{ port: 80, tags: { [SERVICE]: 'web' } }] });
  const trafficTrace = policy('TrafficTrace', 'trace-all', { selectors: [ANY] });
  const legacy = snapshotOf({ TrafficTrace: [trafficTrace] });

  it('attach to the proxy as a whole, beside the legacy proxy-wide policies, kinds in order', () => {
    const timeouts = [
      targetRefPolicy('MeshTimeout', 'b-web', { targetRef: WEB, from: [{ targetRef: { kind: 'Mesh' }, default: { idleTimeout: '1s' } }] }),
      targetRefPolicy('MeshTimeout', 'a-web', { targetRef: WEB, from: [{ targetRef: { kind: 'Mesh' }, default: { idleTimeout: '2s' } }] }),
      targetRefPolicy('MeshTimeout', 'z-mesh', { targetRef: { kind: 'Mesh' }, from: [{ targetRef: { kind: 'Mesh' }, default: { idleTimeout: '3s' } }] }),
    ];
    const items = withTargetRefPolicies(listAttachments(matchPolicies(web, legacy), (p) => p.name), match(web, { MeshTimeout: timeouts, MeshTrace: [trace] }), (p) => p.name);
    expect(items).toEqual([{ type: 'dataplane', matchedPolicies: { MeshTimeout: ['z-mesh', 'a-web', 'b-web'], MeshTrace: ['mt-1'], TrafficTrace: ['trace-all'] } }]);
    expect(withTargetRefPolicies([], match(web, { MeshTrace: [trace] }), (p) => p.name)).toEqual([{ type: 'dataplane', matchedPolicies: { MeshTrace: ['mt-1'] } }]);
  });

  it('list the sidecars and builtin gateways a policy selects', () => {
    const matched = match(web, { MeshTrace: [trace] });
    expect(targetRefPolicyDataplaneItem(matched, false, 'MeshTrace', 'mt-1')).toEqual({ kind: 'SidecarDataplane', dataplane: { mesh: 'default', name: 'web-1' }, attachments: [{ type: 'dataplane' }] });
    expect(targetRefPolicyDataplaneItem(matched, false, 'MeshTrace', 'other')).toBeUndefined();
    const gatewayProxy = dataplane('edge-1', { address: '10.0.0.2', gateway: { type: 'BUILTIN', tags: { [SERVICE]: 'edge' } } });
    const gateway = policy('MeshGateway', 'edge', { selectors: [{ match: { [SERVICE]: 'edge' } }], conf: { listeners: [{ port: 80, protocol: 'HTTP' }] } });
    const edgeTrace = targetRefPolicy('MeshTrace', 'edge-trace', { targetRef: { kind: 'MeshService', name: 'edge' }, default: { backends: [ZIPKIN] } });
    const gatewayMatch = matchTargetRefPolicies(targetRefProxyOf(gatewayProxy, snapshotOf({ MeshGateway: [gateway] })), targetRefSnapshotOf({ MeshTrace: [edgeTrace] }));
    expect(targetRefPolicyDataplaneItem(gatewayMatch, true, 'MeshTrace', 'edge-trace')).toEqual({
      kind: 'MeshGatewayDataplane',
      dataplane: { mesh: 'default', name: 'edge-1' },
      gateway: { mesh: 'default', name: 'edge' },
    });
  });
});

// Which proxies targetRef policies select and the rules they give a proxy, with the facts of the
// reference's own matcher cases (its dataplanes, policies and expected results).
import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { destinationConf, inboundRulesOf, matchTargetRefPolicies, proxyConf, targetRefRulesOf, zoneEgressRulesOf } from './target-ref-match.js';
import { namesReferTo, RULE_MATCHES_HASH_TAG, ruleMatchesHash, type TargetRefPoliciesByKind } from './target-ref-policies.js';
import type { Rule } from './target-ref-rules.js';
import { targetRefProxyOf, targetRefSelects } from './target-ref-select.js';
import type { Subset } from './target-ref-subset.js';
import { dataplane, policy, snapshotOf, targetRefPolicy, targetRefSnapshotOf } from './test-fixtures.js';
import type { DataplaneResource, MeshSnapshot } from './snapshot.js';

const SERVICE = SERVICE_TAG;
const text = (tags: Subset): string[] => tags.map((t) => `${t.key}${t.not ? '!=' : '='}${t.value}`);
const view = (rule: Rule<{ name: string }>) => ({ subset: text(rule.subset), conf: rule.conf, origins: rule.origins.map((origin) => origin.name) });

const MESH = { kind: 'Mesh' };
const FROM_MESH_ALLOW = [{ targetRef: MESH, default: { action: 'Allow' } }];
const mtp = (name: string, targetRef: object, from: object[] = FROM_MESH_ALLOW) => targetRefPolicy('MeshTrafficPermission', name, { targetRef, from });

const inbound = (port: number, tags: Record<string, string>) => ({ port, tags });
const dp = (...inbounds: ReturnType<typeof inbound>[]) => dataplane('dp-1', { address: '1.1.1.1', inbound: inbounds });

function match(proxy: DataplaneResource, policies: TargetRefPoliciesByKind, meshPolicies: MeshSnapshot = snapshotOf({})) {
  return matchTargetRefPolicies(targetRefProxyOf(proxy, meshPolicies), targetRefSnapshotOf(policies));
}

describe('the policies selecting a proxy, least specific first', () => {
  it('01: every kind of top-level targetRef that selects one inbound, in order of kind', () => {
    const proxy = dp(inbound(8080, { [SERVICE]: 'web', version: 'v1' }), inbound(8081, { [SERVICE]: 'web', version: 'v3' }));
    const policies = [
      mtp('mtp-1', { kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v1' } }),
      mtp('mtp-2', MESH),
      mtp('mtp-3', { kind: 'MeshService', name: 'web' }),
      mtp('mtp-4', { kind: 'MeshSubset', tags: { version: 'v1' } }),
      mtp('mtp-5', { kind: 'MeshService', name: 'backend' }),
      mtp('mtp-6', { kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v2' } }),
      mtp('mtp-7', { kind: 'MeshServiceSubset', name: 'web', tags: { env: 'dev' } }),
    ];
    const rules = targetRefRulesOf(match(proxy, { MeshTrafficPermission: policies }), 'MeshTrafficPermission');
    expect(rules?.policies.map((p) => p.name)).toEqual(['mtp-2', 'mtp-4', 'mtp-3', 'mtp-1']);
  });

  it('02: policies of the same kind of targetRef by name', () => {
    const proxy = dp(inbound(8080, { [SERVICE]: 'web', version: 'v1' }));
    const serviceSubset = { kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v1' } };
    const subset = { kind: 'MeshSubset', tags: { version: 'v1' } };
    const web = { kind: 'MeshService', name: 'web' };
    const policies = [
      mtp('aaa', serviceSubset),
      mtp('bbb', serviceSubset),
      mtp('1-my-policy', MESH),
      mtp('2-my-policy', MESH),
      mtp('my-policy-2', web),
      mtp('my-policy-1', web),
      mtp('222', subset),
      mtp('111', subset),
    ];
    const rules = targetRefRulesOf(match(proxy, { MeshTrafficPermission: policies }), 'MeshTrafficPermission');
    expect(rules?.policies.map((p) => p.name)).toEqual(['1-my-policy', '2-my-policy', '111', '222', 'my-policy-1', 'my-policy-2', 'aaa', 'bbb']);
  });

  const everyTag = { kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v1', env: 'dev', team: 'mesh' } };

  it('03: tags of different inbounds are never combined', () => {
    const proxy = dp(inbound(8080, { [SERVICE]: 'web', version: 'v1' }), inbound(8081, { [SERVICE]: 'web', env: 'dev' }), inbound(8082, { [SERVICE]: 'web', team: 'mesh' }));
    expect(match(proxy, { MeshTrafficPermission: [mtp('mtp-1', everyTag)] }).kinds).toEqual([]);
  });

  it('04: one tag missing from the inbound leaves the proxy out', () => {
    const proxy = dp(inbound(8080, { [SERVICE]: 'web', version: 'v1', team: 'mesh' }));
    expect(match(proxy, { MeshTrafficPermission: [mtp('mtp-1', everyTag)] }).kinds).toEqual([]);
  });

  const webApi = () => dp(inbound(8080, { [SERVICE]: 'web', version: 'v1', team: 'mesh' }), inbound(8081, { [SERVICE]: 'web-api', version: 'v1', team: 'mesh' }));
  const requestTimeout = (targetRef: object, timeout: string, name = 'mtp-1') =>
    targetRefPolicy('MeshTimeout', name, { targetRef, to: [{ targetRef: MESH, default: { http: { requestTimeout: timeout } } }] });
  const route = (name: string, targetRef: object, to: object[]) => targetRefPolicy('MeshHTTPRoute', name, { targetRef, to });

  it('05: a policy targeting a MeshHTTPRoute selects the proxies the route selects', () => {
    const policies = { MeshTimeout: [requestTimeout({ kind: 'MeshHTTPRoute', name: 'http-route-1' }, '3s')], MeshHTTPRoute: [route('http-route-1', { kind: 'MeshService', name: 'web-api' }, [{ targetRef: { kind: 'MeshService', name: 'test-server' } }])] };
    expect(targetRefRulesOf(match(webApi(), policies), 'MeshTimeout')?.policies.map((p) => p.name)).toEqual(['mtp-1']);
    // A route of another service selects no proxy here, and neither does a route that does not exist.
    const elsewhere = { ...policies, MeshHTTPRoute: [route('http-route-1', { kind: 'MeshService', name: 'other' }, [])] };
    expect(targetRefRulesOf(match(webApi(), elsewhere), 'MeshTimeout')).toBeUndefined();
    expect(targetRefRulesOf(match(webApi(), { MeshTimeout: policies.MeshTimeout }), 'MeshTimeout')).toBeUndefined();
  });

  it('a route naming a route (which validation refuses) selects nothing', () => {
    const loop = route('loop', { kind: 'MeshHTTPRoute', name: 'loop' }, []);
    const policies = { MeshTimeout: [requestTimeout({ kind: 'MeshHTTPRoute', name: 'loop' }, '3s')], MeshHTTPRoute: [loop] };
    expect(match(webApi(), policies).kinds).toEqual([]);
  });

  it('06: a route synced from a global (its name with a hash suffix) is the route its original name refers to', () => {
    const service = 'test-client_multizone-meshtimeout-ns_svc_80';
    const proxy = dataplane('the-dp', { address: '127.0.0.1', inbound: [inbound(8080, { [SERVICE]: service })] });
    const synced = route('route-1-4w55b97x462v7vdz', { kind: 'MeshService', name: service }, [
      {
        targetRef: { kind: 'MeshService', name: 'test-server_multizone-meshtimeout-ns_svc_80' },
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/path/with/timeout' } }], default: { backendRefs: [{ kind: 'MeshService', name: 'test-server_multizone-meshtimeout-ns_svc_80', weight: 1 }] } }],
      },
    ]);
    const timeout = requestTimeout({ kind: 'MeshHTTPRoute', name: 'route-1' }, '2s', 'mt1');
    expect(targetRefRulesOf(match(proxy, { MeshTimeout: [timeout], MeshHTTPRoute: [synced] }), 'MeshTimeout')?.policies.map((p) => p.name)).toEqual(['mt1']);
    expect(namesReferTo('default', 'route-1', 'route-1-4w55b97x462v7vdz')).toBe(true);
    expect(namesReferTo('other', 'route-1', 'route-1-4w55b97x462v7vdz')).toBe(false);
  });
});

describe('from rules per inbound', () => {
  const proxy = () => dp(inbound(8080, { [SERVICE]: 'web', version: 'v1' }), inbound(8081, { [SERVICE]: 'web', version: 'v3' }));
  const fromRules = (policies: TargetRefPoliciesByKind) =>
    Object.fromEntries((targetRefRulesOf(match(proxy(), policies), 'MeshTrafficPermission')?.from ?? []).map((rules) => [`${rules.address}:${rules.port}`, rules.rules.map(view)]));

  it('01: the inbound a subset policy selects merges it over the Mesh one; the other inbound has the Mesh one only', () => {
    const policies = [
      mtp('mtp-1', { kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v1' } }, [
        { targetRef: { kind: 'MeshService', name: 'backend' }, default: { action: 'Allow' } },
        { targetRef: { kind: 'MeshService', name: 'orders' }, default: { action: 'AllowWithShadowDeny' } },
      ]),
      mtp('mtp-2', MESH, [{ targetRef: MESH, default: { action: 'Deny' } }]),
    ];
    expect(fromRules({ MeshTrafficPermission: policies })).toEqual({
      '1.1.1.1:8080': [
        { subset: [`${SERVICE}=orders`], conf: { action: 'AllowWithShadowDeny' }, origins: ['mtp-1', 'mtp-2'] },
        { subset: [`${SERVICE}=backend`], conf: { action: 'Allow' }, origins: ['mtp-1', 'mtp-2'] },
        { subset: [`${SERVICE}!=backend`, `${SERVICE}!=orders`], conf: { action: 'Deny' }, origins: ['mtp-2'] },
      ],
      '1.1.1.1:8081': [{ subset: [], conf: { action: 'Deny' }, origins: ['mtp-2'] }],
    });
  });

  it('02: deny every client of a zone but one service version there', () => {
    const policies = [
      mtp('mtp-1', { kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v1' } }, [
        { targetRef: { kind: 'MeshServiceSubset', name: 'backend', tags: { 'mesh.io/zone': 'us-east', version: 'v2' } }, default: { action: 'Allow' } },
      ]),
      mtp('mtp-2', MESH, [{ targetRef: { kind: 'MeshSubset', tags: { 'mesh.io/zone': 'us-east' } }, default: { action: 'Deny' } }]),
    ];
    const deny = (subset: string[]) => ({ subset, conf: { action: 'Deny' }, origins: ['mtp-2'] });
    expect(fromRules({ MeshTrafficPermission: policies })).toEqual({
      '1.1.1.1:8080': [
        { subset: [`${SERVICE}=backend`, 'mesh.io/zone=us-east', 'version=v2'], conf: { action: 'Allow' }, origins: ['mtp-1', 'mtp-2'] },
        deny([`${SERVICE}!=backend`, 'mesh.io/zone=us-east', 'version=v2']),
        deny([`${SERVICE}=backend`, 'mesh.io/zone=us-east', 'version!=v2']),
        deny([`${SERVICE}!=backend`, 'mesh.io/zone=us-east', 'version!=v2']),
      ],
      '1.1.1.1:8081': [deny(['mesh.io/zone=us-east'])],
    });
  });
});

describe('to rules of policies targeting a MeshHTTPRoute', () => {
  const webApi = () => dp(inbound(8080, { [SERVICE]: 'web', version: 'v1', team: 'mesh' }), inbound(8081, { [SERVICE]: 'web-api', version: 'v1', team: 'mesh' }));
  const EXACT_ROOT = [{ path: { type: 'Exact', value: '/' } }];
  const V1_POST = [{ path: { type: 'PathPrefix', value: '/v1' } }, { method: 'POST' }];
  const ROOT_HASH = 'JNNc6//C3P17nUsOJm5f4kqG+U3v8pXhS0od9C3+oss=';
  const V1_POST_HASH = 'OTqJZOueoDIMeYnpSETLYoaD2htefPQ7CcHHRBgrODk=';
  const route = (name: string, targetRef: object, to: Array<[string, object[]]>) =>
    targetRefPolicy('MeshHTTPRoute', name, { targetRef, to: to.map(([service, matches]) => ({ targetRef: { kind: 'MeshService', name: service }, rules: [{ matches, default: {} }] })) });
  const timeout = (name: string, targetRef: object, requestTimeout: string) =>
    targetRefPolicy('MeshTimeout', name, { targetRef, to: [{ targetRef: MESH, default: { http: { requestTimeout } } }] });
  const toRules = (policies: TargetRefPoliciesByKind) => (targetRefRulesOf(match(webApi(), policies), 'MeshTimeout')?.to ?? []).map(view);
  const WEB_API = { kind: 'MeshService', name: 'web-api' };

  it('names each rule of the route by a hash of its matches, as the reference does', () => {
    expect(ruleMatchesHash(EXACT_ROOT as never)).toBe(ROOT_HASH);
    expect(ruleMatchesHash(V1_POST as never)).toBe(V1_POST_HASH);
  });

  it('01: the policy applies to every rule of every destination of the route', () => {
    const policies = {
      MeshHTTPRoute: [route('http-route-1', WEB_API, [['test-server', EXACT_ROOT], ['another-test-server', V1_POST]])],
      MeshTimeout: [timeout('mtp-1', { kind: 'MeshHTTPRoute', name: 'http-route-1' }, '3s')],
    };
    const rule = (hash: string, service: string) => ({ subset: [`${RULE_MATCHES_HASH_TAG}=${hash}`, `${SERVICE}=${service}`], conf: { http: { requestTimeout: '3s' } }, origins: ['mtp-1'] });
    expect(toRules(policies)).toEqual([rule(V1_POST_HASH, 'another-test-server'), rule(ROOT_HASH, 'test-server')]);
  });

  it('02: two routes with an equal rule: their policies merge, in order of name', () => {
    const policies = {
      MeshHTTPRoute: [route('http-route-1', WEB_API, [['test-server', EXACT_ROOT], ['another-test-server', V1_POST]]), route('http-route-2', WEB_API, [['test-server', EXACT_ROOT]])],
      MeshTimeout: [timeout('mtp-1', { kind: 'MeshHTTPRoute', name: 'http-route-1' }, '1s'), timeout('mtp-2', { kind: 'MeshHTTPRoute', name: 'http-route-2' }, '3s')],
    };
    expect(toRules(policies)).toEqual([
      { subset: [`${RULE_MATCHES_HASH_TAG}=${V1_POST_HASH}`, `${SERVICE}=another-test-server`], conf: { http: { requestTimeout: '1s' } }, origins: ['mtp-1'] },
      { subset: [`${RULE_MATCHES_HASH_TAG}=${ROOT_HASH}`, `${SERVICE}=test-server`], conf: { http: { requestTimeout: '3s' } }, origins: ['mtp-1', 'mtp-2'] },
    ]);
  });

  it('03: a policy on the route beats one on the service, which covers everything else', () => {
    const policies = {
      MeshHTTPRoute: [route('http-route-1', MESH, [['test-server', EXACT_ROOT]])],
      MeshTimeout: [timeout('mtp-1', { kind: 'MeshHTTPRoute', name: 'http-route-1' }, '1s'), timeout('mtp-2', { kind: 'MeshService', name: 'web' }, '3s')],
    };
    const three = { http: { requestTimeout: '3s' } };
    expect(toRules(policies)).toEqual([
      { subset: [`${RULE_MATCHES_HASH_TAG}=${ROOT_HASH}`, `${SERVICE}=test-server`], conf: { http: { requestTimeout: '1s' } }, origins: ['mtp-1', 'mtp-2'] },
      { subset: [`${RULE_MATCHES_HASH_TAG}!=${ROOT_HASH}`, `${SERVICE}=test-server`], conf: three, origins: ['mtp-2'] },
      { subset: [`${RULE_MATCHES_HASH_TAG}=${ROOT_HASH}`, `${SERVICE}!=test-server`], conf: three, origins: ['mtp-2'] },
      { subset: [`${RULE_MATCHES_HASH_TAG}!=${ROOT_HASH}`, `${SERVICE}!=test-server`], conf: three, origins: ['mtp-2'] },
    ]);
  });
});

describe('builtin gateways', () => {
  it("select by the gateway, its listeners' tags, and the merged tags of each listener", () => {
    const gatewayProxy = dataplane('gateway-1', { address: '127.0.0.1', gateway: { type: 'BUILTIN', tags: { [SERVICE]: 'edge-gateway' } } });
    const gateway = policy('MeshGateway', 'gateway-1', {
      selectors: [{ match: { [SERVICE]: 'edge-gateway' } }],
      conf: {
        listeners: [
          { port: 8080, protocol: 'HTTP', tags: { listener: 'one' } },
          { port: 8081, protocol: 'HTTP', tags: { listener: 'two' } },
          { port: 8082, protocol: 'HTTP', tags: { listener: 'three' } },
        ],
      },
    });
    const path = (file: string) => ({ backends: [{ type: 'File', file: { path: file } }] });
    const log = (name: string, targetRef: object, file = `/${name}`) => targetRefPolicy('MeshAccessLog', name, { targetRef, from: [{ targetRef: MESH, default: path(file) }] });
    const policies = [
      log('mesh', MESH),
      log('servicesubset', { kind: 'MeshServiceSubset', name: 'edge-gateway', tags: { listener: 'two' } }),
      log('gateway', { kind: 'MeshGateway', name: 'gateway-1' }),
      log('gatewaylistener', { kind: 'MeshGateway', name: 'gateway-1', tags: { listener: 'one' } }, '/gateway-listener'),
      log('nonmatchinggatewaylistener', { kind: 'MeshGateway', name: 'other-gateway', tags: { listener: 'three' } }, '/shouldnt-be-applied'),
    ];
    const rules = targetRefRulesOf(match(gatewayProxy, { MeshAccessLog: policies }, snapshotOf({ MeshGateway: [gateway] })), 'MeshAccessLog');
    expect(Object.fromEntries((rules?.from ?? []).map((inbound) => [`${inbound.address}:${inbound.port}`, inbound.rules.map(view)]))).toEqual({
      '127.0.0.1:8080': [{ subset: [], conf: path('/gateway-listener'), origins: ['gateway', 'gatewaylistener', 'mesh'] }],
      '127.0.0.1:8081': [{ subset: [], conf: path('/servicesubset'), origins: ['gateway', 'mesh', 'servicesubset'] }],
      '127.0.0.1:8082': [{ subset: [], conf: path('/gateway'), origins: ['gateway', 'mesh'] }],
    });
    expect(rules?.from[0]?.tags).toEqual({ [SERVICE]: 'edge-gateway', listener: 'one' });
  });

  it('lend no listeners to a sidecar, even one a MeshGateway selects', () => {
    const sidecar = dataplane('edge-1', { address: '10.0.0.1', inbound: [inbound(8080, { [SERVICE]: 'edge-gateway' })] });
    const gateway = policy('MeshGateway', 'gateway-1', { selectors: [{ match: { [SERVICE]: 'edge-gateway' } }], conf: { listeners: [{ port: 80, protocol: 'HTTP' }] } });
    const proxy = targetRefProxyOf(sidecar, snapshotOf({ MeshGateway: [gateway] }));
    expect(proxy.gatewayListeners).toEqual([]);
    expect(targetRefSelects(targetRefPolicy('MeshTimeout', 't', { targetRef: { kind: 'MeshGateway', name: 'gateway-1' }, to: [] }), proxy, [])).toBe(false);
  });
});

describe('what a renderer reads', () => {
  it('the conf of the proxy, of each inbound, and of each outbound destination', () => {
    const proxy = dataplane('web-1', {
      address: '10.0.0.1',
      inbound: [inbound(8080, { [SERVICE]: 'web' })],
      outbound: [
        { port: 10001, tags: { [SERVICE]: 'backend' } },
        { port: 10002, tags: { [SERVICE]: 'db' } },
      ],
    });
    const policies = {
      MeshTimeout: [
        targetRefPolicy('MeshTimeout', 'all', {
          targetRef: MESH,
          to: [{ targetRef: MESH, default: { connectionTimeout: '5s' } }],
          from: [{ targetRef: MESH, default: { idleTimeout: '1h' } }],
        }),
        targetRefPolicy('MeshTimeout', 'to-backend', { targetRef: { kind: 'MeshService', name: 'web' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { connectionTimeout: '1s' } }] }),
      ],
      MeshTrace: [targetRefPolicy('MeshTrace', 'trace', { targetRef: MESH, default: { sampling: { overall: 50 }, backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin:9411/api/v2/spans' } }] } })],
    };
    const matched = match(proxy, policies);
    const timeouts = targetRefRulesOf(matched, 'MeshTimeout');
    expect(timeouts && destinationConf(timeouts, { [SERVICE]: 'backend' })).toEqual({ connectionTimeout: '1s' });
    expect(timeouts && destinationConf(timeouts, { [SERVICE]: 'db' })).toEqual({ connectionTimeout: '5s' });
    expect(timeouts && inboundRulesOf(timeouts, '10.0.0.1', 8080).map((rule) => rule.conf)).toEqual([{ idleTimeout: '1h0m0s' }]);
    const trace = targetRefRulesOf(matched, 'MeshTrace');
    expect(trace && proxyConf(trace)).toMatchObject({ sampling: { overall: 50 } });
    expect(matched.kinds.map((rules) => rules.kind)).toEqual(['MeshTimeout', 'MeshTrace']);
  });
});

describe('the rules of a zone egress for a service', () => {
  const externalDatabase = { [SERVICE]: 'external-database', 'mesh.io/protocol': 'http', 'mesh.io/zone': 'zone-1', version: 'v1' };

  it('fromrules 01: the from entries of the policies selecting the service, merged over the clients', () => {
    const policies = [
      mtp('mtp-1', { kind: 'MeshServiceSubset', name: 'external-database', tags: { version: 'v1' } }, [
        { targetRef: { kind: 'MeshService', name: 'backend' }, default: { action: 'Allow' } },
        { targetRef: { kind: 'MeshService', name: 'orders' }, default: { action: 'AllowWithShadowDeny' } },
      ]),
      mtp('mtp-2', MESH, [{ targetRef: MESH, default: { action: 'Deny' } }]),
      // Selects another service, or another version: no part in the rules.
      mtp('mtp-3', { kind: 'MeshService', name: 'web' }),
      mtp('mtp-4', { kind: 'MeshServiceSubset', name: 'external-database', tags: { version: 'v2' } }),
    ];
    expect(zoneEgressRulesOf('MeshTrafficPermission', externalDatabase, targetRefSnapshotOf({ MeshTrafficPermission: policies })).map(view)).toEqual([
      { subset: [`${SERVICE}=orders`], conf: { action: 'AllowWithShadowDeny' }, origins: ['mtp-1', 'mtp-2'] },
      { subset: [`${SERVICE}=backend`], conf: { action: 'Allow' }, origins: ['mtp-1', 'mtp-2'] },
      { subset: [`${SERVICE}!=backend`, `${SERVICE}!=orders`], conf: { action: 'Deny' }, origins: ['mtp-2'] },
    ]);
  });

  it('torules 01: the to entries selecting the service, their policy\'s top-level targetRef as the client', () => {
    const mlbs = (name: string, targetRef: object, disabled: boolean) =>
      targetRefPolicy('MeshLoadBalancingStrategy', name, { targetRef, to: [{ targetRef: { kind: 'MeshService', name: 'external-database' }, default: { localityAwareness: { disabled } } }] });
    const policies = [mlbs('mlbs-1', { kind: 'MeshService', name: 'backend' }, true), mlbs('mlbs-2', { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v2' } }, false)];
    expect(zoneEgressRulesOf('MeshLoadBalancingStrategy', externalDatabase, targetRefSnapshotOf({ MeshLoadBalancingStrategy: policies })).map(view)).toEqual([
      { subset: [`${SERVICE}=backend`, 'version=v2'], conf: { localityAwareness: { disabled: false } }, origins: ['mlbs-1', 'mlbs-2'] },
      { subset: [`${SERVICE}=backend`, 'version!=v2'], conf: { localityAwareness: { disabled: true } }, origins: ['mlbs-1'] },
    ]);
    expect(zoneEgressRulesOf('MeshLoadBalancingStrategy', { [SERVICE]: 'other' }, targetRefSnapshotOf({ MeshLoadBalancingStrategy: policies }))).toEqual([]);
  });

  it('none for kinds with both from and to entries, or neither', () => {
    const timeout = targetRefPolicy('MeshTimeout', 'timeout', { targetRef: MESH, to: [{ targetRef: MESH, default: { connectionTimeout: '1s' } }], from: [{ targetRef: MESH, default: { idleTimeout: '1h' } }] });
    expect(zoneEgressRulesOf('MeshTimeout', externalDatabase, targetRefSnapshotOf({ MeshTimeout: [timeout] }))).toEqual([]);
  });
});

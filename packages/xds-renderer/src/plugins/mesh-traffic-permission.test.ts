// MeshTrafficPermission: RBAC of the mesh-mTLS filter chains of the selected inbounds.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const permissions = [
  targetRefPolicy('MeshTrafficPermission', 'deny-all', { targetRef: { kind: 'Mesh' }, from: [{ targetRef: { kind: 'Mesh' }, default: { action: 'Deny' } }] }),
  targetRefPolicy('MeshTrafficPermission', 'web', {
    targetRef: { kind: 'MeshService', name: 'web' },
    from: [
      { targetRef: { kind: 'MeshService', name: 'frontend' }, default: { action: 'Allow' } },
      { targetRef: { kind: 'MeshService', name: 'gateway' }, default: { action: 'AllowWithShadowDeny' } },
    ],
  }),
  targetRefPolicy('MeshTrafficPermission', 'web-tcp', {
    targetRef: { kind: 'MeshService', name: 'web-tcp' },
    from: [
      { targetRef: { kind: 'Mesh' }, default: { action: 'Allow' } },
      { targetRef: { kind: 'MeshServiceSubset', name: 'intruder', tags: { env: 'dev' } }, default: { action: 'Deny' } },
    ],
  }),
];

const rbacOf = (config: ProxyConfig, name: string, chain = 0): JsonObject | undefined => {
  const listener = config.listeners.find((candidate) => candidate.name === name) as Listener;
  return ((listener.filterChains as JsonObject[])[chain]?.filters as JsonObject[]).find((filter) => filter.name === 'envoy.filters.network.rbac')?.typedConfig as JsonObject | undefined;
};

describe('MeshTrafficPermission', () => {
  const topology = targetRefTopology('STRICT');
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshTrafficPermission: permissions });

  it('replaces the RBAC of the inbounds as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-traffic-permission.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('lets in the clients of the rules that allow, by identity, and denies everyone else', () => {
    const identity = (name: string) => ({ authenticated: { principalName: { exact: name } } });
    expect(rbacOf(after, 'inbound:10.0.0.1:8080')).toEqual({
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC',
      rules: { policies: { MeshTrafficPermission: { permissions: [{ any: true }], principals: [identity('spiffe://default/frontend'), identity('spiffe://default/gateway')] } } },
      shadowRules: { action: 'DENY', policies: { MeshTrafficPermission: { permissions: [{ any: true }], principals: [identity('spiffe://default/gateway')] } } },
      statPrefix: 'inbound_10_0_0_1_8080.',
    });
    // Everyone but the intruder's dev instances: negated tags are inverted identities.
    const principals = ((rbacOf(after, 'inbound:10.0.0.1:8100')?.rules as JsonObject).policies as JsonObject).MeshTrafficPermission as JsonObject;
    expect(principals.principals).toContainEqual({ andIds: { ids: [{ notId: identity('mesh://env/dev') }, { notId: identity('spiffe://default/intruder') }] } });
    expect(principals.principals).not.toContainEqual({ andIds: { ids: [identity('mesh://env/dev'), identity('spiffe://default/intruder')] } });
  });

  it('lets nobody in where every rule denies', () => {
    const denied = topology.render(topology.web1, { MeshTrafficPermission: [permissions[0] as (typeof permissions)[number]] });
    expect(rbacOf(denied, 'inbound:10.0.0.1:8100')).toEqual({ '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC', rules: {}, statPrefix: 'inbound_10_0_0_1_8100.' });
  });

  it('needs mesh mTLS, and protects only the chains mesh mTLS terminates', () => {
    const plain = targetRefTopology('off');
    expect(plain.render(plain.web1, { MeshTrafficPermission: permissions })).toEqual(plain.render(plain.web1, {}));
    const permissive = targetRefTopology('PERMISSIVE');
    const config = permissive.render(permissive.web1, { MeshTrafficPermission: permissions });
    expect([0, 1, 2].map((chain) => rbacOf(config, 'inbound:10.0.0.1:8100', chain))).toEqual([undefined, undefined, expect.objectContaining({ statPrefix: 'inbound_10_0_0_1_8100.' })]);
    expectEnvoyAccepts(config);
  });
});

import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { defineKind, type KindDescriptor } from './kind.js';
import type { MeshTimeoutSpec } from './kinds/mesh-timeout.js';
import type { TrafficRouteSpec } from './kinds/traffic-route.js';
import { KINDS, policyKinds, targetRefPolicyKinds, type PolicySpecOf, type TargetRefPolicyKind, type TargetRefPolicySpecOf } from './registry.js';
import { readResourceBody } from './resource-body.js';

describe('the registry', () => {
  it('lists each kind once: the policy lists are its kinds with a selection or a targetRef, alphabetically', () => {
    expect(policyKinds().map((kind) => kind.name)).toEqual([
      'CircuitBreaker',
      'FaultInjection',
      'HealthCheck',
      'MeshGateway',
      'MeshGatewayRoute',
      'ProxyTemplate',
      'RateLimit',
      'Retry',
      'Timeout',
      'TrafficLog',
      'TrafficPermission',
      'TrafficRoute',
      'TrafficTrace',
      'VirtualOutbound',
    ]);
    expect(targetRefPolicyKinds().map((kind) => kind.name)).toEqual([
      'MeshAccessLog',
      'MeshCircuitBreaker',
      'MeshFaultInjection',
      'MeshHealthCheck',
      'MeshHTTPRoute',
      'MeshLoadBalancingStrategy',
      'MeshProxyPatch',
      'MeshRateLimit',
      'MeshRetry',
      'MeshTCPRoute',
      'MeshTimeout',
      'MeshTrace',
      'MeshTrafficPermission',
    ]);
    expect(policyKinds().every((kind) => KINDS.includes(kind))).toBe(true);
    expect(targetRefPolicyKinds().every((kind) => KINDS.includes(kind))).toBe(true);
  });

  it('types each kind by what its file declares, so a new kind joins the policy lists and their spec types from its descriptor alone', () => {
    const base = { scope: 'mesh', displayName: 'Test Kinds', singularDisplayName: 'Test Kind', schema: {} as z.ZodType<{ port: number }>, validate: () => [] } as const;
    const selecting = defineKind({ ...base, name: 'TestSelecting', path: 'test-selecting', selection: 'selectors', affects: 'selectedProxies' });
    const targeting = defineKind({ ...base, name: 'TestTargeting', path: 'test-targeting', targetRefPolicy: { from: true, to: false }, affects: 'selectedProxies' });
    const plain = defineKind({ ...base, name: 'TestPlain', path: 'test-plain', affects: 'nothing' });
    expectTypeOf(selecting).toExtend<KindDescriptor<{ port: number }> & { readonly name: 'TestSelecting'; readonly selection: 'selectors' }>();
    expectTypeOf(targeting).toExtend<{ readonly targetRefPolicy: { readonly from: true; readonly to: false } }>();
    expectTypeOf(plain).not.toExtend<{ readonly selection: string }>();
    expectTypeOf(plain).not.toExtend<{ readonly targetRefPolicy: object }>();
    expect([selecting, targeting, plain].map((kind) => [kind.name, kind.inCatalogue, kind.inspectable])).toEqual([
      ['TestSelecting', true, true],
      ['TestTargeting', true, true],
      ['TestPlain', false, false],
    ]);

    expectTypeOf<PolicySpecOf<'TrafficRoute'>>().toEqualTypeOf<TrafficRouteSpec>();
    expectTypeOf<TargetRefPolicySpecOf<'MeshTimeout'>>().toEqualTypeOf<MeshTimeoutSpec>();
    expectTypeOf<TargetRefPolicyKind>().toEqualTypeOf<
      | 'MeshAccessLog'
      | 'MeshCircuitBreaker'
      | 'MeshFaultInjection'
      | 'MeshHealthCheck'
      | 'MeshHTTPRoute'
      | 'MeshLoadBalancingStrategy'
      | 'MeshProxyPatch'
      | 'MeshRateLimit'
      | 'MeshRetry'
      | 'MeshTCPRoute'
      | 'MeshTimeout'
      | 'MeshTrace'
      | 'MeshTrafficPermission'
    >();
  });
});

describe('documented examples', () => {
  it('give every stored kind an example from its own file: a valid resource of the kind, in the mesh of a mesh-scoped one', () => {
    for (const kind of KINDS.filter((k) => !k.computed)) {
      const example = kind.example;
      expect(example, kind.name).toBeDefined();
      expect(example!.mesh !== undefined, kind.name).toBe(kind.scope === 'mesh');
      const body = readResourceBody(kind, { type: kind.acceptedTypes[0], ...(example!.mesh !== undefined ? { mesh: example!.mesh } : {}), name: example!.name, ...example!.spec });
      expect(kind.validate(body.spec), kind.name).toEqual([]);
    }
  });
});

describe('command-line columns', () => {
  it('are declared by the kinds with more to show than their name, as the reference CLI prints them', () => {
    const columns = Object.fromEntries(KINDS.filter((kind) => kind.cliColumns !== undefined).map((kind) => [kind.name, kind.cliColumns!.map((column) => column.header)]));
    expect(columns).toEqual({ Mesh: ['mTLS', 'METRICS', 'LOGGING', 'TRACING'], Dataplane: ['TAGS'] });
    const [mesh, dataplane] = [KINDS.find((kind) => kind.name === 'Mesh')!, KINDS.find((kind) => kind.name === 'Dataplane')!];
    expect(mesh.cliColumns!.map((column) => column.value(mesh.example!.spec))).toEqual(['builtin/ca-1', 'off', 'file', 'zipkin']);
    expect(dataplane.cliColumns!.map((column) => column.value(dataplane.example!.spec))).toEqual(['mesh.io/protocol=http mesh.io/service=web']);
  });
});

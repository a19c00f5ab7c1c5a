import { describe, expect, it } from 'vitest';
import { isWritableViaApi, MODES, syncsGlobalToZone, syncsZoneToGlobal } from './kind.js';
import { catalogueKinds, KINDS, policyKinds, targetRefPolicyKinds } from './registry.js';

/** Each kind's flow, derived from its sync flags: where the API writes it and which way it syncs. */
const flowOf = (kind: (typeof KINDS)[number]) => ({
  writableOn: MODES.filter((mode) => isWritableViaApi(kind, mode)),
  down: syncsGlobalToZone(kind),
  up: syncsZoneToGlobal(kind),
});

const GLOBAL_OWNED = { writableOn: ['standalone', 'global'], down: true, up: false };
const ZONE_OWNED = { writableOn: ['standalone', 'zone'], down: false, up: true };
const RUNTIME_STATE_FROM_ZONES = { writableOn: [], down: false, up: true };

describe('kind flow', () => {
  it('derives writability per mode and sync direction from the sync flags, as the reference does', () => {
    const table = Object.fromEntries(KINDS.map((kind) => [kind.name, flowOf(kind)]));
    expect(table).toEqual({
      Mesh: GLOBAL_OWNED,
      Dataplane: ZONE_OWNED,
      HealthCheck: GLOBAL_OWNED,
      TrafficPermission: GLOBAL_OWNED,
      TrafficLog: GLOBAL_OWNED,
      TrafficRoute: GLOBAL_OWNED,
      TrafficTrace: GLOBAL_OWNED,
      FaultInjection: GLOBAL_OWNED,
      Retry: GLOBAL_OWNED,
      Timeout: GLOBAL_OWNED,
      ProxyTemplate: GLOBAL_OWNED,
      CircuitBreaker: GLOBAL_OWNED,
      RateLimit: GLOBAL_OWNED,
      VirtualOutbound: GLOBAL_OWNED,
      MeshGateway: GLOBAL_OWNED,
      MeshGatewayRoute: GLOBAL_OWNED,
      MeshAccessLog: GLOBAL_OWNED,
      MeshCircuitBreaker: GLOBAL_OWNED,
      MeshFaultInjection: GLOBAL_OWNED,
      MeshHealthCheck: GLOBAL_OWNED,
      MeshHTTPRoute: GLOBAL_OWNED,
      MeshLoadBalancingStrategy: GLOBAL_OWNED,
      MeshProxyPatch: GLOBAL_OWNED,
      MeshRateLimit: GLOBAL_OWNED,
      MeshRetry: GLOBAL_OWNED,
      MeshTCPRoute: GLOBAL_OWNED,
      MeshTimeout: GLOBAL_OWNED,
      MeshTrace: GLOBAL_OWNED,
      MeshTrafficPermission: GLOBAL_OWNED,
      ExternalService: GLOBAL_OWNED,
      Secret: GLOBAL_OWNED,
      GlobalSecret: GLOBAL_OWNED,
      // Written on the global (or standalone) only, and never sent anywhere.
      Zone: { writableOn: ['standalone', 'global'], down: false, up: false },
      // Registered by zones, passed on by the global to the other zones.
      ZoneIngress: { writableOn: ['standalone', 'global', 'zone'], down: true, up: true },
      ZoneEgress: ZONE_OWNED,
      DataplaneInsight: RUNTIME_STATE_FROM_ZONES,
      ZoneInsight: { writableOn: [], down: false, up: false },
      ZoneIngressInsight: RUNTIME_STATE_FROM_ZONES,
      ZoneEgressInsight: RUNTIME_STATE_FROM_ZONES,
      // Computed by every control plane from what it has.
      MeshInsight: { writableOn: [], down: false, up: false },
      ServiceInsight: { writableOn: [], down: true, up: false },
    });
  });

  it('refuses every write on a read-only API', () => {
    for (const kind of KINDS) for (const mode of MODES) expect(isWritableViaApi(kind, mode, true)).toBe(false);
  });
});

describe('command-line names', () => {
  it('name every kind an operator writes, distinctly, as the reference CLI spells them', () => {
    const named = KINDS.filter((kind) => kind.cliNames !== undefined);
    expect(named.map((kind) => kind.name)).toEqual(KINDS.filter((kind) => !kind.readOnly).map((kind) => kind.name));
    const words = named.flatMap((kind) => [kind.cliNames!.singular, kind.cliNames!.plural]);
    expect(new Set(words).size).toBe(words.length);
    expect(Object.fromEntries(named.map((kind) => [kind.name, kind.cliNames!.plural]))).toMatchObject({
      TrafficRoute: 'traffic-routes',
      HealthCheck: 'healthchecks',
      ProxyTemplate: 'proxytemplates',
      MeshGateway: 'meshgateways',
      ZoneIngress: 'zone-ingresses',
      ZoneEgress: 'zoneegresses',
      GlobalSecret: 'global-secrets',
      Retry: 'retries',
      MeshHTTPRoute: 'meshhttproutes',
      MeshLoadBalancingStrategy: 'meshloadbalancingstrategies',
      MeshProxyPatch: 'meshproxypatches',
      MeshRetry: 'meshretries',
    });
  });
});

describe('policy kinds', () => {
  it('are exactly the kinds that select proxies by sources, destinations or selectors, so matching knows every one of them', () => {
    const selecting = KINDS.filter((kind) => kind.selection !== undefined).map((kind) => kind.name);
    expect(policyKinds().map((kind) => kind.name).sort()).toEqual(selecting.sort());
  });

  it('list the targetRef kinds apart, each with its sections and its spec under `spec`', () => {
    const targetRefKinds = KINDS.filter((kind) => kind.targetRefPolicy !== undefined);
    expect(targetRefPolicyKinds().map((kind) => kind.name).sort()).toEqual(targetRefKinds.map((kind) => kind.name).sort());
    expect(targetRefKinds.filter((kind) => kind.selection !== undefined || kind.specField !== 'spec')).toEqual([]);
    expect(Object.fromEntries(targetRefKinds.map((kind) => [kind.name, kind.targetRefPolicy]))).toEqual({
      MeshAccessLog: { from: true, to: true },
      MeshCircuitBreaker: { from: true, to: true },
      MeshFaultInjection: { from: true, to: false },
      MeshHealthCheck: { from: false, to: true },
      MeshHTTPRoute: { from: false, to: true },
      MeshLoadBalancingStrategy: { from: false, to: true },
      MeshProxyPatch: { from: false, to: false },
      MeshRateLimit: { from: true, to: false },
      MeshRetry: { from: false, to: true },
      MeshTCPRoute: { from: false, to: true },
      MeshTimeout: { from: true, to: true },
      MeshTrace: { from: false, to: false },
      MeshTrafficPermission: { from: true, to: false },
    });
  });

  it('are all in the catalogue, with the external services', () => {
    const catalogued = catalogueKinds().map((kind) => kind.name);
    expect(catalogued).toEqual([...policyKinds(), ...targetRefPolicyKinds(), ...KINDS.filter((kind) => kind.name === 'ExternalService')].map((kind) => kind.name).sort());
  });
});

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshLoadBalancingStrategyKind } from './mesh-load-balancing-strategy.js';

const violations = (yaml: string) => specViolationsOf(meshLoadBalancingStrategyKind, parse(yaml));
/** How web balances its traffic to backend. */
const toBackend = (conf: string) => `
targetRef: {kind: MeshService, name: web}
to:
  - targetRef: {kind: MeshService, name: backend}
    default: ${conf}
`;
const AT = 'spec.to[0].default';

describe('MeshLoadBalancingStrategy', () => {
  it('accepts a load balancer with hash policies and locality awareness', () => {
    const spec = parse(toBackend(`
      localityAwareness:
        localZone:
          affinityTags: [{key: k8s/node}, {key: k8s/az}]
        crossZone:
          failover:
            - {from: {zones: [zone-1]}, to: {type: Only, zones: [zone-2]}}
            - {from: {zones: [zone-3]}, to: {type: Any}}
            - {from: {zones: [zone-4]}, to: {type: AnyExcept, zones: [zone-1]}}
            - {to: {type: None}}
          failoverThreshold: {percentage: 70}
      loadBalancer:
        type: Maglev
        maglev:
          tableSize: 1021
          hashPolicies:
            - {type: Cookie, cookie: {name: session, ttl: 30m, path: /absolute-path}}
            - {type: SourceIP, terminal: true}
    `));
    expect(specViolationsOf(meshLoadBalancingStrategyKind, spec)).toEqual([]);
    expect(storedSpec(meshLoadBalancingStrategyKind, spec)).toMatchObject({
      to: [{ default: { loadBalancer: { maglev: { hashPolicies: [{ cookie: { ttl: '30m0s' } }, { type: 'SourceIP' }] } } } }],
    });
    expect(violations(toBackend('{localityAwareness: {disabled: true}, loadBalancer: {type: LeastRequest, leastRequest: {choiceCount: 3}}}'))).toEqual([]);
  });

  it('needs destinations, from the mesh or a service', () => {
    expect(violations('{targetRef: {kind: MeshGateway, name: edge}, to: []}')).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to', message: 'needs at least one item' },
    ]);
    expect(violations(`
      targetRef: {kind: MeshService, name: web}
      to: [{targetRef: {kind: MeshServiceSubset, name: backend, tags: {version: v1}}}]
    `)).toEqual([{ field: 'spec.to[0].targetRef.kind', message: 'value is not supported' }]);
  });

  it('needs the section each hash policy type names, and absolute cookie paths', () => {
    for (const balancer of ['ringHash', 'maglev']) {
      const type = balancer === 'ringHash' ? 'RingHash' : 'Maglev';
      expect(violations(toBackend(`
        loadBalancer:
          type: ${type}
          ${balancer}:
            hashPolicies:
              - type: Header
              - type: Cookie
              - type: SourceIP
              - type: QueryParameter
              - type: FilterState
              - {type: Cookie, cookie: {name: session, path: relative-path}}
      `))).toEqual([
        { field: `${AT}.loadBalancer.${balancer}.hashPolicies[0].header`, message: 'must be defined' },
        { field: `${AT}.loadBalancer.${balancer}.hashPolicies[1].cookie`, message: 'must be defined' },
        { field: `${AT}.loadBalancer.${balancer}.hashPolicies[3].queryParameter`, message: 'must be defined' },
        { field: `${AT}.loadBalancer.${balancer}.hashPolicies[4].filterState`, message: 'must be defined' },
        { field: `${AT}.loadBalancer.${balancer}.hashPolicies[5].cookie.path`, message: 'must be an absolute path' },
      ]);
    }
  });

  it('needs affinity tags with keys, all weighted or none, weights above zero', () => {
    expect(violations(toBackend('{localityAwareness: {localZone: {affinityTags: [{key: k8s/node, weight: 0}, {key: "", weight: 10}]}}}'))).toEqual([
      { field: `${AT}.localityAwareness.localZone.affinityTags[0].weight`, message: 'must be greater than 0' },
      { field: `${AT}.localityAwareness.localZone.affinityTags[1].key`, message: 'must not be empty' },
    ]);
    expect(violations(toBackend('{localityAwareness: {localZone: {affinityTags: [{key: k8s/node, weight: 10}, {key: k8s/az}]}}}'))).toEqual([
      { field: `${AT}.localityAwareness.localZone.affinityTags`, message: 'all or none affinity tags should have weight' },
    ]);
  });

  it('needs failover zones that agree with the failover type', () => {
    expect(violations(toBackend(`
      localityAwareness:
        crossZone:
          failover:
            - {from: {zones: []}, to: {type: None}}
            - {from: {zones: [zone-1]}, to: {type: None, zones: [zone-1]}}
            - {from: {zones: [zone-1, ""]}, to: {type: Any}}
            - {to: {type: Any, zones: [zone-1]}}
            - {to: {type: Only, zones: []}}
            - {to: {type: Only}}
            - {to: {type: AnyExcept, zones: []}}
            - {to: {type: AnyExcept}}
    `))).toEqual([
      { field: `${AT}.localityAwareness.crossZone.failover[0].from.zones`, message: 'must not be empty' },
      { field: `${AT}.localityAwareness.crossZone.failover[1].to.zones`, message: 'must be empty when type is None' },
      { field: `${AT}.localityAwareness.crossZone.failover[2].from.zones[1]`, message: 'must not be empty' },
      { field: `${AT}.localityAwareness.crossZone.failover[3].to.zones`, message: 'must be empty when type is Any' },
      { field: `${AT}.localityAwareness.crossZone.failover[4].to.zones`, message: 'must not be empty when type is Only' },
      { field: `${AT}.localityAwareness.crossZone.failover[5].to.zones`, message: 'must not be empty when type is Only' },
      { field: `${AT}.localityAwareness.crossZone.failover[6].to.zones`, message: 'must not be empty when type is AnyExcept' },
      { field: `${AT}.localityAwareness.crossZone.failover[7].to.zones`, message: 'must not be empty when type is AnyExcept' },
    ]);
  });

  it('keeps the failover threshold strictly between 0 and 100', () => {
    const threshold = (percentage: string) => violations(toBackend(`{localityAwareness: {crossZone: {failoverThreshold: {percentage: ${percentage}}}}}`));
    const PATH = `${AT}.localityAwareness.crossZone.failoverThreshold.percentage`;
    expect(threshold('0')).toEqual([{ field: PATH, message: 'must be greater than: 0' }]);
    expect(threshold('100')).toEqual([{ field: PATH, message: 'must be less than: 100' }]);
    expect(threshold('"99.5"')).toEqual([]);
    expect(threshold('many')).toEqual([
      { field: PATH, message: 'string has to be a valid number' },
      { field: PATH, message: 'must be greater than: 0' },
      { field: PATH, message: 'string has to be a valid number' },
    ]);
  });

  it('checks types and ranges against the schema first', () => {
    expect(violations(toBackend(`
      loadBalancer:
        type: RingHash
        ringHash: {hashFunction: CityHash, minRingSize: 0, hashPolicies: [{type: Connection}]}
    `))).toEqual([
      { field: `${AT}.loadBalancer.ringHash.hashFunction`, message: 'in body should be one of [XXHash MurmurHash2]' },
      { field: `${AT}.loadBalancer.ringHash.minRingSize`, message: 'in body should be greater than or equal to 1' },
      { field: `${AT}.loadBalancer.ringHash.hashPolicies[0].type`, message: 'in body should be one of [Header Cookie SourceIP QueryParameter FilterState]' },
    ]);
  });
});

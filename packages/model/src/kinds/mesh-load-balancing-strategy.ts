import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { integerGreaterThanZeroOrNil, intOrStringGreaterThan, intOrStringLessThan } from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goDuration, goList, goUint32, intOrString } from '../wire.js';
import { defaultConf, MUST_BE_DEFINED, MUST_NOT_BE_EMPTY, NEEDS_AT_LEAST_ONE_ITEM, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef } from './target-ref.js';

/** What a request is hashed on to pick an endpoint; `terminal` stops at the first that yields a hash. */
const HashPolicySchema = z.object({
  type: z.enum(['Header', 'Cookie', 'SourceIP', 'QueryParameter', 'FilterState']),
  terminal: z.boolean().optional(),
  header: z.object({ name: z.string().min(1) }).optional(),
  cookie: z.object({ name: z.string().min(1), ttl: goDuration().optional(), path: z.string().optional() }).optional(),
  connection: z.object({ sourceIP: z.boolean().optional() }).optional(),
  queryParameter: z.object({ name: z.string().min(1) }).optional(),
  filterState: z.object({ key: z.string().min(1) }).optional(),
});
type HashPolicy = z.infer<typeof HashPolicySchema>;

const LoadBalancerSchema = z.object({
  type: z.enum(['RoundRobin', 'LeastRequest', 'RingHash', 'Random', 'Maglev']),
  roundRobin: z.object({}).optional(),
  leastRequest: z.object({ choiceCount: goUint32(z.int().min(2)).optional() }).optional(),
  ringHash: z
    .object({
      hashFunction: z.enum(['XXHash', 'MurmurHash2']).optional(),
      minRingSize: goUint32(z.int().min(1).max(8000000)).optional(),
      maxRingSize: goUint32(z.int().min(1).max(8000000)).optional(),
      hashPolicies: z.array(HashPolicySchema).optional(),
    })
    .optional(),
  random: z.object({}).optional(),
  maglev: z.object({ tableSize: goUint32(z.int().min(1).max(5000011)).optional(), hashPolicies: z.array(HashPolicySchema).optional() }).optional(),
});

const LocalityAwarenessSchema = z.object({
  disabled: z.boolean().optional(),
  /** Endpoints of the local zone, preferred by the tags they share with the client. */
  localZone: z.object({ affinityTags: z.array(z.object({ key: z.string(), weight: goUint32().optional() })).optional() }).optional(),
  /** Where traffic goes when the local zone cannot take it. */
  crossZone: z
    .object({
      failover: goList(
        z.object({
          from: z.object({ zones: z.array(z.string()) }).optional(),
          to: z.object({ type: z.enum(['None', 'Only', 'Any', 'AnyExcept']), zones: z.array(z.string()).optional() }),
        }),
      ),
      failoverThreshold: z.object({ percentage: intOrString() }).optional(),
    })
    .optional(),
});

export const MeshLoadBalancingStrategyConfSchema = defaultConf({
  localityAwareness: LocalityAwarenessSchema.optional(),
  loadBalancer: LoadBalancerSchema.optional(),
});
export type MeshLoadBalancingStrategyConf = z.infer<typeof MeshLoadBalancingStrategyConfSchema>;

export const MeshLoadBalancingStrategySpecSchema = z.object({
  targetRef: TargetRefSchema,
  to: targetRefEntries(MeshLoadBalancingStrategyConfSchema),
});
export type MeshLoadBalancingStrategySpec = z.infer<typeof MeshLoadBalancingStrategySpecSchema>;

/** The field each hash policy type needs; `SourceIP` needs none. */
const HASH_POLICY_FIELDS: Partial<Record<HashPolicy['type'], keyof HashPolicy>> = {
  Header: 'header',
  Cookie: 'cookie',
  QueryParameter: 'queryParameter',
  FilterState: 'filterState',
};

function validateHashPolicies(v: Violations, path: string, policies: readonly HashPolicy[] | undefined): void {
  (policies ?? []).forEach((policy, i) => {
    const at = `${path}[${i}]`;
    const field = HASH_POLICY_FIELDS[policy.type];
    if (field !== undefined && policy[field] === undefined) v.add(fieldPath(at, field), MUST_BE_DEFINED);
    else if (policy.type === 'Cookie' && policy.cookie?.path !== undefined && !policy.cookie.path.startsWith('/')) {
      v.add(fieldPath(at, 'cookie.path'), 'must be an absolute path');
    }
  });
}

function validateLocalityAwareness(v: Violations, path: string, locality: z.infer<typeof LocalityAwarenessSchema>): void {
  const localZone = locality.localZone;
  if (localZone) {
    const tags = localZone.affinityTags ?? [];
    const at = fieldPath(path, 'localZone.affinityTags');
    let weighted = 0;
    tags.forEach((tag, i) => {
      if (tag.key === '') v.add(`${at}[${i}].key`, MUST_NOT_BE_EMPTY);
      if (tag.weight !== undefined) {
        integerGreaterThanZeroOrNil(v, `${at}[${i}].weight`, tag.weight);
        weighted++;
      }
    });
    if (weighted > 0 && weighted !== tags.length) v.add(at, 'all or none affinity tags should have weight');
  }
  const crossZone = locality.crossZone;
  if (!crossZone) return;
  const at = fieldPath(path, 'crossZone');
  (crossZone.failover ?? []).forEach((failover, i) => {
    const failoverPath = `${at}.failover[${i}]`;
    if (failover.from) {
      if (failover.from.zones.length === 0) v.add(fieldPath(failoverPath, 'from.zones'), MUST_NOT_BE_EMPTY);
      failover.from.zones.forEach((zone, j) => {
        if (zone === '') v.add(`${failoverPath}.from.zones[${j}]`, MUST_NOT_BE_EMPTY);
      });
    }
    const { type, zones = [] } = failover.to;
    const zonesPath = fieldPath(failoverPath, 'to.zones');
    if ((type === 'Any' || type === 'None') && zones.length > 0) v.add(zonesPath, `must be empty when type is ${type}`);
    if ((type === 'AnyExcept' || type === 'Only') && zones.length === 0) v.add(zonesPath, `must not be empty when type is ${type}`);
  });
  const threshold = crossZone.failoverThreshold;
  if (threshold) {
    intOrStringGreaterThan(v, fieldPath(at, 'failoverThreshold.percentage'), threshold.percentage, 0);
    intOrStringLessThan(v, fieldPath(at, 'failoverThreshold.percentage'), threshold.percentage, 100);
  }
}

function validateConf(v: Violations, path: string, conf: MeshLoadBalancingStrategyConf): void {
  const balancer = conf.loadBalancer;
  if (balancer?.type === 'RingHash' && balancer.ringHash) validateHashPolicies(v, fieldPath(path, 'loadBalancer.ringHash.hashPolicies'), balancer.ringHash.hashPolicies);
  if (balancer?.type === 'Maglev' && balancer.maglev) validateHashPolicies(v, fieldPath(path, 'loadBalancer.maglev.hashPolicies'), balancer.maglev.hashPolicies);
  if (conf.localityAwareness) validateLocalityAwareness(v, fieldPath(path, 'localityAwareness'), conf.localityAwareness);
}

export function validateMeshLoadBalancingStrategy(spec: MeshLoadBalancingStrategySpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset']);
  if (!spec.to) v.add('spec.to', NEEDS_AT_LEAST_ONE_ITEM);
  validateEntries(v, 'spec.to', spec.to, ['Mesh', 'MeshService'], validateConf);
  return v.list;
}

export const meshLoadBalancingStrategyKind = defineKind({
  name: 'MeshLoadBalancingStrategy',
  cliNames: { singular: 'meshloadbalancingstrategy', plural: 'meshloadbalancingstrategies' },
  path: 'meshloadbalancingstrategies',
  scope: 'mesh',
  displayName: 'Mesh Load Balancing Strategies',
  singularDisplayName: 'Mesh Load Balancing Strategy',
  targetRefPolicy: { from: false, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshLoadBalancingStrategySpecSchema,
  validate: validateMeshLoadBalancingStrategy,
  example: demo.inMesh('backend-balancing', { spec: { targetRef: demo.MESH, to: [{ targetRef: demo.BACKEND, default: { loadBalancer: { type: 'LeastRequest' } } }] } }),
});

// Builders for the tests: resources decoded from request bodies exactly as the API stores them.
import { applyMeshDefaults, decodeSpec, getKind, type MeshSpec } from '@mesh/model';
import {
  type DataplaneResource,
  type ExternalServiceResource,
  matchTargetRefPolicies,
  type PoliciesByKind,
  type PolicyKind,
  type PolicyOf,
  type PolicySpecs,
  type TargetRefMatch,
  type TargetRefPoliciesByKind,
  type TargetRefPolicyKind,
  type TargetRefPolicyOf,
  type TargetRefPolicySpecs,
  targetRefProxyOf,
} from '@mesh/policy-matcher';
import { type MeshContext, type MeshState, prepareMeshContext, type ZoneEgressResource, type ZoneIngressResource } from './mesh-context.js';

export const T0 = '2023-11-20T10:00:00.000Z';

function decoded<Spec>(kindName: string, body: object): Spec {
  const result = decodeSpec(getKind(kindName), body);
  if (!result.ok) throw new Error(`${kindName}: ${result.message}`);
  return result.spec as Spec;
}

/** A policy from its body (everything but type, mesh and name). */
export function policy<K extends PolicyKind>(kind: K, name: string, body: object, creationTime = T0): PolicyOf<K> {
  return { mesh: 'default', name, creationTime, modificationTime: creationTime, spec: decoded<PolicySpecs[K]>(kind, body) };
}

/** A targetRef policy from its spec (what a body carries under `spec`). */
export function targetRefPolicy<K extends TargetRefPolicyKind>(kind: K, name: string, spec: object): TargetRefPolicyOf<K> {
  return { mesh: 'default', name, creationTime: T0, modificationTime: T0, spec: decoded<TargetRefPolicySpecs[K]>(kind, spec) };
}

/** The targetRef policies selecting a dataplane of the context and their rules, as the control plane matches them. */
export const targetRefMatchOf = (context: MeshContext, dataplane: DataplaneResource, policies: TargetRefPoliciesByKind): TargetRefMatch =>
  matchTargetRefPolicies(targetRefProxyOf(dataplane, context.policies), { mesh: 'default', policies });

export const dataplane = (name: string, networking: object, extra: object = {}): DataplaneResource => ({
  mesh: 'default',
  name,
  spec: decoded('Dataplane', { networking, ...extra }),
});

export const externalService = (name: string, body: object): ExternalServiceResource => ({
  mesh: 'default',
  name,
  creationTime: T0,
  spec: decoded('ExternalService', body),
});

export const zoneIngress = (name: string, body: object): ZoneIngressResource => ({ name, spec: decoded('ZoneIngress', body) });
export const zoneEgress = (name: string, body: object): ZoneEgressResource => ({ name, spec: decoded('ZoneEgress', body) });

/** A Mesh spec with the defaults the API stores with it. */
export const meshSpec = (body: object): MeshSpec => applyMeshDefaults(decoded<MeshSpec>('Mesh', body));

export interface MeshFixture {
  readonly meshSpec?: MeshSpec;
  readonly dataplanes: readonly DataplaneResource[];
  readonly policies?: PoliciesByKind;
  readonly externalServices?: readonly ExternalServiceResource[];
  readonly extra?: Partial<Omit<MeshState, 'snapshot' | 'dataplanes'>>;
}

export const meshContextOf = (fixture: MeshFixture) =>
  prepareMeshContext({
    snapshot: {
      mesh: 'default',
      ...(fixture.meshSpec ? { meshSpec: fixture.meshSpec } : {}),
      policies: fixture.policies ?? {},
      externalServices: fixture.externalServices ?? [],
    },
    dataplanes: fixture.dataplanes,
    ...fixture.extra,
  });

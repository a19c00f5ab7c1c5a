// Builders for the tests: resources decoded from request bodies exactly as the API stores them.
import { type DataplaneOutbound, decodeSpec, getKind, type MeshSpec, SERVICE_TAG, type TagMap } from '@mesh/model';
import type { DataplaneResource, ExternalServiceResource, MeshSnapshot, PoliciesByKind, PolicyKind, PolicyOf, PolicySpecs } from './snapshot.js';
import type { TargetRefPoliciesByKind, TargetRefPolicyKind, TargetRefPolicyOf, TargetRefPolicySpecs, TargetRefSnapshot } from './target-ref-policies.js';

export const T0 = '2023-11-20T10:00:00.000Z';
export const T1 = '2023-11-20T11:00:00.000Z';

function decoded<Spec>(kindName: string, body: object): Spec {
  const result = decodeSpec(getKind(kindName), body);
  if (!result.ok) throw new Error(result.message);
  return result.spec as Spec;
}

export function policy<K extends PolicyKind>(kind: K, name: string, body: object, creationTime = T0): PolicyOf<K> {
  return { mesh: 'default', name, creationTime, modificationTime: creationTime, spec: decoded<PolicySpecs[K]>(kind, body) };
}

/** `{match: {mesh.io/service: service, ...extra}}` */
export const service = (name: string, extra: TagMap = {}) => ({ match: { [SERVICE_TAG]: name, ...extra } });
export const ANY = service('*');

/** A source/destination policy from one selector each. */
export function connection<K extends PolicyKind>(kind: K, name: string, source: object, destination: object, creationTime = T0, conf?: object): PolicyOf<K> {
  return policy(kind, name, { sources: [source], destinations: [destination], ...(conf ? { conf } : {}) }, creationTime);
}

export function dataplane(name: string, networking: object, extra: object = {}): DataplaneResource {
  return { mesh: 'default', name, spec: decoded('Dataplane', { networking, ...extra }) };
}

export function externalService(name: string, tags: TagMap, address = 'httpbin.org:443'): ExternalServiceResource {
  return { mesh: 'default', name, creationTime: T0, spec: decoded('ExternalService', { networking: { address }, tags }) };
}

export const meshSpecOf = (body: object): MeshSpec => decoded('Mesh', body);

/** Outbounds in their decoded form, as VIP outbounds are given. */
export const outboundsOf = (outbounds: object[]): DataplaneOutbound[] => dataplane('vips', { outbound: outbounds }).spec.networking?.outbound ?? [];

export const snapshotOf = (policies: PoliciesByKind, extra: Partial<MeshSnapshot> = {}): MeshSnapshot => ({ mesh: 'default', policies, ...extra });

/** The web-1 of the worked examples: inbound `{web, version v1}`, an outbound to backend. */
export const web1 = (outbounds: object[] = [{ port: 10001, tags: { [SERVICE_TAG]: 'backend' } }]) =>
  dataplane('web-1', {
    address: '10.0.0.1',
    inbound: [{ port: 8080, servicePort: 8081, tags: { [SERVICE_TAG]: 'web', version: 'v1' } }],
    outbound: outbounds,
  });

export const names = (policies: ReadonlyArray<{ name: string }>): string[] => policies.map((p) => p.name);

/** A targetRef policy from its spec (what a body carries under `spec`), decoded as stored. */
export function targetRefPolicy<K extends TargetRefPolicyKind>(kind: K, name: string, spec: object, mesh = 'default'): TargetRefPolicyOf<K> {
  return { mesh, name, creationTime: T0, modificationTime: T0, spec: decoded<TargetRefPolicySpecs[K]>(kind, spec) };
}

export const targetRefSnapshotOf = (policies: TargetRefPoliciesByKind): TargetRefSnapshot => ({ mesh: 'default', policies });

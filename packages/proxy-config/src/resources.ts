// Stored resources in the form matching and rendering read. Specs are stored as the JSON text of
// their normalised wire form, so parsing it gives what the matcher and the renderer expect.
import { type DataplaneSpec, type ExternalServiceSpec, KINDS, type MeshSpec, type ZoneEgressSpec, type ZoneIngressSpec } from '@mesh/model';
import type { AnyPolicy, AnyTargetRefPolicy, DataplaneResource, ExternalServiceResource, MeshResource } from '@mesh/policy-matcher';
import { parsedSpec, type StoredResource } from '@mesh/store';
import type { ZoneEgressResource, ZoneIngressResource } from '@mesh/xds-renderer';

/**
 * The kinds proxy configuration depends on, in the registry's order (the Mesh first): every kind
 * declaring its changes affect proxies. Changes of the others (insights, zones) are ignored.
 */
export const FOLLOWED_TYPES: ReadonlySet<string> = new Set(KINDS.filter((kind) => kind.affects !== 'nothing').map((kind) => kind.name));

/** A policy as handed to the matcher, carrying the stored resource it was read from. */
interface StoredPolicy {
  readonly stored: StoredResource;
}

const parse = <Spec>(resource: StoredResource): Spec => JSON.parse(resource.spec) as Spec;

/** A stored policy for the matcher; its spec is of the kind the stored type names. */
export function policyOf(stored: StoredResource): AnyPolicy {
  const policy: StoredPolicy & Omit<AnyPolicy, 'spec'> & { spec: unknown } = {
    mesh: stored.mesh,
    name: stored.name,
    creationTime: stored.creationTime,
    modificationTime: stored.modificationTime,
    spec: parse(stored),
    stored,
  };
  return policy as AnyPolicy;
}

/** A stored targetRef policy for the matcher (its stored spec is the one under `spec`). */
export const targetRefPolicyOf = (stored: StoredResource): AnyTargetRefPolicy => policyOf(stored) as unknown as AnyTargetRefPolicy;

/**
 * The stored resource of a policy found in a match: every policy this package hands to the
 * matcher carries it, and matches hold those very objects.
 */
export const storedPolicyOf = (policy: AnyPolicy | AnyTargetRefPolicy): StoredResource => (policy as (AnyPolicy | AnyTargetRefPolicy) & StoredPolicy).stored;

/** A stored dataplane for the matcher and the renderer: its spec is parsed once for every reader of that version (`parsedSpec`). */
export const dataplaneOf = (stored: StoredResource): DataplaneResource => ({ mesh: stored.mesh, name: stored.name, spec: parsedSpec<DataplaneSpec>(stored) });

/** A resource of a mesh with its parsed spec, as the matcher reads external services. */
export const meshResourceOf = <Spec = unknown>(stored: StoredResource): MeshResource<Spec> => ({
  mesh: stored.mesh,
  name: stored.name,
  creationTime: stored.creationTime,
  modificationTime: stored.modificationTime,
  spec: parse<Spec>(stored),
});

export const externalServiceOf = (stored: StoredResource): ExternalServiceResource => meshResourceOf<ExternalServiceSpec>(stored);

export const meshSpecOf = (stored: StoredResource): MeshSpec => parse<MeshSpec>(stored);

/** A Secret's base64 data. */
export const secretDataOf = (stored: StoredResource): string => parse<{ data?: string }>(stored).data ?? '';

export const zoneIngressOf = (stored: StoredResource): ZoneIngressResource => ({ name: stored.name, spec: parse<ZoneIngressSpec>(stored) });

export const zoneEgressOf = (stored: StoredResource): ZoneEgressResource => ({ name: stored.name, spec: parse<ZoneEgressSpec>(stored) });

/** The names of the Secrets an external service's TLS settings read. */
export function secretsUsedBy(externalService: ExternalServiceResource): string[] {
  const tls = externalService.spec.networking?.tls;
  return [tls?.caCert, tls?.clientCert, tls?.clientKey].flatMap((source) => (source?.secret === undefined ? [] : [source.secret]));
}

/** A resource as stored and as read. */
export interface Held<T> {
  readonly stored: StoredResource;
  readonly value: T;
}

/** Keeps the stored state of a resource with what it reads as; false when it did not change. */
export function setHeld<T>(held: Map<string, Held<T>>, name: string, stored: StoredResource | undefined, read: (stored: StoredResource) => T): boolean {
  if (held.get(name)?.stored === stored) return false;
  if (stored) held.set(name, { stored, value: read(stored) });
  else held.delete(name);
  return true;
}

/** Code-unit order, as the store lists names. */
export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The values of a map by name, in the store's order. */
export const inNameOrder = <T>(byKey: ReadonlyMap<string, T>): T[] => [...byKey.keys()].sort(byName).map((key) => byKey.get(key) as T);

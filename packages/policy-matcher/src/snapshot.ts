// What matching reads: a dataplane and a snapshot of its mesh, as plain decoded resources.
import type { DataplaneOutbound, DataplaneSpec, ExternalServiceSpec, MeshSpec, PolicyKind, PolicySpecOf } from '@mesh/model';

/**
 * A mesh-scoped resource with its spec in the normalised wire form. Matching hands back these
 * very objects, so a caller may carry more fields on them (labels, versions) and find them again.
 */
export interface MeshResource<Spec> {
  readonly mesh: string;
  readonly name: string;
  /** RFC 3339; decides ties between equally specific policies (the newer wins). */
  readonly creationTime: string;
  readonly modificationTime?: string;
  readonly spec: Spec;
}

export interface DataplaneResource {
  readonly mesh: string;
  readonly name: string;
  readonly spec: DataplaneSpec;
}

/** The policy kinds of the registry (`POLICY_KINDS` in `@mesh/model`), with their spec types. */
export type { PolicyKind } from '@mesh/model';
export type PolicySpecs = { [K in PolicyKind]: PolicySpecOf<K> };
export type PolicyOf<K extends PolicyKind> = MeshResource<PolicySpecs[K]>;
export type AnyPolicy = { [K in PolicyKind]: PolicyOf<K> }[PolicyKind];
export type ExternalServiceResource = MeshResource<ExternalServiceSpec>;

export type PoliciesByKind = { readonly [K in PolicyKind]?: readonly PolicyOf<K>[] };

export interface MeshSnapshot {
  /** The mesh's name. */
  readonly mesh: string;
  /** The Mesh's spec: its enabled prometheus backend adds a metrics inbound to every sidecar. */
  readonly meshSpec?: MeshSpec;
  readonly policies: PoliciesByKind;
  readonly externalServices?: readonly ExternalServiceResource[];
  /** Outbounds with virtual IPs the control plane gives transparent-proxy dataplanes. */
  readonly vipOutbounds?: readonly DataplaneOutbound[];
}

/** A creation time as comparable numbers: milliseconds since the epoch, then the nanoseconds below. */
export interface Instant {
  readonly millis: number;
  readonly nanos: number;
}

const FRACTION = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/;

/** Parses RFC 3339 to nanosecond precision (Date.parse stops at milliseconds); unreadable is oldest. */
export function instantOf(time: string): Instant {
  const parts = FRACTION.exec(time);
  const millis = Date.parse(parts ? `${parts[1]}${parts[3]}` : time);
  if (Number.isNaN(millis)) return { millis: Number.NEGATIVE_INFINITY, nanos: 0 };
  const fraction = (parts?.[2] ?? '').slice(0, 9).padEnd(9, '0');
  return { millis: millis + Number(fraction.slice(0, 3)), nanos: Number(fraction.slice(3)) };
}

export const compareInstants = (a: Instant, b: Instant): number => (a.millis !== b.millis ? a.millis - b.millis : a.nanos - b.nanos);

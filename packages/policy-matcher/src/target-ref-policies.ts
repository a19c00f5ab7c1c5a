// The targetRef policies as matching reads them (docs/matching.md, targetRef policies): plain
// resources of the kinds in `TARGET_REF_POLICY_KINDS`, prepared once per mesh state.
import { createHash } from 'node:crypto';
import {
  type HttpRouteMatch,
  type TargetRef,
  type TargetRefPolicyKind,
  type TargetRefPolicySpecOf,
  targetRefPolicyKinds,
  targetRefRank,
} from '@mesh/model';
import type { MeshResource } from './snapshot.js';

export type { TargetRefPolicyKind } from '@mesh/model';
export type TargetRefPolicySpecs = { [K in TargetRefPolicyKind]: TargetRefPolicySpecOf<K> };
export type TargetRefPolicyOf<K extends TargetRefPolicyKind> = MeshResource<TargetRefPolicySpecs[K]>;
export type AnyTargetRefPolicy = { [K in TargetRefPolicyKind]: TargetRefPolicyOf<K> }[TargetRefPolicyKind];
export type TargetRefPoliciesByKind = { readonly [K in TargetRefPolicyKind]?: readonly TargetRefPolicyOf<K>[] };

/** A policy whose spec has the top-level `targetRef` every targetRef kind has. */
export interface TargetingPolicy {
  readonly mesh: string;
  readonly name: string;
  readonly spec: { readonly targetRef: TargetRef };
}

/** The targetRef policies of one mesh, each kind in the order the store lists them (by name). */
export interface TargetRefSnapshot {
  readonly mesh: string;
  readonly policies: TargetRefPoliciesByKind;
}

/** A snapshot prepared for matching many proxies: each kind least specific first, then by name. */
export interface TargetRefIndex {
  readonly snapshot: TargetRefSnapshot;
  /** The policies of a kind, least specific top-level targetRef first, then by name. */
  ranked<K extends TargetRefPolicyKind>(kind: K): readonly TargetRefPolicyOf<K>[];
  /** The MeshHTTPRoutes a policy may target, in store order. */
  readonly routes: readonly TargetRefPolicyOf<'MeshHTTPRoute'>[];
}

/** The targetRef kinds by name, the order kinds are reported in. */
export const TARGET_REF_POLICY_KIND_NAMES: readonly TargetRefPolicyKind[] = targetRefPolicyKinds()
  .map((kind) => kind.name)
  .sort();

const rankOfRef = (ref: TargetRef): number => (ref.kind === undefined ? -1 : targetRefRank(ref.kind));

/** Least specific top-level targetRef first (Mesh ... MeshHTTPRoute), then by name. */
export function byTargetRef(a: TargetingPolicy, b: TargetingPolicy): number {
  const rank = rankOfRef(a.spec.targetRef) - rankOfRef(b.spec.targetRef);
  if (rank !== 0) return rank;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

const indexes = new WeakMap<TargetRefSnapshot, TargetRefIndex>();

/** The index of a snapshot, built once per snapshot object. */
export function indexTargetRefPolicies(snapshot: TargetRefSnapshot): TargetRefIndex {
  let index = indexes.get(snapshot);
  if (!index) {
    const ranked = new Map<TargetRefPolicyKind, readonly TargetingPolicy[]>();
    for (const kind of TARGET_REF_POLICY_KIND_NAMES) {
      const policies: readonly TargetingPolicy[] = snapshot.policies[kind] ?? [];
      ranked.set(kind, [...policies].sort(byTargetRef));
    }
    index = {
      snapshot,
      ranked: <K extends TargetRefPolicyKind>(kind: K) => (ranked.get(kind) ?? []) as readonly TargetRefPolicyOf<K>[],
      routes: snapshot.policies.MeshHTTPRoute ?? [],
    };
    indexes.set(snapshot, index);
  }
  return index;
}

export const targetRefIndexOf = (source: TargetRefSnapshot | TargetRefIndex): TargetRefIndex =>
  'ranked' in source ? source : indexTargetRefPolicies(source);

// The name a resource synced from a global control plane may carry in a zone: its name, `-`, and
// 16 characters from an FNV-1a hash of mesh and name, spelled in a vowel-free alphabet.
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const U64 = 0xffffffffffffffffn;

const syncedNames = new Map<string, string>();

function syncedName(mesh: string, name: string): string {
  const key = `${mesh}\u0000${name}`;
  let synced = syncedNames.get(key);
  if (synced === undefined) {
    // Names come and go with resources: the memo starts over rather than grow without end.
    if (syncedNames.size >= 10_000) syncedNames.clear();
    synced = hashedName(mesh, name);
    syncedNames.set(key, synced);
  }
  return synced;
}

function hashedName(mesh: string, name: string): string {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(mesh + name, 'utf8')) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & U64;
  const hex = hash.toString(16).padStart(16, '0');
  const suffix = [...hex].map((char) => SAFE_ALPHABET[(char.codePointAt(0) ?? 0) % SAFE_ALPHABET.length]).join('');
  return `${name.slice(0, 253 - 17)}-${suffix}`;
}

/**
 * Whether a targetRef's name refers to a resource of the mesh: the same name, or either one the
 * name the other gets when synced to a zone.
 */
export const namesReferTo = (mesh: string, refName: string, name: string): boolean =>
  refName === name || syncedName(mesh, refName) === name || syncedName(mesh, name) === refName;

const goJsonEscapes: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/** A string as Go's JSON encoder writes it (HTML-safe). */
const goString = (text: string): string => JSON.stringify(text).replace(/[<>&\u2028\u2029]/g, (char) => goJsonEscapes[char] ?? char);

const goObject = (fields: Array<[string, string | undefined]>): string =>
  `{${fields
    .filter((field): field is [string, string] => field[1] !== undefined)
    .map(([key, value]) => `"${key}":${value}`)
    .join(',')}}`;

const goArray = <T>(items: readonly T[] | undefined, write: (item: T) => string): string | undefined =>
  items && items.length > 0 ? `[${items.map(write).join(',')}]` : undefined;

/** A route rule's matches as Go writes them: fields in declaration order, empty ones left out. */
function goMatches(matches: readonly HttpRouteMatch[]): string {
  const text = (value: string | undefined) => (value === undefined ? undefined : goString(value));
  return `[${matches
    .map((match) =>
      goObject([
        ['path', match.path && goObject([['value', goString(match.path.value)], ['type', goString(match.path.type)]])],
        ['method', text(match.method)],
        ['queryParams', goArray(match.queryParams, (param) => goObject([['type', goString(param.type)], ['name', goString(param.name)], ['value', goString(param.value)]]))],
        ['headers', goArray(match.headers, (header) => goObject([['type', text(header.type)], ['name', goString(header.name)], ['value', header.value ? goString(header.value) : undefined]]))],
      ]),
    )
    .join(',')}]`;
}

/** The tag a MeshHTTPRoute rule's traffic carries in rules: base64 of the SHA-256 of its matches' JSON. */
export const RULE_MATCHES_HASH_TAG = '__rule-matches-hash__';

export const ruleMatchesHash = (matches: readonly HttpRouteMatch[]): string => createHash('sha256').update(goMatches(matches)).digest('base64');

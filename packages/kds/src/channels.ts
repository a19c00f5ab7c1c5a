// What flows each way between the global and a zone, how the receiver names it, and which of the
// receiver's resources a sender owns (docs/multizone.md, What flows where).
import { createPrivateKey, createPublicKey } from 'node:crypto';
import {
  dataplaneKind,
  globalSecretKind,
  KINDS,
  ORIGIN_LABEL,
  syncsGlobalToZone,
  syncsZoneToGlobal,
  ZONE_LABEL,
  ZONE_TAG,
  zoneEgressKind,
  zoneIngressKind,
  zoneKind,
  type AnyKind,
  type DataplaneSpec,
  type ZoneIngressSpec,
} from '@mesh/model';
import type { SyncedCopy } from '@mesh/resource-manager';
import type { ResourceChange, ResourceKey, ResourceReader, StoredResource } from '@mesh/store';
import { keyPlace, ZONE_TOKEN_PUBLIC_KEY_PREFIX } from '@mesh/tokens';
import { ZONE_TOKEN_FEATURE, type SyncMessage } from './protocol.js';

type PeerKey = { mesh: string; name: string };

/** One direction of sync as its sender sees it, for one peer. */
export interface Channel {
  /** The kinds it carries, in the order a full sync sends them. */
  readonly kinds: readonly AnyKind[];
  /** The copy the peer gets of a stored resource; undefined when it is not for this peer. */
  outgoing(stored: StoredResource): Promise<SyncedCopy | undefined>;
  /** The peer's name for a key of ours; undefined for keys this channel never carries. */
  peerKey(key: ResourceKey): PeerKey | undefined;
  /** Other keys whose copies may change with this change (a Zone's ingresses); undefined when there are none. */
  related(change: ResourceChange): Promise<ResourceKey[]> | undefined;
}

const ZONE_INGRESS_KEY_PREFIX = keyPlace('zoneIngress').prefix;
const ZONE_TOKEN_KEY_PREFIX = keyPlace('zone').prefix;

/** Kinds stored and synced this way (computed kinds are never stored). */
const kindsWhere = (flows: (kind: AnyKind) => boolean): AnyKind[] => KINDS.filter((kind) => !kind.computed && flows(kind));

export const GLOBAL_TO_ZONE_KINDS = kindsWhere(syncsGlobalToZone);
export const ZONE_TO_GLOBAL_KINDS = kindsWhere(syncsZoneToGlobal);

const copyOf = (stored: StoredResource, name = stored.name, spec = stored.spec): SyncedCopy => ({
  mesh: stored.mesh,
  name,
  spec,
  labels: { ...stored.labels },
  creationTime: stored.creationTime,
});

const ingressZone = (stored: StoredResource): string => (JSON.parse(stored.spec) as ZoneIngressSpec).zone ?? '';

/** The serial of a zone-token signing key, when the name is one. */
const zoneTokenSerial = (name: string): string | undefined =>
  name === ZONE_TOKEN_KEY_PREFIX ? '0' : name.startsWith(`${ZONE_TOKEN_KEY_PREFIX}-`) ? name.slice(ZONE_TOKEN_KEY_PREFIX.length + 1) : undefined;

const publicKeyName = (serial: string) => (serial === '0' ? ZONE_TOKEN_PUBLIC_KEY_PREFIX : `${ZONE_TOKEN_PUBLIC_KEY_PREFIX}-${serial}`);

/** A zone-token signing key as zones get it: the public half, PEM `RSA PUBLIC KEY`. */
function publicKeySpec(stored: StoredResource): string {
  const data = Buffer.from((JSON.parse(stored.spec) as { data?: string }).data ?? '', 'base64');
  const text = data.toString('utf8');
  const privateKey = text.includes('-----BEGIN') ? createPrivateKey(text) : createPrivateKey({ key: data, format: 'der', type: 'pkcs1' });
  const pem = createPublicKey(privateKey).export({ type: 'pkcs1', format: 'pem' }).toString();
  return JSON.stringify({ data: Buffer.from(pem).toString('base64') });
}

/**
 * What the global sends one zone: meshes, policies, secrets, external services as they are; of
 * the global secrets only the zone-ingress signing keys and (to a zone that asks) the public
 * halves of the zone-token keys; other zones' ingresses, unless their zone is disabled.
 */
export function globalToZone(store: ResourceReader, zone: string, features: readonly string[]): Channel {
  const wantsZoneTokenKeys = features.includes(ZONE_TOKEN_FEATURE);
  const zoneEnabled = async (name: string) => {
    const stored = await store.get({ type: zoneKind.name, mesh: '', name });
    return !stored || (JSON.parse(stored.spec) as { enabled?: boolean }).enabled !== false;
  };
  const globalSecretName = (name: string): string | undefined => {
    if (name.startsWith(ZONE_INGRESS_KEY_PREFIX)) return name;
    const serial = zoneTokenSerial(name);
    return serial !== undefined && wantsZoneTokenKeys ? publicKeyName(serial) : undefined;
  };
  return {
    kinds: GLOBAL_TO_ZONE_KINDS,
    async outgoing(stored) {
      if (stored.type === globalSecretKind.name) {
        const name = globalSecretName(stored.name);
        if (name === undefined) return undefined;
        return name === stored.name ? copyOf(stored) : copyOf(stored, name, publicKeySpec(stored));
      }
      if (stored.type === zoneIngressKind.name) {
        const from = ingressZone(stored);
        if (from === '' || from === zone || !(await zoneEnabled(from))) return undefined;
      }
      return copyOf(stored);
    },
    peerKey(key) {
      if (key.type !== globalSecretKind.name) return { mesh: key.mesh, name: key.name };
      const name = globalSecretName(key.name);
      return name === undefined ? undefined : { mesh: '', name };
    },
    related(change) {
      if (change.type !== zoneKind.name) return undefined;
      return store.list({ type: zoneIngressKind.name, offset: 0, size: 0 }).then(({ items }) =>
        items.filter((ingress) => ingressZone(ingress) === change.name).map(({ type, mesh, name }) => ({ type, mesh, name })),
      );
    },
  };
}

/** The zone a dataplane belongs to: its first inbound's zone tag, or its gateway's. */
function dataplaneZone(stored: StoredResource): string | undefined {
  const networking = (JSON.parse(stored.spec) as DataplaneSpec).networking;
  return (networking?.gateway?.tags ?? networking?.inbound?.[0]?.tags)?.[ZONE_TAG];
}

/** Zeroes subscription generations, which move while a proxy stays connected, so they cause no sync. */
function withoutGenerations(spec: string): string {
  const insight = JSON.parse(spec) as { subscriptions?: Array<{ generation?: number }> };
  if (!insight.subscriptions?.some((s) => s.generation)) return spec;
  return JSON.stringify({ ...insight, subscriptions: insight.subscriptions.map(({ generation: _, ...rest }) => rest) });
}

const INSIGHT_KINDS = new Set(ZONE_TO_GLOBAL_KINDS.filter((kind) => kind.readOnly).map((kind) => kind.name));

/**
 * What a zone sends the global: its own dataplanes (tagged with this zone), their insights, its
 * zone ingresses (not the copies of other zones' ingresses it received) and egresses with
 * theirs, each named `<zone>.<name>`; ingresses and egresses say which zone they are in.
 */
export function zoneToGlobal(zone: string): Channel {
  return {
    kinds: ZONE_TO_GLOBAL_KINDS,
    // eslint-disable-next-line @typescript-eslint/require-await -- a channel's copies may need the store (globalToZone's do); a zone's need only the resource
    async outgoing(stored) {
      const name = `${zone}.${stored.name}`;
      if (stored.type === dataplaneKind.name) return dataplaneZone(stored) === zone ? copyOf(stored, name) : undefined;
      if (stored.type === zoneIngressKind.name || stored.type === zoneEgressKind.name) {
        if (stored.labels[ORIGIN_LABEL] === 'global') return undefined;
        return copyOf(stored, name, JSON.stringify({ ...JSON.parse(stored.spec), zone }));
      }
      if (INSIGHT_KINDS.has(stored.type)) return copyOf(stored, name, withoutGenerations(stored.spec));
      return copyOf(stored, name);
    },
    peerKey(key) {
      return { mesh: key.mesh, name: `${zone}.${key.name}` };
    },
    related: () => undefined,
  };
}

/**
 * What the global owns on a zone: everything of the kinds it sends, but for the zone's own global
 * secrets (admin token, user-token keys) and its own ingresses.
 */
export function ownedByGlobal(localZone: string): (stored: StoredResource) => boolean {
  return (stored) => {
    if (stored.type === globalSecretKind.name) return stored.name.startsWith(ZONE_INGRESS_KEY_PREFIX) || stored.name.startsWith(ZONE_TOKEN_PUBLIC_KEY_PREFIX);
    if (stored.type === zoneIngressKind.name) {
      const from = ingressZone(stored);
      return from !== '' && from !== localZone;
    }
    return true;
  };
}

/** What a zone owns on the global: the `<zone>.` names it sent. */
export function ownedByZone(zone: string): (stored: StoredResource) => boolean {
  return (stored) => stored.labels[ZONE_LABEL] === zone && stored.name.startsWith(`${zone}.`);
}

/**
 * Why the global refuses what a zone sent, or undefined: a zone names its copies `<zone>.<name>`
 * and its ingresses and egresses say they are in that zone, so it can touch nothing of another's.
 */
export function zoneMessageProblem(zone: string, message: SyncMessage): string | undefined {
  const prefix = `${zone}.`;
  for (const part of message.kinds) {
    for (const { name } of [...part.resources, ...part.removed]) {
      if (!name.startsWith(prefix)) return `${part.type} "${name}": zone ${zone} may only send names starting with "${prefix}"`;
    }
    if (part.type !== zoneIngressKind.name && part.type !== zoneEgressKind.name) continue;
    for (const copy of part.resources) {
      let claimed: unknown;
      try {
        claimed = (JSON.parse(copy.spec) as { zone?: unknown }).zone;
      } catch {
        return `${part.type} "${copy.name}": the spec is not JSON`;
      }
      if (claimed !== zone) return `${part.type} "${copy.name}": zone ${zone} may only send its own, got one in zone ${JSON.stringify(claimed)}`;
    }
  }
  return undefined;
}

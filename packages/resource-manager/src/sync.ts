// Applying what zone sync received: one batch of one or more kinds in one transaction, with the
// sender's cursor, as docs/multizone.md (Applying a batch) describes.
import { DomainError, findKind, ORIGIN_LABEL, ZONE_LABEL, zoneKind, type AnyKind } from '@mesh/model';
import type { BatchWrite, ResourceKey, ResourceReader, StoredResource } from '@mesh/store';

/** A resource as the sender sends it: its receiver-side name, spec JSON text, labels and creation time. */
export interface SyncedCopy {
  mesh: string;
  name: string;
  spec: string;
  labels?: Record<string, string>;
  creationTime?: string;
}

/** What a batch brings of one kind: copies to hold, and names to let go of. */
export interface SyncedKindBatch {
  kind: AnyKind;
  resources: readonly SyncedCopy[];
  removed: ReadonlyArray<{ mesh: string; name: string }>;
}

export interface SyncBatch {
  /** Where it comes from: the global (on a zone), or a zone (on the global). */
  origin: 'global' | { zone: string };
  /**
   * The sender's full state of each kind in the batch: what the receiver holds from this sender
   * and the batch lacks is deleted. Otherwise only what is named changes.
   */
  full: boolean;
  kinds: readonly SyncedKindBatch[];
  /** Which stored resources the sender owns: a full batch prunes only those. */
  owns: (stored: StoredResource) => boolean;
  /** Settings written in the same transaction (the cursor the batch brings the receiver to). */
  settings?: Record<string, string | null>;
}

/** The setting a receiver keeps its cursor of a sender in (`global`, or a zone's name). */
export const syncCursorSetting = (sender: string): string => `sync.cursor.${sender}`;

const keyString = (key: { mesh: string; name: string }) => `${key.mesh}/${key.name}`;

const sameLabels = (a: Record<string, string>, b: Record<string, string>): boolean => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
};

/**
 * The writes that bring the stored copies of a batch's kinds to the sender's state: creates and
 * updates of what differs (spec or labels), deletes of what the sender removed or, for a full
 * batch, no longer has. Specs are decoded by the kind's schema and stored in its normal form,
 * so a copy that did not change writes nothing (applying a batch twice changes nothing).
 */
export async function syncWrites(store: ResourceReader, batch: SyncBatch): Promise<BatchWrite[]> {
  const writes: BatchWrite[] = [];
  const labelled = originLabels(batch.origin);
  for (const { kind, resources, removed } of batch.kinds) {
    const keyOf = (at: { mesh: string; name: string }): ResourceKey => ({ type: kind.name, mesh: kind.scope === 'mesh' ? at.mesh : '', name: at.name });
    const incoming = new Map(resources.map((copy) => [keyString(keyOf(copy)), copy]));
    const held = new Map<string, StoredResource>();
    const keep = (stored: StoredResource) => {
      if (batch.owns(stored)) held.set(keyString(stored), stored);
      // A sender never replaces what another owns (a local resource, another zone's copy).
      else if (incoming.has(keyString(stored))) throw new DomainError('bad_request', `${kind.name} "${stored.name}" belongs to another owner and cannot be synced over`, { title: 'Bad Request' });
    };
    if (batch.full) {
      for (const stored of (await store.list({ type: kind.name, offset: 0, size: 0 })).items) keep(stored);
    } else {
      for (const at of [...resources, ...removed]) {
        const stored = await store.get(keyOf(at));
        if (stored) keep(stored);
      }
    }
    const goners = batch.full ? [...held.keys()].filter((key) => !incoming.has(key)) : removed.map((at) => keyString(keyOf(at))).filter((key) => held.has(key) && !incoming.has(key));
    for (const key of goners) writes.push({ operation: 'delete', key: keyOf(held.get(key)!) });
    for (const [key, copy] of incoming) {
      const spec = normalisedSpec(kind, copy);
      const labels = { ...withoutOriginLabel(copy.labels ?? {}), ...labelled };
      const current = held.get(key);
      if (current && current.spec === spec && sameLabels(current.labels, labels)) continue;
      writes.push({ operation: 'upsert', resource: { ...keyOf(copy), spec, labels, ...(current ? {} : copy.creationTime ? { creationTime: copy.creationTime } : {}) } });
    }
  }
  return writes;
}

/** The kind a sender names, refused when it is unknown (the receiver answers with the error). */
export function syncedKind(type: string): AnyKind {
  const kind = findKind(type);
  if (!kind || kind.computed) throw new DomainError('bad_request', `unknown resource kind ${type}`, { title: 'Bad Request' });
  return kind;
}

/** A zone's copies need its Zone on the global: they go when it is deleted. */
export async function requireZone(store: ResourceReader, zone: string): Promise<void> {
  if (!(await store.get({ type: zoneKind.name, mesh: '', name: zone }))) {
    throw new DomainError('bad_request', `Zone "${zone}" not found`, { title: 'Bad Request' });
  }
}

function normalisedSpec(kind: AnyKind, copy: SyncedCopy): string {
  let decoded: unknown;
  try {
    decoded = kind.schema.parse(JSON.parse(copy.spec));
  } catch (error) {
    throw new DomainError('bad_request', `${kind.name} "${copy.name}" is not a valid ${kind.name}: ${(error as Error).message}`, { title: 'Bad Request' });
  }
  return JSON.stringify(decoded);
}

/** The labels that say where a synced copy came from. */
function originLabels(origin: SyncBatch['origin']): Record<string, string> {
  if (origin === 'global') return { [ORIGIN_LABEL]: 'global' };
  return { [ORIGIN_LABEL]: 'zone', [ZONE_LABEL]: origin.zone };
}

/** A copy says where it comes from anew; the zone it was first registered in (an ingress passed on) stays. */
function withoutOriginLabel(labels: Record<string, string>): Record<string, string> {
  const { [ORIGIN_LABEL]: _origin, ...rest } = labels;
  return rest;
}

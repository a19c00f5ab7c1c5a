// A Zone on the global owns what its zone control plane synced up (docs/multizone.md): it cannot
// be deleted while that control plane is connected, and takes everything of its zone when it goes.
import { invalidResource, KINDS, syncsZoneToGlobal, ZONE_LABEL, zoneInsightKind, type ZoneInsightSpec } from '@mesh/model';
import type { BatchWrite } from '@mesh/store';
import type { KindHooks } from './hooks.js';
import { syncCursorSetting } from './sync.js';

const isOpen = (subscription: { connectTime?: string; disconnectTime?: string }) => subscription.connectTime !== undefined && subscription.disconnectTime === undefined;

export const zoneHooks: KindHooks = {
  async beforeDelete(ctx, current) {
    const insight = await ctx.store.get({ type: zoneInsightKind.name, mesh: '', name: current.name });
    const subscriptions = insight ? ((JSON.parse(insight.spec) as ZoneInsightSpec).subscriptions ?? []) : [];
    if (subscriptions.some(isOpen)) {
      throw invalidResource([{ field: 'zone', message: 'unable to delete Zone, Zone CP is still connected, please shut it down first' }]);
    }
  },
  async delete(ctx, key) {
    const writes: BatchWrite[] = [{ operation: 'delete', key }, { operation: 'delete', key: { type: zoneInsightKind.name, mesh: '', name: key.name } }];
    for (const kind of KINDS.filter(syncsZoneToGlobal)) {
      for (const stored of (await ctx.store.list({ type: kind.name, offset: 0, size: 0 })).items) {
        if (stored.labels[ZONE_LABEL] === key.name) writes.push({ operation: 'delete', key: { type: stored.type, mesh: stored.mesh, name: stored.name } });
      }
    }
    // A zone that connects again after this is a new one: it syncs everything afresh.
    await ctx.store.writeBatch(writes, { settings: { [syncCursorSetting(key.name)]: null } });
  },
};

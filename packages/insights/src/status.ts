// Whether proxies and zones are up, from their insights (docs/insights.md, Status).
import type { StoredDataplane, StoredDataplaneInsight, StoredZone, StoredZoneInsight, Subscription } from './stored.js';

export type DataplaneStatus = 'online' | 'offline' | 'partiallyDegraded';

/** Connected: some subscription has connected and not disconnected. */
export const isConnected = (subscriptions: readonly Subscription[] | undefined): boolean =>
  (subscriptions ?? []).some((s) => s.connectTime !== undefined && s.disconnectTime === undefined);

/**
 * A proxy without a connected subscription is offline; so is one whose every inbound reports
 * not ready (a gateway has no inbounds to report). Some unready inbounds: partially degraded.
 */
export function dataplaneStatus(dataplane: StoredDataplane, insight: StoredDataplaneInsight | undefined): DataplaneStatus {
  if (!isConnected(insight?.subscriptions)) return 'offline';
  if (dataplane.networking?.gateway) return 'online';
  const inbounds = dataplane.networking?.inbound ?? [];
  const notReady = inbounds.filter((inbound) => inbound.health !== undefined && !inbound.health.ready).length;
  if (notReady === inbounds.length) return 'offline';
  return notReady === 0 ? 'online' : 'partiallyDegraded';
}

/** `/status/zones`: a zone is active when its control plane is connected and the zone enabled. */
export function zoneStatus(zone: StoredZone, insight: StoredZoneInsight | undefined): { active: boolean; url: string } {
  const subscriptions = insight?.subscriptions ?? [];
  return {
    active: isConnected(subscriptions) && zone.enabled !== false,
    url: subscriptions.at(-1)?.url ?? '',
  };
}

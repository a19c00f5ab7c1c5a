// What the pages derive from a proxy's overview (docs/insights.md, Status): the same rules as the
// control plane's insights, so a proxy's row agrees with the counts on the home page.
import type { Schemas } from './api/client.js';

export type DataplaneOverview = Schemas['DataplaneOverview'];
export type ProxyStatus = 'online' | 'offline' | 'partiallyDegraded';
export type ProxyType = 'standard' | 'builtin' | 'delegated';

type Subscription = NonNullable<NonNullable<DataplaneOverview['dataplaneInsight']>['subscriptions']>[number];

/** Connected: some subscription has connected and not disconnected. */
export const isConnected = (subscriptions: ReadonlyArray<{ connectTime?: string; disconnectTime?: string }> | undefined): boolean =>
  (subscriptions ?? []).some((subscription) => subscription.connectTime !== undefined && subscription.disconnectTime === undefined);

/**
 * Offline without a connected subscription, or when every inbound reports itself not ready;
 * partially degraded when some do; online otherwise (a gateway has no inbounds to report).
 */
export function proxyStatus(overview: Pick<DataplaneOverview, 'dataplane' | 'dataplaneInsight'>): ProxyStatus {
  if (!isConnected(overview.dataplaneInsight?.subscriptions)) return 'offline';
  const networking = overview.dataplane.networking;
  if (networking?.gateway) return 'online';
  const inbounds = networking?.inbound ?? [];
  const notReady = inbounds.filter((inbound) => inbound.health !== undefined && !inbound.health.ready).length;
  if (notReady === inbounds.length) return 'offline';
  return notReady === 0 ? 'online' : 'partiallyDegraded';
}

export function proxyType(overview: Pick<DataplaneOverview, 'dataplane'>): ProxyType {
  const gateway = overview.dataplane.networking?.gateway;
  if (!gateway) return 'standard';
  return gateway.type === 'BUILTIN' ? 'builtin' : 'delegated';
}

/** The services of a proxy: its inbounds' `mesh.io/service` tags, or its gateway's. */
export function proxyServices(overview: Pick<DataplaneOverview, 'dataplane'>): string[] {
  const networking = overview.dataplane.networking;
  const tagSets = networking?.gateway ? [networking.gateway.tags ?? {}] : (networking?.inbound ?? []).map((inbound) => inbound.tags ?? {});
  return [...new Set(tagSets.map((tags) => tags['mesh.io/service']).filter((service): service is string => service !== undefined))];
}

export const STATUS_LABELS: Readonly<Record<ProxyStatus, string>> = { online: 'Online', offline: 'Offline', partiallyDegraded: 'Partially degraded' };
export const TYPE_LABELS: Readonly<Record<ProxyType, string>> = { standard: 'Standard', builtin: 'Builtin gateway', delegated: 'Delegated gateway' };

/** The subscription a proxy holds now, else its latest one. */
export function currentSubscription(overview: Pick<DataplaneOverview, 'dataplaneInsight'>): Subscription | undefined {
  const subscriptions = overview.dataplaneInsight?.subscriptions ?? [];
  return subscriptions.find((subscription) => subscription.connectTime !== undefined && subscription.disconnectTime === undefined) ?? subscriptions.at(-1);
}

// What the zone pages derive from the overviews of zones and of their ingresses and egresses
// (docs/insights.md, Status): the same rules as the global's own zone status.
import type { Schemas } from './api/client.js';
import { isConnected } from './status.js';

export type ZoneOverview = Schemas['ZoneOverview'];
export type ZoneSyncSession = NonNullable<NonNullable<ZoneOverview['zoneInsight']>['subscriptions']>[number];

/** Online while the zone is enabled and one of its sync sessions is connected. */
export const zoneStatus = (zone: Pick<ZoneOverview, 'zone' | 'zoneInsight'>): 'online' | 'offline' =>
  isConnected(zone.zoneInsight?.subscriptions) && zone.zone.enabled !== false ? 'online' : 'offline';

/** The session the zone's control plane holds now, else its latest one. */
export function currentSession(zone: Pick<ZoneOverview, 'zoneInsight'>): ZoneSyncSession | undefined {
  const sessions = zone.zoneInsight?.subscriptions ?? [];
  return sessions.find((session) => session.connectTime !== undefined && session.disconnectTime === undefined) ?? sessions.at(-1);
}

/** The zone control plane's version, as its latest session reported it. */
export const zoneVersion = (zone: Pick<ZoneOverview, 'zoneInsight'>): string | undefined => currentSession(zone)?.version?.meshCp?.version || undefined;

/**
 * The zone control plane's environment (universal, kubernetes), from the configuration it
 * reported; older sessions keep no configuration, so the latest that has one tells.
 */
export function zoneType(zone: Pick<ZoneOverview, 'zoneInsight'>): string | undefined {
  const reported = [...(zone.zoneInsight?.subscriptions ?? [])].reverse().find((session) => session.config);
  if (!reported?.config) return undefined;
  try {
    const environment = (JSON.parse(reported.config) as { environment?: unknown }).environment;
    return typeof environment === 'string' ? environment : undefined;
  } catch {
    return undefined;
  }
}

/** The zone a zone ingress or egress belongs to: its spec says, else the label of its synced copy. */
export const zoneOfProxy = (proxy: { labels?: Record<string, string> }, spec: { zone?: string }): string | undefined => spec.zone || proxy.labels?.['mesh.io/zone'];

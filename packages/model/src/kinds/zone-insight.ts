// A zone control plane's connections to the global (zone sync streams), kept by the global.
import { z } from 'zod';
import { defineKind } from '../kind.js';
import { bool, list, message, str, u32 } from '../wire.js';
import { DiscoveryServiceStatsSchema, timestamp, validateInsight } from './dataplane-insight.js';

/** One zone sync stream of a zone control plane to a global instance. */
export const ZoneSyncSubscriptionSchema = message({
  id: str(),
  globalInstanceId: str(),
  connectTime: timestamp(),
  disconnectTime: timestamp(),
  status: message({
    lastUpdateTime: timestamp(),
    total: DiscoveryServiceStatsSchema.optional(),
    /** Per resource kind. */
    stat: z
      .record(z.string(), DiscoveryServiceStatsSchema)
      .optional()
      .transform((v) => (v && Object.keys(v).length > 0 ? v : undefined)),
  }).optional(),
  version: message({
    meshCp: message({ version: str(), gitTag: str(), gitCommit: str(), buildDate: str(), meshCpGlobalCompatible: bool() }).optional(),
  }).optional(),
  generation: u32(),
  /** JSON text of the zone control plane's configuration, secrets masked. */
  config: str(),
  authTokenProvided: bool(),
  /** The address the zone reported for itself when it connected (ours; 2.5.0 has no such field). */
  url: str(),
});
export type ZoneSyncSubscription = z.infer<typeof ZoneSyncSubscriptionSchema>;

export const ZoneInsightSpecSchema = message({
  subscriptions: list(ZoneSyncSubscriptionSchema),
  envoyAdminStreams: message({ configDumpGlobalInstanceId: str(), statsGlobalInstanceId: str(), clustersGlobalInstanceId: str() }).optional(),
  healthCheck: message({ time: timestamp() }).optional(),
});
export type ZoneInsightSpec = z.infer<typeof ZoneInsightSpecSchema>;

export const zoneInsightKind = defineKind({
  name: 'ZoneInsight',
  path: 'zone-insights',
  scope: 'global',
  displayName: 'Zone Insights',
  singularDisplayName: 'Zone Insight',
  inCatalogue: false,
  readOnly: true,
  // Kept by the global about its zones; no zone needs it.
  kdsFlags: 0,
  schema: ZoneInsightSpecSchema,
  validate: validateInsight,
  affects: 'nothing',
  example: { name: 'zone-1', spec: {} },
});

// A zone egress proxy's xDS subscriptions.
import type { z } from 'zod';
import { defineKind, KDS_FLAGS } from '../kind.js';
import { list, message } from '../wire.js';
import { DiscoverySubscriptionSchema, validateInsight } from './dataplane-insight.js';

export const ZoneEgressInsightSpecSchema = message({ subscriptions: list(DiscoverySubscriptionSchema) });
export type ZoneEgressInsightSpec = z.infer<typeof ZoneEgressInsightSpecSchema>;

export const zoneEgressInsightKind = defineKind({
  name: 'ZoneEgressInsight',
  path: 'zoneegressinsights',
  scope: 'global',
  displayName: 'Zone Egress Insights',
  singularDisplayName: 'Zone Egress Insight',
  inCatalogue: false,
  readOnly: true,
  kdsFlags: KDS_FLAGS.fromZoneToGlobal,
  schema: ZoneEgressInsightSpecSchema,
  validate: validateInsight,
  affects: 'nothing',
  example: { name: 'egress-1', spec: {} },
});

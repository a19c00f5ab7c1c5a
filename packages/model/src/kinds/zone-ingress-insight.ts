// A zone ingress proxy's xDS subscriptions.
import type { z } from 'zod';
import { defineKind, KDS_FLAGS } from '../kind.js';
import { list, message } from '../wire.js';
import { DiscoverySubscriptionSchema, validateInsight } from './dataplane-insight.js';

export const ZoneIngressInsightSpecSchema = message({ subscriptions: list(DiscoverySubscriptionSchema) });
export type ZoneIngressInsightSpec = z.infer<typeof ZoneIngressInsightSpecSchema>;

export const zoneIngressInsightKind = defineKind({
  name: 'ZoneIngressInsight',
  path: 'zone-ingress-insights',
  scope: 'global',
  displayName: 'Zone Ingress Insights',
  singularDisplayName: 'Zone Ingress Insight',
  inCatalogue: false,
  readOnly: true,
  kdsFlags: KDS_FLAGS.fromZoneToGlobal,
  schema: ZoneIngressInsightSpecSchema,
  validate: validateInsight,
  affects: 'nothing',
  example: { name: 'ingress-1', spec: {} },
});

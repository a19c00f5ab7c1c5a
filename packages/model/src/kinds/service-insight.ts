// A service of a mesh (its proxies by status, type, address), computed by the control plane and
// served by `/meshes/{mesh}/service-insights`; never stored.
import { z } from 'zod';
import { defineKind, KDS_FLAGS } from '../kind.js';

export const ServiceInsightSpecSchema = z.object({
  status: z.enum(['online', 'offline', 'partially_degraded', 'not_available']).optional(),
  dataplanes: z.object({ total: z.number().optional(), online: z.number().optional(), offline: z.number().optional() }),
  issuedBackends: z.record(z.string(), z.number()).optional(),
  serviceType: z.enum(['external', 'gateway_delegated', 'gateway_builtin']).optional(),
  addressPort: z.string().optional(),
});
export type ServiceInsightSpec = z.infer<typeof ServiceInsightSpecSchema>;

export const serviceInsightKind = defineKind({
  name: 'ServiceInsight',
  path: 'service-insights',
  scope: 'mesh',
  displayName: 'Service Insights',
  singularDisplayName: 'Service Insight',
  inCatalogue: false,
  readOnly: true,
  computed: true,
  // The reference sends the global's to zones; each control plane here computes its own from the resources it has.
  kdsFlags: KDS_FLAGS.fromGlobalToZone,
  schema: ServiceInsightSpecSchema,
  validate: () => [],
  affects: 'nothing',
});

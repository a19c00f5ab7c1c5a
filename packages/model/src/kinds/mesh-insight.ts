// A mesh's figures (proxies by status, type, version and mTLS backend; policies; services),
// computed by the control plane from the resources and served by `/mesh-insights`; never stored.
import { z } from 'zod';
import { defineKind } from '../kind.js';

const statusCounts = z.object({ total: z.number().optional(), online: z.number().optional(), offline: z.number().optional(), partiallyDegraded: z.number().optional() });
const countsBy = z.record(z.string(), statusCounts);

export const MeshInsightSpecSchema = z.object({
  dataplanes: statusCounts,
  policies: z.record(z.string(), z.object({ total: z.number() })).optional(),
  dpVersions: z.object({ meshDp: countsBy.optional(), envoy: countsBy.optional() }),
  mTLS: z.object({ issuedBackends: countsBy.optional(), supportedBackends: countsBy.optional() }),
  services: z.object({ total: z.number().optional(), internal: z.number().optional(), external: z.number().optional() }),
  dataplanesByType: z.object({ standard: statusCounts, gateway: statusCounts, gatewayBuiltin: statusCounts, gatewayDelegated: statusCounts }),
});
export type MeshInsightSpec = z.infer<typeof MeshInsightSpecSchema>;

export const meshInsightKind = defineKind({
  name: 'MeshInsight',
  path: 'mesh-insights',
  scope: 'global',
  displayName: 'Mesh Insights',
  singularDisplayName: 'Mesh Insight',
  inCatalogue: false,
  readOnly: true,
  computed: true,
  // Each control plane computes its own.
  kdsFlags: 0,
  schema: MeshInsightSpecSchema,
  validate: () => [],
  affects: 'nothing',
});

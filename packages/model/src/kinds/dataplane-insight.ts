// What the control plane knows of a running proxy: its xDS subscriptions and its certificate.
// Written by the control plane (xDS server, zone sync), never through the REST API.
import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind, KDS_FLAGS } from '../kind.js';
import type { Violation } from '../validation/violations.js';
import { bool, list, message, str, stringMap, u32, u64 } from '../wire.js';

/** google.protobuf.Timestamp, emitted in UTC with milliseconds like every timestamp we serve. */
export const timestamp = () =>
  z
    .string()
    .transform((text, ctx) => {
      const time = new Date(text);
      if (Number.isNaN(time.getTime())) {
        ctx.addIssue({ code: 'custom', message: `invalid timestamp ${JSON.stringify(text)}` });
        return z.NEVER;
      }
      return time.toISOString();
    })
    .optional();

/** Responses of one xDS (or zone sync) resource type; uint64 counters travel as strings. */
export const DiscoveryServiceStatsSchema = message({
  responsesSent: u64(),
  responsesAcknowledged: u64(),
  responsesRejected: u64(),
});

export const ProxyVersionSchema = message({
  meshDp: message({ version: str(), gitTag: str(), gitCommit: str(), buildDate: str(), meshCpCompatible: bool() }).optional(),
  envoy: message({ version: str(), build: str(), meshDpCompatible: bool() }).optional(),
  dependencies: stringMap(),
});

/** One xDS stream of a proxy (dataplane, zone ingress, zone egress) to a control-plane instance. */
export const DiscoverySubscriptionSchema = message({
  id: str(),
  controlPlaneInstanceId: str(),
  connectTime: timestamp(),
  disconnectTime: timestamp(),
  status: message({
    lastUpdateTime: timestamp(),
    total: DiscoveryServiceStatsSchema.optional(),
    cds: DiscoveryServiceStatsSchema.optional(),
    eds: DiscoveryServiceStatsSchema.optional(),
    lds: DiscoveryServiceStatsSchema.optional(),
    rds: DiscoveryServiceStatsSchema.optional(),
  }).optional(),
  version: ProxyVersionSchema.optional(),
  generation: u32(),
});
export type DiscoverySubscription = z.infer<typeof DiscoverySubscriptionSchema>;

export const DataplaneInsightSpecSchema = message({
  subscriptions: list(DiscoverySubscriptionSchema),
  mTLS: message({
    certificateExpirationTime: timestamp(),
    lastCertificateRegeneration: timestamp(),
    certificateRegenerations: u32(),
    issuedBackend: str(),
    supportedBackends: list(z.string()),
  }).optional(),
});
export type DataplaneInsightSpec = z.infer<typeof DataplaneInsightSpecSchema>;

/** Insights are recorded by the control plane itself; there is nothing a user could get wrong. */
export const validateInsight = (_spec: unknown): Violation[] => [];

export const dataplaneInsightKind = defineKind({
  name: 'DataplaneInsight',
  path: 'dataplane-insights',
  scope: 'mesh',
  displayName: 'Dataplane Insights',
  singularDisplayName: 'Dataplane Insight',
  inCatalogue: false,
  readOnly: true,
  kdsFlags: KDS_FLAGS.fromZoneToGlobal,
  schema: DataplaneInsightSpecSchema,
  validate: validateInsight,
  affects: 'nothing',
  example: demo.inMesh('web-1', {}),
});

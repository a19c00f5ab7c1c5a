import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { durationGreaterThan, integerGreaterThan, integerGreaterThanZeroOrNil } from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goDuration, goUint32 } from '../wire.js';
import { headerSetAndAdd } from './http-headers.js';
import { defaultConf, MUST_BE_DEFINED, mustHaveAtLeastOne, NEEDS_AT_LEAST_ONE_ITEM, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef } from './target-ref.js';

/** `num` requests or connections per `interval`. */
const RateSchema = z.object({ num: goUint32(), interval: goDuration() });
type Rate = z.infer<typeof RateSchema>;

export const MeshRateLimitConfSchema = defaultConf({
  local: z
    .object({
      http: z
        .object({
          disabled: z.boolean().optional(),
          requestRate: RateSchema.optional(),
          onRateLimit: z.object({ status: goUint32().optional(), headers: z.object(headerSetAndAdd).optional() }).optional(),
        })
        .optional(),
      tcp: z.object({ disabled: z.boolean().optional(), connectionRate: RateSchema.optional() }).optional(),
    })
    .optional(),
});
export type MeshRateLimitConf = z.infer<typeof MeshRateLimitConfSchema>;

export const MeshRateLimitSpecSchema = z.object({
  targetRef: TargetRefSchema,
  from: targetRefEntries(MeshRateLimitConfSchema),
});
export type MeshRateLimitSpec = z.infer<typeof MeshRateLimitSpecSchema>;

const MIN_INTERVAL_NANOS = 50_000_000;

function validateRate(v: Violations, path: string, rate: Rate): void {
  integerGreaterThan(v, fieldPath(path, 'num'), rate.num, 0);
  durationGreaterThan(v, fieldPath(path, 'interval'), rate.interval, MIN_INTERVAL_NANOS, '50ms');
}

function validateConf(v: Violations, path: string, conf: MeshRateLimitConf): void {
  const at = fieldPath(path, 'local');
  const local = conf.local;
  if (!local) {
    v.add(at, MUST_BE_DEFINED);
    return;
  }
  if (!local.tcp && !local.http) v.add(at, mustHaveAtLeastOne('tcp', 'http'));
  const { http, tcp } = local;
  if (http) {
    if (http.disabled === undefined && !http.requestRate && !http.onRateLimit) v.add(fieldPath(at, 'http'), mustHaveAtLeastOne('disabled', 'requestRate', 'onRateLimit'));
    else {
      if (http.requestRate) validateRate(v, fieldPath(at, 'http.requestRate'), http.requestRate);
      if (http.onRateLimit) integerGreaterThanZeroOrNil(v, fieldPath(at, 'http.onRateLimit.status'), http.onRateLimit.status);
    }
  }
  if (tcp) {
    if (tcp.disabled === undefined && !tcp.connectionRate) v.add(fieldPath(at, 'tcp'), mustHaveAtLeastOne('disabled', 'connectionRate'));
    else if (tcp.connectionRate) validateRate(v, fieldPath(at, 'tcp.connectionRate'), tcp.connectionRate);
  }
}

export function validateMeshRateLimit(spec: MeshRateLimitSpec) {
  const v = new Violations();
  if (!spec.from) v.add('spec.from', NEEDS_AT_LEAST_ONE_ITEM);
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset']);
  validateEntries(v, 'spec.from', spec.from, ['Mesh'], validateConf);
  return v.list;
}

export const meshRateLimitKind = defineKind({
  name: 'MeshRateLimit',
  cliNames: { singular: 'meshratelimit', plural: 'meshratelimits' },
  path: 'meshratelimits',
  scope: 'mesh',
  displayName: 'Mesh Rate Limits',
  singularDisplayName: 'Mesh Rate Limit',
  targetRefPolicy: { from: true, to: false },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshRateLimitSpecSchema,
  validate: validateMeshRateLimit,
  example: demo.inMesh('backend-limit', { spec: { targetRef: demo.BACKEND, from: [{ targetRef: demo.MESH, default: { local: { http: { requestRate: { num: 100, interval: '10s' } } } } }] } }),
});

import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import {
  durationGreaterThanZeroOrNil,
  intPercentageOrNil,
  isFilePath,
  percentageOrNil,
  statusCode,
  valueGreaterThanZeroOrNil,
} from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goDuration, goInt32, intOrString } from '../wire.js';
import { headerSetAndAdd } from './http-headers.js';
import { defaultConf, mustHaveAtLeastOne, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef } from './target-ref.js';

export const MeshHealthCheckConfSchema = defaultConf({
  interval: goDuration().optional(),
  timeout: goDuration().optional(),
  unhealthyThreshold: goInt32().optional(),
  healthyThreshold: goInt32().optional(),
  initialJitter: goDuration().optional(),
  intervalJitter: goDuration().optional(),
  intervalJitterPercent: goInt32().optional(),
  healthyPanicThreshold: intOrString().optional(),
  failTrafficOnPanic: z.boolean().optional(),
  eventLogPath: z.string().optional(),
  alwaysLogHealthCheckFailures: z.boolean().optional(),
  noTrafficInterval: goDuration().optional(),
  tcp: z.object({ disabled: z.boolean().optional(), send: z.string().optional(), receive: z.array(z.string()).optional() }).optional(),
  http: z
    .object({
      disabled: z.boolean().optional(),
      path: z.string().optional(),
      requestHeadersToAdd: z.object(headerSetAndAdd).optional(),
      expectedStatuses: z.array(goInt32()).optional(),
    })
    .optional(),
  grpc: z.object({ disabled: z.boolean().optional(), serviceName: z.string().optional(), authority: z.string().optional() }).optional(),
  reuseConnection: z.boolean().optional(),
});
export type MeshHealthCheckConf = z.infer<typeof MeshHealthCheckConfSchema>;

export const MeshHealthCheckSpecSchema = z.object({
  targetRef: TargetRefSchema,
  to: targetRefEntries(MeshHealthCheckConfSchema),
});
export type MeshHealthCheckSpec = z.infer<typeof MeshHealthCheckSpecSchema>;

function validateConf(v: Violations, path: string, conf: MeshHealthCheckConf): void {
  const at = (field: string) => fieldPath(path, field);
  durationGreaterThanZeroOrNil(v, at('interval'), conf.interval);
  durationGreaterThanZeroOrNil(v, at('timeout'), conf.timeout);
  valueGreaterThanZeroOrNil(v, at('unhealthyThreshold'), conf.unhealthyThreshold);
  valueGreaterThanZeroOrNil(v, at('healthyThreshold'), conf.healthyThreshold);
  durationGreaterThanZeroOrNil(v, at('initialJitter'), conf.initialJitter);
  durationGreaterThanZeroOrNil(v, at('intervalJitter'), conf.intervalJitter);
  intPercentageOrNil(v, at('intervalJitterPercent'), conf.intervalJitterPercent);
  percentageOrNil(v, at('healthyPanicThreshold'), conf.healthyPanicThreshold);
  durationGreaterThanZeroOrNil(v, at('noTrafficInterval'), conf.noTrafficInterval);
  if (conf.eventLogPath !== undefined && !isFilePath(conf.eventLogPath)) v.add(at('eventLogPath'), 'has to be a valid path when defined');
  if (conf.http) {
    if (conf.http.path === '') v.add(at('http.path'), 'must be defined');
    (conf.http.expectedStatuses ?? []).forEach((status, i) => statusCode(v, `${at('http.expectedStatuses')}[${i}]`, status));
  }
  // Nothing else to check in tcp and grpc: all their fields are optional.
  if (!conf.http && !conf.tcp && !conf.grpc) v.add(path, mustHaveAtLeastOne('http', 'tcp', 'grpc'));
}

export function validateMeshHealthCheck(spec: MeshHealthCheckSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshGateway', 'MeshService', 'MeshServiceSubset']);
  validateEntries(v, 'spec.to', spec.to, ['Mesh', 'MeshService'], validateConf);
  return v.list;
}

export const meshHealthCheckKind = defineKind({
  name: 'MeshHealthCheck',
  cliNames: { singular: 'meshhealthcheck', plural: 'meshhealthchecks' },
  path: 'meshhealthchecks',
  scope: 'mesh',
  displayName: 'Mesh Health Checks',
  singularDisplayName: 'Mesh Health Check',
  targetRefPolicy: { from: false, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshHealthCheckSpecSchema,
  validate: validateMeshHealthCheck,
  example: demo.inMesh('backend-health', { spec: { targetRef: demo.MESH, to: [{ targetRef: demo.BACKEND, default: { interval: '10s', http: { path: '/health' } } }] } }),
});

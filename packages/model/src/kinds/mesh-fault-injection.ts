import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { bandwidth, durationNotNegative, percentage, statusCode } from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goDuration, goInt32, intOrString } from '../wire.js';
import { defaultConf, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef } from './target-ref.js';

/** One fault: requests aborted with a status, delayed, or slowed down, each for a share of requests. */
const FaultSchema = z.object({
  abort: z.object({ httpStatus: goInt32(), percentage: intOrString() }).optional(),
  delay: z.object({ value: goDuration(), percentage: intOrString() }).optional(),
  responseBandwidth: z.object({ limit: z.string(), percentage: intOrString() }).optional(),
});

export const MeshFaultInjectionConfSchema = defaultConf({ http: z.array(FaultSchema).optional() });
export type MeshFaultInjectionConf = z.infer<typeof MeshFaultInjectionConfSchema>;

export const MeshFaultInjectionSpecSchema = z.object({
  targetRef: TargetRefSchema,
  from: targetRefEntries(MeshFaultInjectionConfSchema),
});
export type MeshFaultInjectionSpec = z.infer<typeof MeshFaultInjectionSpecSchema>;

/** Each fault is reported at `http.<fault>[<index>]`, the path the reference uses. */
function validateConf(v: Violations, path: string, conf: MeshFaultInjectionConf): void {
  const http = fieldPath(path, 'http');
  (conf.http ?? []).forEach((fault, i) => {
    if (fault.abort) {
      const at = `${fieldPath(http, 'abort')}[${i}]`;
      statusCode(v, fieldPath(at, 'httpStatus'), fault.abort.httpStatus);
      percentage(v, fieldPath(at, 'percentage'), fault.abort.percentage);
    }
    if (fault.delay) {
      const at = `${fieldPath(http, 'delay')}[${i}]`;
      durationNotNegative(v, fieldPath(at, 'value'), fault.delay.value);
      percentage(v, fieldPath(at, 'percentage'), fault.delay.percentage);
    }
    if (fault.responseBandwidth) {
      const at = `${fieldPath(http, 'responseBandwidth')}[${i}]`;
      bandwidth(v, fieldPath(at, 'responseBandwidth'), fault.responseBandwidth.limit);
      percentage(v, fieldPath(at, 'percentage'), fault.responseBandwidth.percentage);
    }
  });
}

export function validateMeshFaultInjection(spec: MeshFaultInjectionSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset']);
  validateEntries(v, 'spec.from', spec.from, ['Mesh', 'MeshSubset', 'MeshServiceSubset', 'MeshService'], validateConf);
  return v.list;
}

export const meshFaultInjectionKind = defineKind({
  name: 'MeshFaultInjection',
  cliNames: { singular: 'meshfaultinjection', plural: 'meshfaultinjections' },
  path: 'meshfaultinjections',
  scope: 'mesh',
  displayName: 'Mesh Fault Injections',
  singularDisplayName: 'Mesh Fault Injection',
  targetRefPolicy: { from: true, to: false },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshFaultInjectionSpecSchema,
  validate: validateMeshFaultInjection,
  example: demo.inMesh('backend-faults', { spec: { targetRef: demo.BACKEND, from: [{ targetRef: demo.WEB, default: { http: [{ abort: { httpStatus: 503, percentage: 10 } }] } }] } }),
});

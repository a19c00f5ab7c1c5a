import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { decimalOf, durationGreaterThanZeroOrNil, integerGreaterThanZeroOrNil, intPercentageOrNil } from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goDuration, goUint32, intOrString } from '../wire.js';
import { defaultConf, FROM_OR_TO_REQUIRED, MUST_BE_DEFINED, mustHaveAtLeastOne, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef } from './target-ref.js';

const consecutive = z.object({ consecutive: goUint32().optional() });

export const MeshCircuitBreakerConfSchema = defaultConf({
  connectionLimits: z
    .object({
      maxConnections: goUint32().optional(),
      maxConnectionPools: goUint32().optional(),
      maxPendingRequests: goUint32().optional(),
      maxRetries: goUint32().optional(),
      maxRequests: goUint32().optional(),
    })
    .optional(),
  outlierDetection: z
    .object({
      disabled: z.boolean().optional(),
      interval: goDuration().optional(),
      baseEjectionTime: goDuration().optional(),
      maxEjectionPercent: goUint32().optional(),
      splitExternalAndLocalErrors: z.boolean().optional(),
      detectors: z
        .object({
          totalFailures: consecutive.optional(),
          gatewayFailures: consecutive.optional(),
          localOriginFailures: consecutive.optional(),
          successRate: z
            .object({ minimumHosts: goUint32().optional(), requestVolume: goUint32().optional(), standardDeviationFactor: intOrString().optional() })
            .optional(),
          failurePercentage: z
            .object({ minimumHosts: goUint32().optional(), requestVolume: goUint32().optional(), threshold: goUint32().optional() })
            .optional(),
        })
        .optional(),
    })
    .optional(),
});
export type MeshCircuitBreakerConf = z.infer<typeof MeshCircuitBreakerConfSchema>;

export const MeshCircuitBreakerSpecSchema = z.object({
  targetRef: TargetRefSchema,
  to: targetRefEntries(MeshCircuitBreakerConfSchema),
  from: targetRefEntries(MeshCircuitBreakerConfSchema),
});
export type MeshCircuitBreakerSpec = z.infer<typeof MeshCircuitBreakerSpecSchema>;

type OutlierDetection = NonNullable<MeshCircuitBreakerConf['outlierDetection']>;
const DETECTORS = ['totalFailures', 'gatewayFailures', 'localOriginFailures', 'successRate', 'failurePercentage'] as const;

function validateDetectors(v: Violations, path: string, detectors: OutlierDetection['detectors']): void {
  if (!detectors) {
    v.add(path, MUST_BE_DEFINED);
    return;
  }
  if (DETECTORS.every((name) => detectors[name] === undefined)) {
    v.add(path, mustHaveAtLeastOne(...DETECTORS));
    return;
  }
  for (const name of ['totalFailures', 'gatewayFailures', 'localOriginFailures'] as const) {
    integerGreaterThanZeroOrNil(v, fieldPath(path, `${name}.consecutive`), detectors[name]?.consecutive);
  }
  const { successRate, failurePercentage } = detectors;
  if (successRate) {
    integerGreaterThanZeroOrNil(v, fieldPath(path, 'successRate.minimumHosts'), successRate.minimumHosts);
    integerGreaterThanZeroOrNil(v, fieldPath(path, 'successRate.requestVolume'), successRate.requestVolume);
    const factor = successRate.standardDeviationFactor;
    if (factor !== undefined) {
      const number = decimalOf(factor);
      if (number === undefined) v.add(fieldPath(path, 'successRate.standardDeviationFactor'), 'invalid number');
      else if (number <= 0) v.add(fieldPath(path, 'successRate.standardDeviationFactor'), 'must be greater than 0');
    }
  }
  if (failurePercentage) {
    integerGreaterThanZeroOrNil(v, fieldPath(path, 'failurePercentage.minimumHosts'), failurePercentage.minimumHosts);
    integerGreaterThanZeroOrNil(v, fieldPath(path, 'failurePercentage.requestVolume'), failurePercentage.requestVolume);
    intPercentageOrNil(v, fieldPath(path, 'failurePercentage.threshold'), failurePercentage.threshold);
  }
}

function validateConf(v: Violations, path: string, conf: MeshCircuitBreakerConf): void {
  const { connectionLimits: limits, outlierDetection: detection } = conf;
  if (!limits && !detection) {
    v.add(path, "at least one of: 'connectionLimits' or 'outlierDetection' should be configured");
    return;
  }
  if (limits) {
    for (const name of ['maxConnections', 'maxConnectionPools', 'maxPendingRequests', 'maxRetries', 'maxRequests'] as const) {
      integerGreaterThanZeroOrNil(v, fieldPath(path, `connectionLimits.${name}`), limits[name]);
    }
  }
  if (detection) {
    const at = fieldPath(path, 'outlierDetection');
    durationGreaterThanZeroOrNil(v, fieldPath(at, 'interval'), detection.interval);
    durationGreaterThanZeroOrNil(v, fieldPath(at, 'baseEjectionTime'), detection.baseEjectionTime);
    intPercentageOrNil(v, fieldPath(at, 'maxEjectionPercent'), detection.maxEjectionPercent);
    validateDetectors(v, fieldPath(at, 'detectors'), detection.detectors);
  }
}

export function validateMeshCircuitBreaker(spec: MeshCircuitBreakerSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset']);
  if (!spec.to && !spec.from) v.add('spec', FROM_OR_TO_REQUIRED);
  validateEntries(v, 'spec.from', spec.from, ['Mesh'], validateConf);
  validateEntries(v, 'spec.to', spec.to, ['Mesh', 'MeshService'], validateConf);
  return v.list;
}

export const meshCircuitBreakerKind = defineKind({
  name: 'MeshCircuitBreaker',
  cliNames: { singular: 'meshcircuitbreaker', plural: 'meshcircuitbreakers' },
  path: 'meshcircuitbreakers',
  scope: 'mesh',
  displayName: 'Mesh Circuit Breakers',
  singularDisplayName: 'Mesh Circuit Breaker',
  targetRefPolicy: { from: true, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshCircuitBreakerSpecSchema,
  validate: validateMeshCircuitBreaker,
  example: demo.inMesh('backend-breaker', { spec: { targetRef: demo.MESH, to: [{ targetRef: demo.BACKEND, default: { connectionLimits: { maxConnections: 1024, maxRequests: 1024 } } }] } }),
});

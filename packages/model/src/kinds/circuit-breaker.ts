import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { isEmptyMessage, validatePercentRange, validateServiceToService } from '../validation/policy-rules.js';
import { Violations } from '../validation/violations.js';
import { bool, doubleValue, duration, message, u32Value } from '../wire.js';
import { selectorList } from './common.js';

const ErrorsSchema = message({ consecutive: u32Value() });

const DetectorsSchema = message({
  totalErrors: ErrorsSchema.optional(),
  gatewayErrors: ErrorsSchema.optional(),
  localErrors: ErrorsSchema.optional(),
  standardDeviation: message({ requestVolume: u32Value(), minimumHosts: u32Value(), factor: doubleValue() }).optional(),
  failure: message({ requestVolume: u32Value(), minimumHosts: u32Value(), threshold: u32Value() }).optional(),
});

const ThresholdsSchema = message({
  maxConnections: u32Value(),
  maxPendingRequests: u32Value(),
  maxRetries: u32Value(),
  maxRequests: u32Value(),
});

const ConfSchema = message({
  interval: duration(),
  baseEjectionTime: duration(),
  maxEjectionPercent: u32Value(),
  splitExternalAndLocalErrors: bool(),
  detectors: DetectorsSchema.optional(),
  thresholds: ThresholdsSchema.optional(),
});

export const CircuitBreakerSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  conf: ConfSchema.optional(),
});
export type CircuitBreakerSpec = z.infer<typeof CircuitBreakerSpecSchema>;
type Conf = z.infer<typeof ConfSchema>;

function validateConf(v: Violations, conf: Conf | undefined): void {
  // A section counts when one of its fields is set; a detector set to `{}` counts (defaults apply).
  const hasDetectors = conf?.detectors !== undefined && !isEmptyMessage(conf.detectors);
  const hasThresholds = conf?.thresholds !== undefined && !isEmptyMessage(conf.thresholds);
  if (!conf || (!hasDetectors && !hasThresholds)) {
    v.add('conf', 'must have at least one of the detector or threshold configured');
    return;
  }
  if (conf.detectors && !hasDetectors) v.add('conf.detectors', "can't be empty");
  validatePercentRange(v, 'conf.maxEjectionPercent', conf.maxEjectionPercent);
  validatePercentRange(v, 'conf.detectors.failure.threshold', conf.detectors?.failure?.threshold);
  if (conf.thresholds && !hasThresholds) v.add('conf.thresholds', "can't be empty");
}

export function validateCircuitBreaker(spec: CircuitBreakerSpec) {
  const v = new Violations();
  validateServiceToService(v, spec);
  validateConf(v, spec.conf);
  return v.list;
}

export const circuitBreakerKind = defineKind({
  name: 'CircuitBreaker',
  cliNames: { singular: 'circuit-breaker', plural: 'circuit-breakers' },
  path: 'circuit-breakers',
  scope: 'mesh',
  displayName: 'Circuit Breakers',
  singularDisplayName: 'Circuit Breaker',
  selection: 'sourcesDestinations',
  affects: 'selectedProxies',
  schema: CircuitBreakerSpecSchema,
  validate: validateCircuitBreaker,
  example: demo.inMesh('backend-breaker', { sources: demo.FROM_WEB, destinations: demo.TO_BACKEND, conf: { thresholds: { maxConnections: 100, maxRequests: 100 } } }),
});

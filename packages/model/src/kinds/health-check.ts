import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { validateServiceToService } from '../validation/policy-rules.js';
import { validateDuration, validateThreshold } from '../validation/scalars.js';
import { fieldPath, indexPath, Violations } from '../validation/violations.js';
import { boolValue, bytesValue, doubleValue, duration, list, message, str, u32, u32Value } from '../wire.js';
import { selectorList } from './common.js';

const HeaderValueOptionSchema = message({
  header: message({ key: str(), value: str() }).optional(),
  append: boolValue(),
});

const HttpSchema = message({
  path: str(),
  requestHeadersToAdd: list(HeaderValueOptionSchema),
  expectedStatuses: list(u32Value().unwrap()),
  // Not a field of the reference's 2.5.0; the API documents it, so it is accepted and returned as
  // sent, false included, and not validated.
  useHttp1: boolValue(),
});

const ConfSchema = message({
  interval: duration(),
  timeout: duration(),
  unhealthyThreshold: u32(),
  healthyThreshold: u32(),
  initialJitter: duration(),
  intervalJitter: duration(),
  intervalJitterPercent: u32(),
  healthyPanicThreshold: doubleValue(),
  failTrafficOnPanic: boolValue(),
  eventLogPath: str(),
  alwaysLogHealthCheckFailures: boolValue(),
  noTrafficInterval: duration(),
  tcp: message({ send: bytesValue(), receive: list(bytesValue().unwrap()) }).optional(),
  http: HttpSchema.optional(),
  reuseConnection: boolValue(),
});

export const HealthCheckSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  conf: ConfSchema.optional(),
});
export type HealthCheckSpec = z.infer<typeof HealthCheckSpecSchema>;
type Conf = z.infer<typeof ConfSchema>;
type HttpConf = z.infer<typeof HttpSchema>;

function validateHttp(v: Violations, path: string, http: HttpConf): void {
  if (!http.path) v.add(fieldPath(path, 'path'), 'has to be defined and cannot be empty');
  http.expectedStatuses?.forEach((status, i) => {
    if (status < 100 || status >= 600) v.add(indexPath(fieldPath(path, 'expectedStatuses'), i), 'must be in range [100, 600)');
  });
  http.requestHeadersToAdd?.forEach((option, i) => {
    const headerPath = fieldPath(indexPath(fieldPath(path, 'requestHeadersToAdd'), i), 'header');
    if (!option.header) v.add(headerPath, 'has to be defined');
    else if (!option.header.key) v.add(fieldPath(headerPath, 'key'), 'cannot be empty');
  });
}

function validateConf(v: Violations, conf: Conf | undefined): void {
  if (!conf) {
    v.add('conf', 'has to be defined');
    return;
  }
  validateDuration(v, 'conf.interval', conf.interval);
  validateDuration(v, 'conf.timeout', conf.timeout);
  validateThreshold(v, 'conf.unhealthyThreshold', conf.unhealthyThreshold);
  validateThreshold(v, 'conf.healthyThreshold', conf.healthyThreshold);
  // These three are optional, but must be positive when given.
  if (conf.initialJitter !== undefined) validateDuration(v, 'conf.initialJitter', conf.initialJitter);
  if (conf.intervalJitter !== undefined) validateDuration(v, 'conf.intervalJitter', conf.intervalJitter);
  if (conf.noTrafficInterval !== undefined) validateDuration(v, 'conf.noTrafficInterval', conf.noTrafficInterval);
  const panicThreshold = conf.healthyPanicThreshold ?? 0;
  if (panicThreshold < 0 || panicThreshold > 100) v.add('conf.healthyPanicThreshold', 'must be in range [0.0 - 100.0]');
  if (conf.http) validateHttp(v, 'conf.http', conf.http);
  if (conf.tcp && conf.http) v.add('conf', 'http and tcp cannot be defined at the same time');
}

export function validateHealthCheck(spec: HealthCheckSpec) {
  const v = new Violations();
  validateServiceToService(v, spec);
  validateConf(v, spec.conf);
  return v.list;
}

export const healthCheckKind = defineKind({
  name: 'HealthCheck',
  cliNames: { singular: 'healthcheck', plural: 'healthchecks' },
  path: 'health-checks',
  scope: 'mesh',
  displayName: 'Health Checks',
  singularDisplayName: 'Health Check',
  selection: 'sourcesDestinations',
  affects: 'selectedProxies',
  schema: HealthCheckSpecSchema,
  validate: validateHealthCheck,
  example: demo.inMesh('backend-health', { sources: demo.FROM_WEB, destinations: demo.TO_BACKEND, conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } }),
});

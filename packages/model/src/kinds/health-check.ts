import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const HealthCheckSpecSchema = message({});
export type HealthCheckSpec = z.infer<typeof HealthCheckSpecSchema>;

export function validateHealthCheck(spec: HealthCheckSpec) {
  const v = new Violations();
  return v.list;
}

export const healthCheckKind = defineKind({
  name: 'HealthCheck',
  path: 'health-checks',
  scope: 'mesh',
  displayName: 'Health Checks',
  singularDisplayName: 'Health Check',
  selection: 'sourcesDestinations',
  schema: HealthCheckSpecSchema,
  validate: validateHealthCheck,
});

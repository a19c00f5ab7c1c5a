import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const CircuitBreakerSpecSchema = message({});
export type CircuitBreakerSpec = z.infer<typeof CircuitBreakerSpecSchema>;

export function validateCircuitBreaker(spec: CircuitBreakerSpec) {
  const v = new Violations();
  return v.list;
}

export const circuitBreakerKind = defineKind({
  name: 'CircuitBreaker',
  path: 'circuit-breakers',
  scope: 'mesh',
  displayName: 'Circuit Breakers',
  singularDisplayName: 'Circuit Breaker',
  selection: 'sourcesDestinations',
  schema: CircuitBreakerSpecSchema,
  validate: validateCircuitBreaker,
});

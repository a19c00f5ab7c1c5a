import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const FaultInjectionSpecSchema = message({});
export type FaultInjectionSpec = z.infer<typeof FaultInjectionSpecSchema>;

export function validateFaultInjection(spec: FaultInjectionSpec) {
  const v = new Violations();
  return v.list;
}

export const faultInjectionKind = defineKind({
  name: 'FaultInjection',
  path: 'fault-injections',
  scope: 'mesh',
  displayName: 'Fault Injections',
  singularDisplayName: 'Fault Injection',
  selection: 'sourcesDestinations',
  schema: FaultInjectionSpecSchema,
  validate: validateFaultInjection,
});

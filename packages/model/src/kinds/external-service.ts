import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const ExternalServiceSpecSchema = message({});
export type ExternalServiceSpec = z.infer<typeof ExternalServiceSpecSchema>;

export function validateExternalService(spec: ExternalServiceSpec) {
  const v = new Violations();
  return v.list;
}

export const externalServiceKind = defineKind({
  name: 'ExternalService',
  path: 'external-services',
  scope: 'mesh',
  displayName: 'External Services',
  singularDisplayName: 'External Service',
  inCatalogue: true,
  schema: ExternalServiceSpecSchema,
  validate: validateExternalService,
});

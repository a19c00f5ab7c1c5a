import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const GlobalSecretSpecSchema = message({});
export type GlobalSecretSpec = z.infer<typeof GlobalSecretSpecSchema>;

export function validateGlobalSecret(spec: GlobalSecretSpec) {
  const v = new Violations();
  return v.list;
}

export const globalSecretKind = defineKind({
  name: 'GlobalSecret',
  path: 'global-secrets',
  scope: 'global',
  displayName: 'Global Secrets',
  singularDisplayName: 'Global Secret',
  wireType: 'Secret',
  acceptedTypes: ['Secret', 'GlobalSecret'],
  adminOnly: true,
  schema: GlobalSecretSpecSchema,
  validate: validateGlobalSecret,
});

import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const SecretSpecSchema = message({});
export type SecretSpec = z.infer<typeof SecretSpecSchema>;

export function validateSecret(spec: SecretSpec) {
  const v = new Violations();
  return v.list;
}

export const secretKind = defineKind({
  name: 'Secret',
  path: 'secrets',
  scope: 'mesh',
  displayName: 'Secrets',
  singularDisplayName: 'Secret',
  adminOnly: true,
  schema: SecretSpecSchema,
  validate: validateSecret,
});

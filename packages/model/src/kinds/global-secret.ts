import { defineKind } from '../kind.js';
import { SecretSpecSchema, type SecretSpec, validateSecret } from './secret.js';

export const GlobalSecretSpecSchema = SecretSpecSchema;
export type GlobalSecretSpec = SecretSpec;
export const validateGlobalSecret = validateSecret;

export const globalSecretKind = defineKind({
  name: 'GlobalSecret',
  cliNames: { singular: 'global-secret', plural: 'global-secrets' },
  path: 'global-secrets',
  scope: 'global',
  displayName: 'Global Secrets',
  singularDisplayName: 'Global Secret',
  wireType: 'Secret',
  acceptedTypes: ['Secret', 'GlobalSecret'],
  adminOnly: true,
  schema: GlobalSecretSpecSchema,
  validate: validateGlobalSecret,
  affects: 'nothing',
  example: { name: 'license', spec: { data: 'c2VjcmV0' } },
});

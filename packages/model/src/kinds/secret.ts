import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import type { Violation } from '../validation/violations.js';
import { bytesValue, message } from '../wire.js';

/** Shared by Secret and GlobalSecret (one message in the reference); `data` is base64. */
export const SecretSpecSchema = message({ data: bytesValue() });
export type SecretSpec = z.infer<typeof SecretSpecSchema>;

/** Secrets are opaque: the reference validates nothing (an empty secret is accepted). */
export const validateSecret = (_spec: SecretSpec): Violation[] => [];

export const secretKind = defineKind({
  name: 'Secret',
  cliNames: { singular: 'secret', plural: 'secrets' },
  path: 'secrets',
  scope: 'mesh',
  displayName: 'Secrets',
  singularDisplayName: 'Secret',
  adminOnly: true,
  schema: SecretSpecSchema,
  validate: validateSecret,
  affects: 'referringProxies',
  example: demo.inMesh('db-password', { data: 'c2VjcmV0' }),
});

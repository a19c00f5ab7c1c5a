import { z } from 'zod';
import { defineKind } from '../kind.js';
import type { Violation } from '../validation/violations.js';
import { message } from '../wire.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * google.protobuf.BytesValue: padded standard base64, kept even when empty. Line breaks are
 * ignored on input, as Go's decoder does; anything else malformed is a decoding error.
 */
const bytesValue = () =>
  z
    .string()
    .transform((text, ctx) => {
      const data = text.replace(/[\r\n]/g, '');
      if (data.length % 4 !== 0 || !BASE64.test(data)) {
        ctx.addIssue({ code: 'custom', message: 'illegal base64 data' });
        return z.NEVER;
      }
      return data;
    })
    .optional();

/** Shared by Secret and GlobalSecret (one message in the reference). */
export const SecretSpecSchema = message({ data: bytesValue() });
export type SecretSpec = z.infer<typeof SecretSpecSchema>;

/** Secrets are opaque: the reference validates nothing (an empty secret is accepted). */
export const validateSecret = (_spec: SecretSpec): Violation[] => [];

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

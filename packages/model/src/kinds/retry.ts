import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const RetrySpecSchema = message({});
export type RetrySpec = z.infer<typeof RetrySpecSchema>;

export function validateRetry(spec: RetrySpec) {
  const v = new Violations();
  return v.list;
}

export const retryKind = defineKind({
  name: 'Retry',
  path: 'retries',
  scope: 'mesh',
  displayName: 'Retries',
  singularDisplayName: 'Retry',
  selection: 'sourcesDestinations',
  schema: RetrySpecSchema,
  validate: validateRetry,
});

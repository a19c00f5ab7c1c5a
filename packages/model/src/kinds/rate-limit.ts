import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const RateLimitSpecSchema = message({});
export type RateLimitSpec = z.infer<typeof RateLimitSpecSchema>;

export function validateRateLimit(spec: RateLimitSpec) {
  const v = new Violations();
  return v.list;
}

export const rateLimitKind = defineKind({
  name: 'RateLimit',
  path: 'rate-limits',
  scope: 'mesh',
  displayName: 'Rate Limits',
  singularDisplayName: 'Rate Limit',
  selection: 'sourcesDestinations',
  schema: RateLimitSpecSchema,
  validate: validateRateLimit,
});

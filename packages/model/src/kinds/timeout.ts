import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const TimeoutSpecSchema = message({});
export type TimeoutSpec = z.infer<typeof TimeoutSpecSchema>;

export function validateTimeout(spec: TimeoutSpec) {
  const v = new Violations();
  return v.list;
}

export const timeoutKind = defineKind({
  name: 'Timeout',
  path: 'timeouts',
  scope: 'mesh',
  displayName: 'Timeouts',
  singularDisplayName: 'Timeout',
  selection: 'sourcesDestinations',
  schema: TimeoutSpecSchema,
  validate: validateTimeout,
});

import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const ZoneSpecSchema = message({});
export type ZoneSpec = z.infer<typeof ZoneSpecSchema>;

export function validateZone(spec: ZoneSpec) {
  const v = new Violations();
  return v.list;
}

export const zoneKind = defineKind({
  name: 'Zone',
  path: 'zones',
  scope: 'global',
  displayName: 'Zones',
  singularDisplayName: 'Zone',
  sync: 'none',
  nameIsDnsLabel: true,
  schema: ZoneSpecSchema,
  validate: validateZone,
});

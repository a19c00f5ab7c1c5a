import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const ZoneEgressSpecSchema = message({});
export type ZoneEgressSpec = z.infer<typeof ZoneEgressSpecSchema>;

export function validateZoneEgress(spec: ZoneEgressSpec) {
  const v = new Violations();
  return v.list;
}

export const zoneEgressKind = defineKind({
  name: 'ZoneEgress',
  path: 'zoneegresses',
  scope: 'global',
  displayName: 'Zone Egresses',
  singularDisplayName: 'Zone Egress',
  writableOn: ['standalone', 'zone'],
  sync: 'zoneToGlobal',
  schema: ZoneEgressSpecSchema,
  validate: validateZoneEgress,
});

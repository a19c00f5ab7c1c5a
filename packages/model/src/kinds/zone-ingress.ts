import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const ZoneIngressSpecSchema = message({});
export type ZoneIngressSpec = z.infer<typeof ZoneIngressSpecSchema>;

export function validateZoneIngress(spec: ZoneIngressSpec) {
  const v = new Violations();
  return v.list;
}

export const zoneIngressKind = defineKind({
  name: 'ZoneIngress',
  path: 'zone-ingresses',
  scope: 'global',
  displayName: 'Zone Ingresses',
  singularDisplayName: 'Zone Ingress',
  writableOn: ['standalone', 'global', 'zone'],
  sync: 'zoneToGlobal',
  schema: ZoneIngressSpecSchema,
  validate: validateZoneIngress,
});

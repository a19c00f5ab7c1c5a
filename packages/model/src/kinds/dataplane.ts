import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const DataplaneSpecSchema = message({});
export type DataplaneSpec = z.infer<typeof DataplaneSpecSchema>;

export function validateDataplane(spec: DataplaneSpec) {
  const v = new Violations();
  return v.list;
}

export const dataplaneKind = defineKind({
  name: 'Dataplane',
  path: 'dataplanes',
  scope: 'mesh',
  displayName: 'Dataplanes',
  singularDisplayName: 'Dataplane',
  writableOn: ['standalone', 'zone'],
  sync: 'zoneToGlobal',
  schema: DataplaneSpecSchema,
  validate: validateDataplane,
});

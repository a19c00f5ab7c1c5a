import type { z } from 'zod';
import { defineKind, KDS_FLAGS } from '../kind.js';
import type { Violation } from '../validation/violations.js';
import { boolValue, message } from '../wire.js';

// `enabled` is a BoolValue: absent means enabled, and an explicit `false` is kept.
export const ZoneSpecSchema = message({ enabled: boolValue() });
export type ZoneSpec = z.infer<typeof ZoneSpecSchema>;

/** The reference does not validate a zone's spec (its name rule is checked with the metadata). */
export const validateZone = (_spec: ZoneSpec): Violation[] => [];

export const zoneKind = defineKind({
  name: 'Zone',
  cliNames: { singular: 'zone', plural: 'zones' },
  path: 'zones',
  scope: 'global',
  displayName: 'Zones',
  singularDisplayName: 'Zone',
  // Written on the global (or a standalone control plane) and never sent to zones.
  kdsFlags: KDS_FLAGS.providedByGlobal,
  nameIsDnsLabel: true,
  schema: ZoneSpecSchema,
  validate: validateZone,
  affects: 'nothing',
  example: { name: 'zone-1', spec: { enabled: true } },
});

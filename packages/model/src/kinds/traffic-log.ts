import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const TrafficLogSpecSchema = message({});
export type TrafficLogSpec = z.infer<typeof TrafficLogSpecSchema>;

export function validateTrafficLog(spec: TrafficLogSpec) {
  const v = new Violations();
  return v.list;
}

export const trafficLogKind = defineKind({
  name: 'TrafficLog',
  path: 'traffic-logs',
  scope: 'mesh',
  displayName: 'Traffic Logs',
  singularDisplayName: 'Traffic Log',
  selection: 'sourcesDestinations',
  schema: TrafficLogSpecSchema,
  validate: validateTrafficLog,
});

import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const TrafficTraceSpecSchema = message({});
export type TrafficTraceSpec = z.infer<typeof TrafficTraceSpecSchema>;

export function validateTrafficTrace(spec: TrafficTraceSpec) {
  const v = new Violations();
  return v.list;
}

export const trafficTraceKind = defineKind({
  name: 'TrafficTrace',
  path: 'traffic-traces',
  scope: 'mesh',
  displayName: 'Traffic Traces',
  singularDisplayName: 'Traffic Trace',
  selection: 'selectors',
  schema: TrafficTraceSpecSchema,
  validate: validateTrafficTrace,
});

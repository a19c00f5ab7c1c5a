import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { validateServiceToService } from '../validation/policy-rules.js';
import { Violations } from '../validation/violations.js';
import { message, str } from '../wire.js';
import { selectorList } from './common.js';

export const TrafficLogSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  // Optional: without a backend the mesh's default logging backend is used. Not checked
  // against the mesh's backends (docs/api.md, Kinds).
  conf: message({ backend: str() }).optional(),
});
export type TrafficLogSpec = z.infer<typeof TrafficLogSpecSchema>;

export function validateTrafficLog(spec: TrafficLogSpec) {
  const v = new Violations();
  validateServiceToService(v, spec);
  return v.list;
}

export const trafficLogKind = defineKind({
  name: 'TrafficLog',
  cliNames: { singular: 'traffic-log', plural: 'traffic-logs' },
  path: 'traffic-logs',
  scope: 'mesh',
  displayName: 'Traffic Logs',
  singularDisplayName: 'Traffic Log',
  selection: 'sourcesDestinations',
  affects: 'selectedProxies',
  schema: TrafficLogSpecSchema,
  validate: validateTrafficLog,
  example: demo.inMesh('web-logs', { sources: demo.FROM_WEB, destinations: demo.EVERY_SERVICE, conf: { backend: 'file' } }),
});

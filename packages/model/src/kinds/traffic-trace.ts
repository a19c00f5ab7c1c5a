import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { SELECTOR_PROFILES, validateSelectors } from '../validation/tags.js';
import { Violations } from '../validation/violations.js';
import { message, str } from '../wire.js';
import { selectorList } from './common.js';

export const TrafficTraceSpecSchema = message({
  selectors: selectorList(),
  // Optional: without a backend the mesh's default tracing backend is used. Not checked
  // against the mesh's backends (docs/api.md, Kinds).
  conf: message({ backend: str() }).optional(),
});
export type TrafficTraceSpec = z.infer<typeof TrafficTraceSpecSchema>;

export function validateTrafficTrace(spec: TrafficTraceSpec) {
  const v = new Violations();
  validateSelectors(v, 'selectors', spec.selectors, SELECTOR_PROFILES.any);
  return v.list;
}

export const trafficTraceKind = defineKind({
  name: 'TrafficTrace',
  cliNames: { singular: 'traffic-trace', plural: 'traffic-traces' },
  path: 'traffic-traces',
  scope: 'mesh',
  displayName: 'Traffic Traces',
  singularDisplayName: 'Traffic Trace',
  selection: 'selectors',
  affects: 'selectedProxies',
  schema: TrafficTraceSpecSchema,
  validate: validateTrafficTrace,
  example: demo.inMesh('web-traces', { selectors: demo.FROM_WEB, conf: { backend: 'zipkin' } }),
});

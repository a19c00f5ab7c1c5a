import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const TrafficRouteSpecSchema = message({});
export type TrafficRouteSpec = z.infer<typeof TrafficRouteSpecSchema>;

export function validateTrafficRoute(spec: TrafficRouteSpec) {
  const v = new Violations();
  return v.list;
}

export const trafficRouteKind = defineKind({
  name: 'TrafficRoute',
  path: 'traffic-routes',
  scope: 'mesh',
  displayName: 'Traffic Routes',
  singularDisplayName: 'Traffic Route',
  selection: 'sourcesDestinations',
  schema: TrafficRouteSpecSchema,
  validate: validateTrafficRoute,
});

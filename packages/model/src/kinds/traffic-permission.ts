import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { SELECTOR_PROFILES, validateSelectors } from '../validation/tags.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';
import { selectorList } from './common.js';

export const TrafficPermissionSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
});
export type TrafficPermissionSpec = z.infer<typeof TrafficPermissionSpecSchema>;

export function validateTrafficPermission(spec: TrafficPermissionSpec) {
  const v = new Violations();
  validateSelectors(v, 'sources', spec.sources, SELECTOR_PROFILES.any);
  validateSelectors(v, 'destinations', spec.destinations, SELECTOR_PROFILES.any);
  return v.list;
}

export const trafficPermissionKind = defineKind({
  name: 'TrafficPermission',
  cliNames: { singular: 'traffic-permission', plural: 'traffic-permissions' },
  path: 'traffic-permissions',
  scope: 'mesh',
  displayName: 'Traffic Permissions',
  singularDisplayName: 'Traffic Permission',
  selection: 'sourcesDestinations',
  // Destinations select inbounds; sources select senders (gateways, external service access).
  reach: 'destinationsAndSenders',
  affects: 'selectedProxies',
  schema: TrafficPermissionSpecSchema,
  validate: validateTrafficPermission,
  example: demo.inMesh('web-to-backend', { sources: demo.FROM_WEB, destinations: demo.TO_BACKEND }),
});

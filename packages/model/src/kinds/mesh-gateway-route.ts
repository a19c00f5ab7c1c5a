import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const MeshGatewayRouteSpecSchema = message({});
export type MeshGatewayRouteSpec = z.infer<typeof MeshGatewayRouteSpecSchema>;

export function validateMeshGatewayRoute(spec: MeshGatewayRouteSpec) {
  const v = new Violations();
  return v.list;
}

export const meshGatewayRouteKind = defineKind({
  name: 'MeshGatewayRoute',
  path: 'meshgatewayroutes',
  scope: 'mesh',
  displayName: 'Mesh Gateway Routes',
  singularDisplayName: 'Mesh Gateway Route',
  selection: 'selectors',
  schema: MeshGatewayRouteSpecSchema,
  validate: validateMeshGatewayRoute,
});

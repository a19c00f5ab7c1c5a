import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const MeshGatewaySpecSchema = message({});
export type MeshGatewaySpec = z.infer<typeof MeshGatewaySpecSchema>;

export function validateMeshGateway(spec: MeshGatewaySpec) {
  const v = new Violations();
  return v.list;
}

export const meshGatewayKind = defineKind({
  name: 'MeshGateway',
  path: 'meshgateways',
  scope: 'mesh',
  displayName: 'Mesh Gateways',
  singularDisplayName: 'Mesh Gateway',
  selection: 'selectors',
  schema: MeshGatewaySpecSchema,
  validate: validateMeshGateway,
});

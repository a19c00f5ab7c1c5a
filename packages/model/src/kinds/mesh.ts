import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const MeshSpecSchema = message({});
export type MeshSpec = z.infer<typeof MeshSpecSchema>;

export function validateMesh(spec: MeshSpec) {
  const v = new Violations();
  return v.list;
}

export const meshKind = defineKind({
  name: 'Mesh',
  path: 'meshes',
  scope: 'global',
  displayName: 'Meshes',
  singularDisplayName: 'Mesh',
  schema: MeshSpecSchema,
  validate: validateMesh,
});

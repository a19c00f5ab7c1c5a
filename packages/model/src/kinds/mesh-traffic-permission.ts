import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { defaultConf, MUST_BE_DEFINED, NEEDS_AT_LEAST_ONE_ITEM, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef, type TargetRefKind } from './target-ref.js';

/** `AllowWithShadowDeny` allows, and logs what a deny would have refused. */
export const MeshTrafficPermissionConfSchema = defaultConf({ action: z.enum(['Allow', 'Deny', 'AllowWithShadowDeny']).optional() });
export type MeshTrafficPermissionConf = z.infer<typeof MeshTrafficPermissionConfSchema>;

export const MeshTrafficPermissionSpecSchema = z.object({
  targetRef: TargetRefSchema,
  from: targetRefEntries(MeshTrafficPermissionConfSchema),
});
export type MeshTrafficPermissionSpec = z.infer<typeof MeshTrafficPermissionSpecSchema>;

const KINDS: readonly TargetRefKind[] = ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset'];

export function validateMeshTrafficPermission(spec: MeshTrafficPermissionSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, KINDS);
  if (!spec.from) v.add('spec.from', NEEDS_AT_LEAST_ONE_ITEM);
  validateEntries(v, 'spec.from', spec.from, KINDS, (v, path, conf: MeshTrafficPermissionConf) => {
    if (conf.action === undefined) v.add(fieldPath(path, 'action'), MUST_BE_DEFINED);
  });
  return v.list;
}

export const meshTrafficPermissionKind = defineKind({
  name: 'MeshTrafficPermission',
  cliNames: { singular: 'meshtrafficpermission', plural: 'meshtrafficpermissions' },
  path: 'meshtrafficpermissions',
  scope: 'mesh',
  displayName: 'Mesh Traffic Permissions',
  singularDisplayName: 'Mesh Traffic Permission',
  targetRefPolicy: { from: true, to: false },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshTrafficPermissionSpecSchema,
  validate: validateMeshTrafficPermission,
  example: demo.inMesh('web-to-backend', { spec: { targetRef: demo.BACKEND, from: [{ targetRef: demo.WEB, default: { action: 'Allow' } }] } }),
});

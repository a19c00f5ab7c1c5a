import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { goList } from '../wire.js';
import { BackendRefSchema, TargetRefSchema, validateTargetRef } from './target-ref.js';

/** Where TCP traffic to the service goes instead: backends sharing it by weight. */
export const TcpRouteRuleSchema = z.object({ default: z.object({ backendRefs: z.array(BackendRefSchema).min(1) }) });
export type TcpRouteRule = z.infer<typeof TcpRouteRuleSchema>;

export const MeshTCPRouteSpecSchema = z.object({
  targetRef: TargetRefSchema,
  to: z
    .array(z.object({ targetRef: TargetRefSchema, rules: goList(TcpRouteRuleSchema, 1) }))
    .min(1)
    .optional(),
});
export type MeshTCPRouteSpec = z.infer<typeof MeshTCPRouteSpecSchema>;

export function validateMeshTCPRoute(spec: MeshTCPRouteSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset']);
  (spec.to ?? []).forEach((to, i) => {
    validateTargetRef(v, `spec.to[${i}].targetRef`, to.targetRef, ['MeshService']);
    (to.rules ?? []).forEach((rule, j) =>
      rule.default.backendRefs.forEach((backend, k) => validateTargetRef(v, `spec.to[${i}].rules[${j}].default.backendRefs[${k}]`, backend, ['MeshService', 'MeshServiceSubset'])),
    );
  });
  return v.list;
}

export const meshTCPRouteKind = defineKind({
  name: 'MeshTCPRoute',
  cliNames: { singular: 'meshtcproute', plural: 'meshtcproutes' },
  path: 'meshtcproutes',
  scope: 'mesh',
  displayName: 'Mesh TCP Routes',
  singularDisplayName: 'Mesh TCP Route',
  targetRefPolicy: { from: false, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshTCPRouteSpecSchema,
  validate: validateMeshTCPRoute,
  example: demo.inMesh('web-to-backend-tcp', { spec: { targetRef: demo.WEB, to: [{ targetRef: demo.BACKEND, rules: [{ default: { backendRefs: [{ kind: 'MeshService', name: 'backend-v2' }] } }] }] } }),
});

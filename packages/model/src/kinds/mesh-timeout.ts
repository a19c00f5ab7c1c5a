import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { durationGreaterThanZeroOrNil, durationNotNegativeOrNil } from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goDuration } from '../wire.js';
import { defaultConf, FROM_OR_TO_REQUIRED, MUST_NOT_BE_DEFINED, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef, type TargetRefKind } from './target-ref.js';

export const MeshTimeoutConfSchema = defaultConf({
  connectionTimeout: goDuration().optional(),
  idleTimeout: goDuration().optional(),
  http: z
    .object({
      requestTimeout: goDuration().optional(),
      streamIdleTimeout: goDuration().optional(),
      maxStreamDuration: goDuration().optional(),
      maxConnectionDuration: goDuration().optional(),
    })
    .optional(),
});
export type MeshTimeoutConf = z.infer<typeof MeshTimeoutConfSchema>;

export const MeshTimeoutSpecSchema = z.object({
  targetRef: TargetRefSchema,
  to: targetRefEntries(MeshTimeoutConfSchema),
  from: targetRefEntries(MeshTimeoutConfSchema),
});
export type MeshTimeoutSpec = z.infer<typeof MeshTimeoutSpecSchema>;

const TOP_KINDS: readonly TargetRefKind[] = ['Mesh', 'MeshSubset', 'MeshGateway', 'MeshService', 'MeshServiceSubset', 'MeshHTTPRoute'];
/** A route or a gateway has no inbound traffic of its own and applies to every destination. */
const routesOrGateways = (kind: TargetRefKind | undefined) => kind === 'MeshHTTPRoute' || kind === 'MeshGateway';
const ROUTE_LEVEL_ONLY = "can't be specified when top-level TargetRef is referencing MeshHTTPRoute";

function validateConf(v: Violations, path: string, conf: MeshTimeoutConf, topKind: TargetRefKind | undefined): void {
  if (conf.connectionTimeout === undefined && conf.idleTimeout === undefined && conf.http === undefined) {
    v.add(path, 'at least one timeout should be configured');
    return;
  }
  const http = conf.http;
  if (topKind === 'MeshHTTPRoute') {
    // A route's timeouts apply to its requests; connections belong to the service.
    if (conf.connectionTimeout !== undefined) v.add(fieldPath(path, 'connectionTimeout'), ROUTE_LEVEL_ONLY);
    if (conf.idleTimeout !== undefined) v.add(fieldPath(path, 'idleTimeout'), ROUTE_LEVEL_ONLY);
    if (http?.maxStreamDuration !== undefined) v.add(fieldPath(path, 'http.maxStreamDuration'), ROUTE_LEVEL_ONLY);
    if (http?.maxConnectionDuration !== undefined) v.add(fieldPath(path, 'http.maxConnectionDuration'), ROUTE_LEVEL_ONLY);
  }
  durationGreaterThanZeroOrNil(v, fieldPath(path, 'connectionTimeout'), conf.connectionTimeout);
  durationNotNegativeOrNil(v, fieldPath(path, 'idleTimeout'), conf.idleTimeout);
  if (!http) return;
  const httpPath = fieldPath(path, 'http');
  const timeouts = ['requestTimeout', 'streamIdleTimeout', 'maxStreamDuration', 'maxConnectionDuration'] as const;
  if (timeouts.every((name) => http[name] === undefined)) v.add(httpPath, 'at least one timeout in this section should be configured');
  for (const name of timeouts) durationNotNegativeOrNil(v, fieldPath(httpPath, name), http[name]);
}

export function validateMeshTimeout(spec: MeshTimeoutSpec) {
  const v = new Violations();
  const topKind = spec.targetRef.kind;
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, TOP_KINDS);
  if (!spec.to && !spec.from) v.add('spec', FROM_OR_TO_REQUIRED);
  const validate = (v: Violations, path: string, conf: MeshTimeoutConf) => validateConf(v, path, conf, topKind);
  if (routesOrGateways(topKind)) {
    if (spec.from) v.add('spec.from', MUST_NOT_BE_DEFINED);
  } else {
    validateEntries(v, 'spec.from', spec.from, ['Mesh'], validate);
  }
  validateEntries(v, 'spec.to', spec.to, routesOrGateways(topKind) ? ['Mesh'] : ['Mesh', 'MeshService'], validate);
  return v.list;
}

export const meshTimeoutKind = defineKind({
  name: 'MeshTimeout',
  cliNames: { singular: 'meshtimeout', plural: 'meshtimeouts' },
  path: 'meshtimeouts',
  scope: 'mesh',
  displayName: 'Mesh Timeouts',
  singularDisplayName: 'Mesh Timeout',
  targetRefPolicy: { from: true, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshTimeoutSpecSchema,
  validate: validateMeshTimeout,
  example: demo.inMesh('backend-timeout', { spec: { targetRef: demo.MESH, to: [{ targetRef: demo.BACKEND, default: { connectionTimeout: '5s', http: { requestTimeout: '15s' } } }] } }),
});

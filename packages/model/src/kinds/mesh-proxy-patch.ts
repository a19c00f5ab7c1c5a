import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { parseEnvoyConfig } from '../validation/envoy-config.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goList, goStringMap } from '../wire.js';
import { MUST_BE_DEFINED, MUST_NOT_BE_DEFINED, MUST_NOT_BE_EMPTY, mustHaveExactlyOneOf, mustHaveOnlyOne, TargetRefSchema, validateTargetRef } from './target-ref.js';

const JSON_PATCH_OPERATIONS = ['add', 'remove', 'replace', 'move', 'copy'] as const;

/** One JSON Patch (RFC 6902) operation on the generated resource. */
const JsonPatchSchema = z.object({
  op: z.enum(JSON_PATCH_OPERATIONS),
  path: z.string(),
  value: z.unknown().optional(),
  from: z.string().optional(),
});
type JsonPatch = z.infer<typeof JsonPatchSchema>;

const RESOURCE_OPERATIONS = ['Add', 'Remove', 'Patch'] as const;
const FILTER_OPERATIONS = ['Remove', 'Patch', 'AddFirst', 'AddBefore', 'AddAfter', 'AddLast'] as const;

/** A modification: what it matches, what it does, and the Envoy config (YAML or JSON) or patches it applies. */
const modification = <M extends z.ZodType, O extends readonly [string, ...string[]]>(match: M, operations: O) =>
  z.object({ match, operation: z.enum(operations), value: z.string().optional(), jsonPatches: goList(JsonPatchSchema) });

const origin = { origin: z.string().optional(), name: z.string().optional() };
const filterMatch = z.object({ ...origin, listenerName: z.string().optional(), listenerTags: goStringMap() }).optional();

const ModificationSchema = z.object({
  cluster: modification(z.object(origin).optional(), RESOURCE_OPERATIONS).optional(),
  listener: modification(z.object({ ...origin, tags: goStringMap() }).optional(), RESOURCE_OPERATIONS).optional(),
  networkFilter: modification(filterMatch, FILTER_OPERATIONS).optional(),
  httpFilter: modification(filterMatch, FILTER_OPERATIONS).optional(),
  virtualHost: modification(z.object({ ...origin, routeConfigurationName: z.string().optional() }), RESOURCE_OPERATIONS).optional(),
});

export const MeshProxyPatchConfSchema = z.object({ appendModifications: z.array(ModificationSchema) });
export type MeshProxyPatchConf = z.infer<typeof MeshProxyPatchConfSchema>;

export const MeshProxyPatchSpecSchema = z.object({ targetRef: TargetRefSchema, default: MeshProxyPatchConfSchema });
export type MeshProxyPatchSpec = z.infer<typeof MeshProxyPatchSpecSchema>;

/** What the validators read of any modification; the schema allows each its own operations. */
interface Modification {
  match?: { name?: string | undefined } | undefined;
  operation: (typeof RESOURCE_OPERATIONS)[number] | (typeof FILTER_OPERATIONS)[number];
  value?: string | undefined;
  jsonPatches?: JsonPatch[] | undefined;
}

/**
 * Why embedded Envoy config is not valid, or undefined. Well-formed YAML/JSON describing an
 * object stands in for the reference's full Envoy validation; a patch may be empty.
 */
function envoyConfigError(text: string, patch: boolean): string | undefined {
  const parsed = parseEnvoyConfig(text);
  if ('error' in parsed) return parsed.endOfInput ? 'unexpected EOF' : parsed.error;
  const { value } = parsed;
  if (value === null || value === undefined) return patch ? undefined : 'expected an object';
  if (typeof value !== 'object' || Array.isArray(value)) return `unexpected token ${JSON.stringify(value)}`;
  return undefined;
}

const NOT_VALID = 'native Envoy resource is not valid: ';

function validateResourceValue(v: Violations, path: string, value: string | undefined): void {
  if (value === undefined) {
    v.add(path, MUST_BE_DEFINED);
    return;
  }
  const error = envoyConfigError(value, false);
  if (error !== undefined) v.add(path, NOT_VALID + error);
}

function validateJsonPatches(v: Violations, path: string, patches: readonly JsonPatch[]): void {
  patches.forEach((patch, i) => {
    const at = `${path}[${i}]`;
    const { op } = patch;
    if (op === 'move' || op === 'copy') {
      if (patch.from === undefined) v.add(fieldPath(at, 'from'), '"from" must not be empty when "op" is one of ["move", "copy"]');
    } else if (patch.from !== undefined) {
      v.add(fieldPath(at, 'from'), '"from" is allowed only when "op" is one of ["move", "copy"]');
    }
    if (op === 'add' || op === 'replace') {
      if (patch.value === undefined) v.add(fieldPath(at, 'value'), '"value" must not be empty when "op" is one of ["add", "replace"]');
    } else if (patch.value !== undefined) {
      v.add(fieldPath(at, 'value'), '"value" is allowed only when "op" is one of ["add", "replace"]');
    }
    if ((patch.path === '' || patch.path === '/') && op === 'remove') v.add(fieldPath(at, 'path'), 'root path cannot be removed');
  });
}

/** A patch is the Envoy config to merge in, or JSON patches: exactly one of them. */
function validatePatch(v: Violations, path: string, entity: string, mod: Modification): void {
  const patches = mod.jsonPatches ?? [];
  if (mod.value !== undefined) {
    if (patches.length > 0) v.add(path, mustHaveOnlyOne(entity, 'value', 'jsonPatches'));
    else {
      const error = envoyConfigError(mod.value, true);
      if (error !== undefined) v.add(fieldPath(path, 'value'), NOT_VALID + error);
    }
  } else if (patches.length > 0) {
    validateJsonPatches(v, fieldPath(path, 'jsonPatches'), patches);
  } else {
    v.add(path, mustHaveExactlyOneOf(entity, 'value', 'jsonPatches'));
  }
}

/** Clusters, listeners and virtual hosts are added, patched or removed; `conflictingMatch` is what an `Add` (a new resource) cannot match. */
function validateResourceModification(v: Violations, path: string, entity: string, mod: Modification, conflictingMatch: string | undefined): void {
  switch (mod.operation) {
    case 'Add':
      if (conflictingMatch !== undefined) v.add(fieldPath(path, conflictingMatch), MUST_NOT_BE_DEFINED);
      validateResourceValue(v, fieldPath(path, 'value'), mod.value);
      break;
    case 'Patch':
      validatePatch(v, path, entity, mod);
      break;
    case 'Remove':
      if (mod.value !== undefined) v.add(fieldPath(path, 'value'), MUST_NOT_BE_DEFINED);
  }
}

const FILTER_NAME_REQUIRED: Record<string, string> = {
  AddBefore: 'must be defined. You need to pick a filter before which this one will be added',
  AddAfter: 'must be defined. You need to pick a filter after which this one will be added',
  Patch: MUST_BE_DEFINED,
};

/** Network and HTTP filters are also placed first, last, or next to a named filter. */
function validateFilterModification(v: Violations, path: string, entity: string, mod: Modification): void {
  const nameRequired = FILTER_NAME_REQUIRED[mod.operation];
  if (nameRequired !== undefined && mod.match?.name === undefined) v.add(fieldPath(path, 'match.name'), nameRequired);
  switch (mod.operation) {
    case 'AddFirst':
    case 'AddLast':
    case 'AddBefore':
    case 'AddAfter':
      validateResourceValue(v, fieldPath(path, 'value'), mod.value);
      break;
    case 'Patch':
      validatePatch(v, path, entity, mod);
      break;
    case 'Remove':
      if (mod.value !== undefined) v.add(fieldPath(path, 'value'), MUST_NOT_BE_DEFINED);
  }
}

function validateConf(v: Violations, path: string, conf: MeshProxyPatchConf): void {
  const at = fieldPath(path, 'appendModifications');
  conf.appendModifications.forEach((mod, i) => {
    const modPath = `${at}[${i}]`;
    // The first modification set is the one applied, as the reference reads it.
    if (mod.cluster) validateResourceModification(v, fieldPath(modPath, 'cluster'), 'cluster', mod.cluster, mod.cluster.match ? 'match' : undefined);
    else if (mod.listener) validateResourceModification(v, fieldPath(modPath, 'listener'), 'listener', mod.listener, mod.listener.match ? 'match' : undefined);
    else if (mod.virtualHost) {
      validateResourceModification(v, fieldPath(modPath, 'virtualHost'), 'virtualHost', mod.virtualHost, mod.virtualHost.match.name !== undefined ? 'match.name' : undefined);
    } else if (mod.networkFilter) validateFilterModification(v, fieldPath(modPath, 'networkFilter'), 'networkFilter', mod.networkFilter);
    else if (mod.httpFilter) validateFilterModification(v, fieldPath(modPath, 'httpFilter'), 'httpFilter', mod.httpFilter);
    else v.add(modPath, 'at least one modification has to be defined');
  });
  if (conf.appendModifications.length === 0) v.add(at, MUST_NOT_BE_EMPTY);
}

export function validateMeshProxyPatch(spec: MeshProxyPatchSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset', 'MeshGateway']);
  validateConf(v, 'spec.default', spec.default);
  return v.list;
}

export const meshProxyPatchKind = defineKind({
  name: 'MeshProxyPatch',
  cliNames: { singular: 'meshproxypatch', plural: 'meshproxypatches' },
  path: 'meshproxypatches',
  scope: 'mesh',
  displayName: 'Mesh Proxy Patches',
  singularDisplayName: 'Mesh Proxy Patch',
  targetRefPolicy: { from: false, to: false },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshProxyPatchSpecSchema,
  validate: validateMeshProxyPatch,
  example: demo.inMesh('backend-connect-timeout', {
    spec: { targetRef: demo.WEB, default: { appendModifications: [{ cluster: { match: { name: 'backend' }, operation: 'Patch', value: 'connectTimeout: 5s' } }] } },
  }),
});

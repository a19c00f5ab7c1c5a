// Modifications of a proxy's generated resources (docs/policies.md, MeshProxyPatch; ProxyTemplate):
// clusters and listeners added, removed or patched (merged with a value, or by JSON patches),
// network and HTTP filters added at a place, removed or patched, and virtual hosts of inline route
// configurations. A modification that cannot be applied (a JSON patch replacing what is not there)
// leaves the resources as they were.
import { type MeshProxyPatchConf, parseEnvoyConfig } from '@mesh/model';
import { type JsonObject, type JsonValue, type Listener, scalarText, TYPE } from './envoy.js';
import { filterChainsOf, isObject, listOf, objectsOf, updateHttpConnectionManager } from './plugins/common.js';
import { applyJsonPatch, JsonPatchError, type JsonPatchOperation } from './plugins/json-patch.js';
import type { Entry, ResourceSet } from './resource-set.js';

/** A modification as MeshProxyPatch spells it; ProxyTemplate's are translated to it. */
export type Modification = MeshProxyPatchConf['appendModifications'][number];
export type Operation = 'Add' | 'Remove' | 'Patch' | 'AddFirst' | 'AddLast' | 'AddBefore' | 'AddAfter';

interface Mod<M> {
  readonly match?: M | undefined;
  readonly operation: Operation;
  readonly value?: string | undefined;
  readonly jsonPatches?: readonly JsonPatchOperation[] | undefined;
}

const TAGS_METADATA_KEY = 'io.mesh.tags';

// --- Values and merging --------------------------------------------------------------------

/** Fields whose members are map entries (their keys are data, not field names). */
const MAP_FIELDS = new Set(['filterMetadata', 'typedFilterMetadata', 'typedPerFilterConfig', 'typedExtensionProtocolOptions']);

const lowerCamel = (key: string): string => key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

/**
 * Envoy config as users write it (proto or JSON field names) with JSON field names, as the
 * generated resources have them. Map keys and metadata values are left as written.
 */
export function withJsonNames(value: unknown, mapKeys = false): JsonValue {
  if (Array.isArray(value)) return value.map((item) => withJsonNames(item));
  if (!isObject(value)) return (value ?? null) as JsonValue;
  const result: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    const name = mapKeys || key === '@type' ? key : lowerCamel(key);
    // Metadata values are free-form Structs.
    result[name] = name === 'filterMetadata' ? member : withJsonNames(member, MAP_FIELDS.has(name));
  }
  return result;
}

/** The Envoy object a modification's value describes; an empty one without a value. */
function valueOf(mod: Mod<unknown>): JsonObject | undefined {
  if (mod.value === undefined) return {};
  const parsed = parseEnvoyConfig(mod.value);
  if ('error' in parsed) return undefined;
  const value = withJsonNames(parsed.value);
  return isObject(value) ? value : parsed.value === null || parsed.value === undefined ? {} : undefined;
}

/**
 * `source` merged into `target` as protobuf merges messages: fields set in the source replace
 * scalars (durations and wrappers among them), merge into messages and append to lists; map
 * entries and typed configs (`Any`) are replaced whole.
 */
function mergeMessage(target: JsonObject, source: JsonObject): void {
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const current = target[key];
    if (Array.isArray(value)) target[key] = [...(Array.isArray(current) ? current : []), ...structuredClone(value)];
    else if (isObject(value) && isObject(current) && !('@type' in value)) {
      if (MAP_FIELDS.has(key)) Object.assign(current, structuredClone(value));
      else mergeMessage(current, value);
    } else target[key] = structuredClone(value);
  }
}

/** A typed config merged with another of the same type; undefined when the types differ. */
function mergeTyped(target: JsonObject, source: JsonValue | undefined): JsonObject | undefined {
  if (!isObject(source)) return target;
  if (source['@type'] !== target['@type']) return undefined;
  const merged = structuredClone(target);
  const { '@type': _type, ...fields } = source;
  mergeMessage(merged, fields);
  return merged;
}

/** A message edited by JSON patches, on its JSON without `@type` (which stays what it was). */
function patched(message: JsonObject, patches: readonly JsonPatchOperation[]): JsonObject | undefined {
  const { '@type': type, ...fields } = structuredClone(message);
  try {
    const result = applyJsonPatch(fields, patches);
    if (!isObject(result)) return undefined;
    return type === undefined ? result : { '@type': type, ...result };
  } catch (error) {
    if (error instanceof JsonPatchError) return undefined;
    throw error;
  }
}

/** Patches a message in place, with JSON patches when it has any, else merging the value. */
function patchInPlace(message: JsonObject, mod: Mod<unknown>, value: JsonObject): void {
  if (mod.jsonPatches?.length) {
    const result = patched(message, mod.jsonPatches);
    if (!result) return;
    for (const key of Object.keys(message)) delete message[key];
    Object.assign(message, result);
  } else mergeMessage(message, value);
}

/** Patches a typed config: JSON patches, or a merge with a value of the same type. */
function patchedTypedConfig(typedConfig: JsonValue | undefined, mod: Mod<unknown>, valueConfig: JsonValue | undefined): JsonObject | undefined {
  if (!isObject(typedConfig)) return undefined;
  return mod.jsonPatches?.length ? patched(typedConfig, mod.jsonPatches) : mergeTyped(typedConfig, valueConfig);
}

// --- Matching ------------------------------------------------------------------------------

const tagsOf = (listener: Listener): Record<string, string> => {
  const metadata = isObject(listener.metadata) && isObject(listener.metadata.filterMetadata) ? listener.metadata.filterMetadata[TAGS_METADATA_KEY] : undefined;
  return isObject(metadata) ? (metadata as Record<string, string>) : {};
};

/** Every key of the selector has the listener's value, or any value for `*`. */
const tagsMatch = (selector: Readonly<Record<string, string>> | undefined, tags: Readonly<Record<string, string>>): boolean =>
  Object.entries(selector ?? {}).every(([key, value]) => Object.hasOwn(tags, key) && (value === '*' || tags[key] === value));

interface ResourceMatch {
  readonly name?: string | undefined;
  readonly origin?: string | undefined;
}

const resourceMatches = (match: ResourceMatch | undefined, entry: Entry<unknown>): boolean =>
  match === undefined || ((match.name === undefined || match.name === entry.name) && (match.origin === undefined || match.origin === entry.origin));

interface FilterMatch extends ResourceMatch {
  readonly listenerName?: string | undefined;
  readonly listenerTags?: Readonly<Record<string, string>> | undefined;
}

const listenerOfFilterMatches = (match: FilterMatch | undefined, entry: Entry<Listener>): boolean =>
  match === undefined ||
  ((match.listenerName === undefined || match.listenerName === entry.name) &&
    (match.origin === undefined || match.origin === entry.origin) &&
    tagsMatch(match.listenerTags, tagsOf(entry.resource)));

const filterMatches = (match: FilterMatch | undefined, filter: JsonObject): boolean => match?.name === undefined || match.name === filter.name;

// --- Modifications -------------------------------------------------------------------------

function modifyClusters(resources: ResourceSet, mod: Mod<ResourceMatch>, origin: string): void {
  const value = valueOf(mod);
  if (!value) return;
  if (mod.operation === 'Add') {
    resources.addCluster(origin, { ...value, '@type': TYPE.cluster, name: scalarText(value.name) });
    return;
  }
  for (const entry of resources.clusters.entries()) {
    if (!resourceMatches(mod.match, entry)) continue;
    if (mod.operation === 'Remove') resources.clusters.remove(entry.name);
    else if (mod.operation === 'Patch') patchInPlace(entry.resource, mod, value);
  }
}

function modifyListeners(resources: ResourceSet, mod: Mod<ResourceMatch & { tags?: Readonly<Record<string, string>> | undefined }>, origin: string): void {
  const value = valueOf(mod);
  if (!value) return;
  if (mod.operation === 'Add') {
    resources.addListener(origin, { ...value, '@type': TYPE.listener, name: scalarText(value.name) });
    return;
  }
  for (const entry of resources.listeners.entries()) {
    if (!resourceMatches(mod.match, entry) || !tagsMatch(mod.match?.tags, tagsOf(entry.resource))) continue;
    if (mod.operation === 'Remove') resources.listeners.remove(entry.name);
    else if (mod.operation === 'Patch') patchInPlace(entry.resource, mod, value);
  }
}

/** Places a filter in a list by the operation: first, last, or before or after the first filter of the matched name. */
function insertFilter(filters: JsonValue[], operation: Operation, filter: JsonObject, name: string | undefined): void {
  if (operation === 'AddFirst') filters.unshift(structuredClone(filter));
  else if (operation === 'AddLast') filters.push(structuredClone(filter));
  else {
    const at = filters.findIndex((candidate) => isObject(candidate) && name !== undefined && candidate.name === name);
    if (at >= 0) filters.splice(operation === 'AddBefore' ? at : at + 1, 0, structuredClone(filter));
  }
}

/** The modification on one list of filters (a chain's network filters or an HCM's HTTP filters). */
function modifyFilterList(owner: JsonObject, key: 'filters' | 'httpFilters', mod: Mod<FilterMatch>, filter: JsonObject): void {
  const filters = listOf(owner, key);
  switch (mod.operation) {
    case 'Remove': {
      const kept = filters.filter((candidate) => !isObject(candidate) || !filterMatches(mod.match, candidate));
      if (kept.length > 0) owner[key] = kept;
      else delete owner[key];
      return;
    }
    case 'Patch':
      for (const candidate of objectsOf(filters)) {
        if (!filterMatches(mod.match, candidate)) continue;
        const typedConfig = patchedTypedConfig(candidate.typedConfig, mod, filter.typedConfig);
        if (typedConfig) candidate.typedConfig = typedConfig;
      }
      return;
    default:
      insertFilter(filters, mod.operation, filter, mod.match?.name);
  }
}

function modifyNetworkFilters(resources: ResourceSet, mod: Mod<FilterMatch>): void {
  const filter = valueOf(mod);
  if (!filter) return;
  for (const entry of resources.listeners.entries()) {
    if (!listenerOfFilterMatches(mod.match, entry)) continue;
    // Every filter chain of the listener.
    for (const chain of filterChainsOf(entry.resource)) modifyFilterList(chain, 'filters', mod, filter);
  }
}

function modifyHttpFilters(resources: ResourceSet, mod: Mod<FilterMatch>): void {
  const filter = valueOf(mod);
  if (!filter) return;
  for (const entry of resources.listeners.entries()) {
    if (!listenerOfFilterMatches(mod.match, entry)) continue;
    for (const chain of filterChainsOf(entry.resource)) updateHttpConnectionManager(chain, (hcm) => modifyFilterList(hcm, 'httpFilters', mod, filter));
  }
}

/** Virtual hosts of the route configurations inline in the HTTP connection managers. */
function modifyVirtualHosts(resources: ResourceSet, mod: Mod<{ origin?: string | undefined; name?: string | undefined; routeConfigurationName?: string | undefined }>): void {
  const virtualHost = valueOf(mod);
  if (!virtualHost) return;
  const match = mod.match;
  for (const entry of resources.listeners.entries()) {
    if (match?.origin !== undefined && match.origin !== entry.origin) continue;
    for (const chain of filterChainsOf(entry.resource)) {
      updateHttpConnectionManager(chain, (hcm) => {
        const routeConfig = hcm.routeConfig;
        if (!isObject(routeConfig)) return;
        if (match?.routeConfigurationName !== undefined && match.routeConfigurationName !== routeConfig.name) return;
        const hostMatches = (host: JsonObject) => match?.name === undefined || match.name === host.name;
        if (mod.operation === 'Add') listOf(routeConfig, 'virtualHosts').push(structuredClone(virtualHost));
        else if (mod.operation === 'Remove') {
          const kept = objectsOf(routeConfig.virtualHosts).filter((host) => !hostMatches(host));
          if (kept.length > 0) routeConfig.virtualHosts = kept;
          else delete routeConfig.virtualHosts;
        } else if (mod.operation === 'Patch') {
          for (const host of objectsOf(routeConfig.virtualHosts)) if (hostMatches(host)) patchInPlace(host, mod, virtualHost);
        }
      });
    }
  }
}

/** Applies the modifications in order; resources they add get `origin`. */
export function applyModifications(resources: ResourceSet, modifications: readonly Modification[], origin: string): void {
  for (const modification of modifications) {
    if (modification.cluster) modifyClusters(resources, modification.cluster, origin);
    else if (modification.listener) modifyListeners(resources, modification.listener, origin);
    else if (modification.networkFilter) modifyNetworkFilters(resources, modification.networkFilter);
    else if (modification.httpFilter) modifyHttpFilters(resources, modification.httpFilter);
    else if (modification.virtualHost) modifyVirtualHosts(resources, modification.virtualHost);
  }
}

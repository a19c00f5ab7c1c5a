import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { goJsonType, parseEnvoyConfig } from '../validation/envoy-config.js';
import { validateSelectors } from '../validation/tags.js';
import { fieldPath, indexPath, Violations } from '../validation/violations.js';
import { list, message, str, stringMap } from '../wire.js';
import { selectorList } from './common.js';
import { messageWithOneof } from './oneof.js';

/** A modification of generated Envoy config; `match` picks what it applies to. */
const modification = <S extends z.ZodRawShape>(matchFields: S) =>
  message({
    match: message({ origin: str(), name: str(), ...matchFields }).optional(),
    operation: str(),
    value: str(),
  });

const FilterModificationSchema = modification({ listenerName: str(), listenerTags: stringMap() });

const ModificationSchema = messageWithOneof(
  {
    cluster: modification({}).optional(),
    listener: modification({ tags: stringMap() }).optional(),
    networkFilter: FilterModificationSchema.optional(),
    httpFilter: FilterModificationSchema.optional(),
    virtualHost: modification({ routeConfigurationName: str() }).optional(),
  },
  ['cluster', 'listener', 'networkFilter', 'httpFilter', 'virtualHost'],
);

/** What the validators read of any modification. */
interface Modification {
  match?: { name?: string | undefined } | undefined;
  operation?: string | undefined;
  value?: string | undefined;
}

export const ProxyTemplateSpecSchema = message({
  selectors: selectorList(),
  conf: message({
    imports: list(z.string()),
    resources: list(message({ name: str(), version: str(), resource: str() })),
    modifications: list(ModificationSchema),
  }).optional(),
});
export type ProxyTemplateSpec = z.infer<typeof ProxyTemplateSpecSchema>;

/** The profiles a template may import (docs/api.md, Kinds; the reference also lists its internal `gateway-proxy`). */
const PROFILES = ['default-proxy', 'egress-proxy', 'ingress-proxy'];

const RESOURCE_OPERATIONS = ['add', 'patch', 'remove'];
const FILTER_OPERATIONS = ['addFirst', 'addLast', 'addBefore', 'addAfter', 'patch', 'remove'];

/** Filter operations that need `match.name`: the filter to insert next to, or to patch. */
const FILTER_MATCH_NAME_REQUIRED: Record<string, string> = {
  addBefore: 'cannot be empty. You need to pick a filter before which this one will be added',
  addAfter: 'cannot be empty. You need to pick a filter after which this one will be added',
  patch: 'cannot be empty',
};

const invalidOperation = (operations: readonly string[]) =>
  `invalid operation. Available operations: ${operations.map((op) => JSON.stringify(op)).join(', ')}`;

const ANY_WITHOUT_TYPE = "Any JSON doesn't have '@type'";

/** A raw `resource` (an Any), the `value` of an add, or the `value` of a patch. */
type EnvoyConfigUse = 'resource' | 'object' | 'patch';

/**
 * Why embedded Envoy config is not valid, or undefined. Well-formed YAML/JSON describing an
 * object is the accepted approximation of the reference's deep Envoy validation. A `resource`
 * is an Any and needs `@type`; a `patch` may be empty (decoding nothing leaves the target as is).
 */
function envoyConfigError(text: string, expected: EnvoyConfigUse): string | undefined {
  const parsed = parseEnvoyConfig(text);
  if ('error' in parsed) return parsed.error;
  const { value } = parsed;
  if (value === null) {
    return expected === 'patch' ? undefined : expected === 'resource' ? ANY_WITHOUT_TYPE : 'expected an object';
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    return `json: cannot unmarshal ${goJsonType(value)} into Go value of type map[string]json.RawMessage`;
  }
  if (expected === 'resource' && !('@type' in value)) return ANY_WITHOUT_TYPE;
  return undefined;
}

function checkEnvoyConfig(v: Violations, path: string, text: string, expected: EnvoyConfigUse): void {
  const error = envoyConfigError(text, expected);
  if (error !== undefined) v.add(path, `native Envoy resource is not valid: ${error}`);
}

/**
 * Clusters, listeners and virtual hosts are added, patched or removed. `conflictingMatch` names
 * the match field the modification sets that an `add` (which creates a new resource) forbids.
 */
function validateResourceModification(v: Violations, path: string, mod: Modification, conflictingMatch: string | undefined): void {
  const value = fieldPath(path, 'value');
  switch (mod.operation) {
    case 'add':
      if (conflictingMatch !== undefined) v.add(fieldPath(path, conflictingMatch), 'cannot be defined');
      checkEnvoyConfig(v, value, mod.value ?? '', 'object');
      break;
    case 'patch':
      checkEnvoyConfig(v, value, mod.value ?? '', 'patch');
      break;
    case 'remove':
      break;
    default:
      v.add(fieldPath(path, 'operation'), invalidOperation(RESOURCE_OPERATIONS));
  }
}

/** Network and HTTP filters are also placed first, last, or next to another filter. */
function validateFilterModification(v: Violations, path: string, mod: Modification): void {
  const operation = mod.operation ?? '';
  if (operation === 'remove') return;
  if (!FILTER_OPERATIONS.includes(operation)) {
    v.add(fieldPath(path, 'operation'), invalidOperation(FILTER_OPERATIONS));
    return;
  }
  const matchNameRequired = FILTER_MATCH_NAME_REQUIRED[operation];
  if (matchNameRequired !== undefined && !mod.match?.name) v.add(fieldPath(path, 'match.name'), matchNameRequired);
  checkEnvoyConfig(v, fieldPath(path, 'value'), mod.value ?? '', operation === 'patch' ? 'patch' : 'object');
}

function validateModification(v: Violations, path: string, mod: z.infer<typeof ModificationSchema>): void {
  const { cluster, listener, networkFilter, httpFilter, virtualHost } = mod;
  if (cluster) validateResourceModification(v, fieldPath(path, 'cluster'), cluster, cluster.match ? 'match' : undefined);
  if (listener) validateResourceModification(v, fieldPath(path, 'listener'), listener, listener.match ? 'match' : undefined);
  if (networkFilter) validateFilterModification(v, fieldPath(path, 'networkFilter'), networkFilter);
  if (httpFilter) validateFilterModification(v, fieldPath(path, 'httpFilter'), httpFilter);
  if (virtualHost) {
    validateResourceModification(v, fieldPath(path, 'virtualHost'), virtualHost, virtualHost.match?.name ? 'match.name' : undefined);
  }
}

export function validateProxyTemplate(spec: ProxyTemplateSpec) {
  const v = new Violations();
  // Selectors may be absent (the template then applies to no proxy), but each needs the service.
  validateSelectors(v, 'selectors', spec.selectors, { requireAtLeastOneTag: true, requireService: true });
  const conf = spec.conf;
  (conf?.imports ?? []).forEach((profile, i) => {
    const path = indexPath('conf.imports', i);
    if (profile === '') v.add(path, 'cannot be empty');
    else if (!PROFILES.includes(profile)) v.add(path, `profile not found. Available profiles: ${PROFILES.join(',')}`);
  });
  (conf?.resources ?? []).forEach((resource, i) => {
    const path = indexPath('conf.resources', i);
    if (!resource.name) v.add(fieldPath(path, 'name'), 'cannot be empty');
    if (!resource.version) v.add(fieldPath(path, 'version'), 'cannot be empty');
    if (!resource.resource) v.add(fieldPath(path, 'resource'), 'cannot be empty');
    else checkEnvoyConfig(v, fieldPath(path, 'resource'), resource.resource, 'resource');
  });
  (conf?.modifications ?? []).forEach((mod, i) => validateModification(v, indexPath('conf.modifications', i), mod));
  return v.list;
}

export const proxyTemplateKind = defineKind({
  name: 'ProxyTemplate',
  cliNames: { singular: 'proxytemplate', plural: 'proxytemplates' },
  path: 'proxytemplates',
  scope: 'mesh',
  displayName: 'Proxy Templates',
  singularDisplayName: 'Proxy Template',
  selection: 'selectors',
  affects: 'selectedProxies',
  schema: ProxyTemplateSpecSchema,
  validate: validateProxyTemplate,
  example: demo.inMesh('web-template', { selectors: demo.FROM_WEB, conf: { imports: ['default-proxy'] } }),
});

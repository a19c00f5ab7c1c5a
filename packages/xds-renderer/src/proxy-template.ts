// ProxyTemplate (docs/policies.md, ProxyTemplate): the proxy's best matching template decides what
// is generated. The profiles it imports (`default-proxy`: the sidecar's generators; a proxy
// without a template gets that profile), then its raw resources as written, and its modifications
// after every targetRef policy.
import { parseEnvoyConfig, type ProxyTemplateSpec } from '@mesh/model';
import type { PolicyOf } from '@mesh/policy-matcher';
import { scalarText, TYPE, type TypedObject } from './envoy.js';
import { applyModifications, type Modification, type Operation, withJsonNames } from './modifications.js';
import { isObject } from './plugins/common.js';
import { ORIGIN, type ResourceSet, type ResourcesOfType } from './resource-set.js';

type Template = PolicyOf<'ProxyTemplate'> | undefined;
type TemplateModification = NonNullable<NonNullable<ProxyTemplateSpec['conf']>['modifications']>[number];

export const DEFAULT_PROXY_PROFILE = 'default-proxy';

/** Whether the sidecar's own generators run: without a template, or when the template imports them. */
export const importsDefaultProfile = (template: Template): boolean =>
  template === undefined || (template.spec.conf?.imports ?? []).includes(DEFAULT_PROXY_PROFILE);

/** The template's raw resources, each under its `name`; one that does not parse, or of a type no proxy takes, is left out. */
export function addRawResources(resources: ResourceSet, template: Template): void {
  const raws = template?.spec.conf?.resources ?? [];
  if (raws.length === 0) return;
  const byType: Readonly<Record<string, ResourcesOfType<TypedObject>>> = {
    [TYPE.listener]: resources.listeners,
    [TYPE.cluster]: resources.clusters,
    [TYPE.clusterLoadAssignment]: resources.endpoints,
    [TYPE.routeConfiguration]: resources.routes,
    [TYPE.secret]: resources.secrets,
  };
  for (const raw of raws) {
    const parsed = parseEnvoyConfig(raw.resource ?? '');
    if ('error' in parsed) continue;
    const resource = withJsonNames(parsed.value);
    if (isObject(resource)) byType[scalarText(resource['@type'])]?.add(ORIGIN.proxyTemplateRaw, raw.name ?? '', resource as TypedObject);
  }
}

const OPERATIONS: Readonly<Record<string, Operation>> = {
  add: 'Add',
  remove: 'Remove',
  patch: 'Patch',
  addFirst: 'AddFirst',
  addLast: 'AddLast',
  addBefore: 'AddBefore',
  addAfter: 'AddAfter',
};

/** A match with its empty fields left out: an empty name, origin or tag map matches anything. */
function matchOf(match: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
  if (match === undefined) return undefined;
  const kept = Object.entries(match).filter(([, value]) => value !== undefined && value !== '' && !(isObject(value) && Object.keys(value).length === 0));
  return Object.fromEntries(kept);
}

/** A template modification in the words of MeshProxyPatch, which has the same operations capitalised. */
function asModification(modification: TemplateModification): Modification | undefined {
  for (const [member, mod] of Object.entries(modification)) {
    if (!isObject(mod)) continue;
    const operation = OPERATIONS[String(mod.operation ?? '')];
    if (operation === undefined) return undefined;
    const match = matchOf(isObject(mod.match) ? mod.match : undefined);
    return { [member]: { operation, value: mod.value, ...(match ? { match } : {}) } };
  }
  return undefined;
}

/** The template's modifications, in order, on everything generated before them. */
export function applyTemplateModifications(resources: ResourceSet, template: Template): void {
  const modifications = (template?.spec.conf?.modifications ?? []).map(asModification).filter((mod): mod is Modification => mod !== undefined);
  applyModifications(resources, modifications, ORIGIN.proxyTemplateModifications);
}

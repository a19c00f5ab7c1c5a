// `/meshes/{mesh}/service-map` (docs/insights.md, Service map): the mesh's services and which may
// call which, as the proxies' configuration has it. A proxy calls the services of its outbounds
// (every service of the mesh, or its `reachableServices`, with transparent proxying; the route
// destinations for a builtin gateway); with mesh mTLS on, a call reaches a service only where an
// inbound of it lets the caller in: by the MeshTrafficPermission rules of the inbound when one
// selects it, else by its TrafficPermission (none lets nobody in). Without mTLS nothing is checked.
import { dataplaneTagSets, resourceNotFound, SERVICE_TAG, type TagMap } from '@mesh/model';
import {
  type AnyPolicy,
  type AnyTargetRefPolicy,
  type DataplaneResource,
  inboundRulesOf,
  type Subset,
  type TargetRefConfOf,
  type TargetRefRule,
  targetRefRulesOf,
} from '@mesh/policy-matcher';
import type { MeshProxies } from '@mesh/proxy-config';
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { ApiContext } from '../context.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import { component } from '../openapi/schemas.js';
import type { RouteDoc } from '../route-doc.js';
import type { Params, RouteTable } from '../route-table.js';

interface PolicyRef {
  readonly kind: 'TrafficPermission' | 'MeshTrafficPermission';
  readonly name: string;
}

export interface ServiceMapEdge {
  readonly from: string;
  readonly to: string;
  /** The permissions that let the caller in, by kind then name; empty when mTLS is off. */
  readonly policies: readonly PolicyRef[];
}

export interface ServiceMap {
  /** Whether the mesh checks permissions (mTLS on). */
  readonly permissionsEnforced: boolean;
  readonly services: readonly { readonly name: string; readonly proxies: number }[];
  readonly edges: readonly ServiceMapEdge[];
}

type MtpRule = TargetRefRule<TargetRefConfOf<'MeshTrafficPermission'>>;

/** Where a service is served: an inbound's permission, or its MeshTrafficPermission rules in its place. */
interface Entrance {
  readonly trafficPermission: AnyPolicy | undefined;
  readonly mtpRules: readonly MtpRule[] | undefined;
}

/** A caller as its certificate names it: every `key=value` of its inbounds' and gateway's tags. */
type Identity = ReadonlySet<string>;

const identityOf = (dataplane: DataplaneResource): Identity => new Set(dataplaneTagSets(dataplane.spec).flatMap((tags) => Object.entries(tags).map(([key, value]) => `${key}=${value}`)));

/** A TrafficPermission source: every tag but `*` ones held by the caller (docs/policies.md). */
const sourceMatches = (match: TagMap, identity: Identity): boolean => Object.entries(match).every(([key, value]) => value === '*' || identity.has(`${key}=${value}`));

/** A MeshTrafficPermission rule's clients: each tag held, each negated one not. */
const subsetMatches = (subset: Subset, identity: Identity): boolean => subset.every((tag) => identity.has(`${tag.key}=${tag.value}`) !== tag.not);

/** The policies that let the caller in at an entrance; undefined when it is kept out. */
function admittedBy(entrance: Entrance, identity: Identity): PolicyRef[] | undefined {
  if (entrance.mtpRules) {
    const allowing = entrance.mtpRules.filter((rule) => rule.conf.action !== undefined && rule.conf.action !== 'Deny' && subsetMatches(rule.subset, identity));
    if (allowing.length === 0) return undefined;
    return allowing.flatMap((rule) => rule.origins.map((origin: AnyTargetRefPolicy) => ({ kind: 'MeshTrafficPermission' as const, name: origin.name })));
  }
  const permission = entrance.trafficPermission;
  if (!permission || !(permission.spec as { sources?: { match?: TagMap }[] }).sources?.some((source) => sourceMatches(source.match ?? {}, identity))) return undefined;
  return [{ kind: 'TrafficPermission', name: permission.name }];
}

const byKindAndName = (a: PolicyRef, b: PolicyRef): number => a.kind.localeCompare(b.kind) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function uniquePolicies(policies: readonly PolicyRef[]): PolicyRef[] {
  const unique = new Map(policies.map((policy) => [`${policy.kind}/${policy.name}`, policy]));
  return [...unique.values()].sort(byKindAndName);
}

/** The service map of a mesh's proxies. */
export function serviceMapOf(mesh: MeshProxies): ServiceMap {
  const permissionsEnforced = mesh.meshContext().mtls !== undefined;
  const proxiesOf = new Map<string, number>();
  const entrancesOf = new Map<string, Entrance[]>();
  const callers: { identity: Identity; services: ReadonlySet<string>; calls: Set<string> | 'all' }[] = [];
  for (const name of mesh.dataplaneNames()) {
    const dataplane = mesh.dataplane(name);
    const match = mesh.match(name);
    if (!dataplane || !match) continue;
    const services = match.kind === 'gateway' ? match.gateway.ownServices : new Set(dataplaneTagSets(dataplane.spec).map((tags) => tags[SERVICE_TAG]).filter((service) => service !== undefined));
    for (const service of services) proxiesOf.set(service, (proxiesOf.get(service) ?? 0) + 1);
    if (match.kind === 'gateway') {
      callers.push({ identity: identityOf(dataplane), services, calls: new Set(match.gateway.reachedServices) });
      continue;
    }
    const targetRef = mesh.targetRefMatch(name);
    const mtp = targetRef && targetRefRulesOf(targetRef, 'MeshTrafficPermission');
    for (const inbound of match.policies.inbounds) {
      if (inbound.service === undefined) continue;
      const selected = mtp?.from.some((entry) => entry.address === inbound.interface.dataplaneIp && entry.port === inbound.interface.dataplanePort);
      const entrance: Entrance = {
        trafficPermission: inbound.trafficPermission,
        mtpRules: selected && mtp ? inboundRulesOf(mtp, inbound.interface.dataplaneIp, inbound.interface.dataplanePort) : undefined,
      };
      const entrances = entrancesOf.get(inbound.service) ?? [];
      // Proxies of one service mostly share their permissions: each pair is checked once.
      if (!entrances.some((known) => known.trafficPermission === entrance.trafficPermission && known.mtpRules === entrance.mtpRules)) entrances.push(entrance);
      entrancesOf.set(inbound.service, entrances);
    }
    const transparent = dataplane.spec.networking?.transparentProxying;
    const reachable = transparent?.reachableServices ?? [];
    const declared = match.policies.outbounds.map((outbound) => outbound.service);
    callers.push({ identity: identityOf(dataplane), services, calls: transparent && reachable.length === 0 ? 'all' : new Set([...declared, ...(transparent ? reachable : [])]) });
  }

  const edges = new Map<string, { from: string; to: string; policies: PolicyRef[] }>();
  const admissions = new Map<string, PolicyRef[] | undefined>();
  for (const caller of callers) {
    const identityKey = [...caller.identity].sort().join('\n');
    for (const to of caller.calls === 'all' ? entrancesOf.keys() : caller.calls) {
      const entrances = entrancesOf.get(to);
      // Services no inbound serves (external ones, gateways, unknown names) are not on the map.
      if (!entrances) continue;
      const admissionKey = `${identityKey}\u0000${to}`;
      if (!admissions.has(admissionKey)) {
        const admitted = entrances.map((entrance) => (permissionsEnforced ? admittedBy(entrance, caller.identity) : []));
        admissions.set(admissionKey, admitted.some((policies) => policies !== undefined) ? uniquePolicies(admitted.flatMap((policies) => policies ?? [])) : undefined);
      }
      const policies = admissions.get(admissionKey);
      if (!policies) continue;
      for (const from of caller.services) {
        if (from === to) continue;
        const key = `${from}\u0000${to}`;
        const edge = edges.get(key);
        if (edge) edge.policies = uniquePolicies([...edge.policies, ...policies]);
        else edges.set(key, { from, to, policies });
      }
    }
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    permissionsEnforced,
    services: [...proxiesOf].sort(([a], [b]) => byName(a, b)).map(([name, proxies]) => ({ name, proxies })),
    edges: [...edges.values()].sort((a, b) => byName(a.from, b.from) || byName(a.to, b.to)),
  };
}

const PolicyRefSchema = z.object({ kind: z.enum(['TrafficPermission', 'MeshTrafficPermission']), name: z.string() });

const ServiceMapSchema = component(
  'ServiceMap',
  z.object({
    permissionsEnforced: z.boolean().meta({ description: 'Whether the mesh checks permissions: true with mTLS on. Without it, every call is let in.' }),
    services: z.array(z.object({ name: z.string(), proxies: z.number().int().meta({ description: 'The proxies known by the service (an inbound or a gateway tagged with it).' }) })),
    edges: z.array(
      z.object({
        from: z.string(),
        to: z.string(),
        policies: z.array(PolicyRefSchema).meta({ description: 'The permissions that let proxies of `from` in at an inbound of `to`; empty when permissions are not enforced.' }),
      }),
    ),
  }),
);

const serviceMapDoc: RouteDoc = {
  summary: "Show a mesh's services and which may call which",
  description:
    'A service may call another when one of its proxies has an outbound to it (with transparent proxying, every service of the mesh or its `reachableServices`; for a builtin gateway, its route destinations) and, with mTLS on, an inbound of the other lets it in: by the MeshTrafficPermission rules of the inbound when one selects it, else by its TrafficPermission. Services that no inbound serves are nodes without incoming edges.',
  tag: 'Inspection',
  responses: { 200: { description: 'The services, by name, and the calls allowed between them.', schema: ServiceMapSchema } },
  errors: [404],
  example: { params: { mesh: 'default' } },
};

async function serviceMap(ctx: ApiContext, res: Response, params: Params): Promise<void> {
  await ctx.proxyConfigs.settled();
  const mesh = ctx.proxyConfigs.mesh(params.mesh!);
  if (!mesh) throw resourceNotFound('Could not build the service map');
  sendJson(res, 200, JSON.stringify(serviceMapOf(mesh)));
}

export function addServiceMapRoutes(table: RouteTable, ctx: ApiContext): void {
  table.add({ method: 'GET', path: '/meshes/{mesh}/service-map', doc: serviceMapDoc, handler: withOperation('get', (_req: Request, res: Response, params: Params) => serviceMap(ctx, res, params)) });
}

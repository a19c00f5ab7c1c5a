// The documentation of the inspection routes (views/inspect.ts): their schemas and examples
// (docs/insights.md, Inspection).
import { type AnyKind } from '@mesh/model';
import { z } from 'zod';
import { exampleOf, exampleParams } from '../openapi/examples.js';
import { component } from '../openapi/schemas.js';
import type { RouteDoc } from '../route-doc.js';

const TAG = 'Inspection';

const resourceKey = z.object({ mesh: z.string(), name: z.string() });
const policyEntity = z.looseObject({ type: z.string(), mesh: z.string(), name: z.string() }).meta({ description: 'The policy as `GET` of it returns it.' });
const policiesByKind = z.record(z.string(), z.array(policyEntity)).meta({ description: 'By policy kind: the matched policies, each as `GET` of it returns it.' });
/** A builtin gateway's route destination (and listener) takes one policy of each kind. */
const policyByKind = z.record(z.string(), policyEntity).meta({ description: 'By policy kind: the one matched policy, as `GET` of it returns it.' });

const SidecarPoliciesSchema = z.object({
  kind: z.literal('SidecarDataplane'),
  total: z.number().int(),
  items: z.array(
    z.object({
      type: z.enum(['dataplane', 'inbound', 'outbound', 'service']),
      name: z.string().optional(),
      service: z.string().optional(),
      matchedPolicies: policiesByKind,
    }),
  ),
});

const GatewayPoliciesSchema = z.object({
  kind: z.literal('MeshGatewayDataplane'),
  gateway: resourceKey.meta({ description: 'The MeshGateway that selects the proxy; empty strings when none does.' }),
  listeners: z.array(
    z.object({
      port: z.number().int(),
      protocol: z.string(),
      hosts: z.array(z.object({ hostName: z.string(), routes: z.array(z.object({ route: z.string(), destinations: z.array(z.object({ tags: z.record(z.string(), z.string()), policies: policyByKind })) })) })),
    }),
  ),
  policies: policyByKind.optional(),
});

const MatchedPoliciesSchema = component(
  'MatchedPolicies',
  z.union([SidecarPoliciesSchema, GatewayPoliciesSchema]).meta({ description: 'A sidecar: policies per inbound, outbound, service and the whole proxy. A builtin gateway: per listener, host and route.' }),
);

const RuleItemSchema = z.object({
  type: z.enum(['clientSubset', 'destinationSubset', 'singleItem']).meta({
    description: 'A rule over the clients of one inbound, over the destination of one outbound cluster, or for the proxy as a whole.',
  }),
  name: z.string().optional().meta({ description: 'The cluster name of the inbound or destination tags: the service, or the service and a hash of every tag.' }),
  addresses: z.array(z.string()).optional().meta({ description: 'The inbound `ip:port`; the DNS names of a virtual IP, then `ip:port`, of every outbound of the cluster.' }),
  service: z.string().optional(),
  tags: z.record(z.string(), z.string()).optional().meta({ description: 'The inbound or destination tags.' }),
  policyType: z.string().meta({ description: 'The targetRef policy kind (`MeshTimeout`).' }),
  subset: z.record(z.string(), z.string()).meta({ description: 'The clients (or destinations) the rule holds for; a negated value is written `!value`; empty for all.' }),
  conf: z.record(z.string(), z.unknown()).meta({ description: "The merged conf of every entry that holds for the subset, in the kind's `default` form." }),
  origins: z.array(resourceKey).meta({ description: 'The policies the conf merges, by name.' }),
});

const RulesSchema = component('DataplaneRules', z.object({ total: z.number().int(), items: z.array(RuleItemSchema) }));

const ConfigDumpSchema = component(
  'ConfigDump',
  z.looseObject({ configs: z.array(z.record(z.string(), z.unknown())).meta({ description: 'Envoy admin config dump sections: bootstrap, listeners, clusters, endpoints.' }) }),
);

const PolicyDataplanesSchema = component(
  'PolicyDataplanes',
  z.object({
    total: z.number().int(),
    items: z.array(
      z.looseObject({ kind: z.enum(['SidecarDataplane', 'MeshGatewayDataplane']), dataplane: resourceKey }).meta({ description: 'A proxy the policy applies to, and where it attaches.' }),
    ),
  }),
);

const GatewayDataplanesSchema = component('GatewayDataplanes', z.object({ total: z.number().int(), items: z.array(z.object({ dataplane: resourceKey })) }));

const exampleFor = (kind: AnyKind) => {
  const example = exampleOf(kind);
  return example ? { example: { params: exampleParams(example) } } : {};
};

export const dataplanePoliciesDoc = (dataplane: AnyKind): RouteDoc => ({
  summary: 'List the policies matched for a proxy',
  description: 'Kept up to date as resources change, never matched per request.',
  tag: TAG,
  responses: { 200: { description: 'The matched policies.', schema: MatchedPoliciesSchema } },
  errors: [404],
  ...exampleFor(dataplane),
});

export const dataplaneRulesDoc = (dataplane: AnyKind): RouteDoc => ({
  summary: 'List the targetRef rules of a proxy',
  description:
    'Per targetRef policy kind selecting the proxy: the merged conf of each subset of clients of each inbound, of the destination of each outbound cluster, or of the proxy as a whole. Sorted by name, then type.',
  tag: TAG,
  responses: { 200: { description: 'The rules.', schema: RulesSchema } },
  errors: [404],
  ...exampleFor(dataplane),
});

export const configDumpDoc = (proxy: AnyKind): RouteDoc => ({
  summary: `Show the Envoy configuration of a ${proxy.singularDisplayName}`,
  description: 'The configuration the control plane renders for it, as an Envoy config dump; private keys redacted. Allowed to the users and groups of `access.static.viewConfigDump` (admins by default).',
  tag: TAG,
  responses: { 200: { description: 'The config dump.', schema: ConfigDumpSchema } },
  errors: [400, 403, 404],
  ...exampleFor(proxy),
});

export const policyDataplanesDoc = (policy: AnyKind): RouteDoc => ({
  summary: `List the proxies a ${policy.singularDisplayName} applies to, and where`,
  tag: TAG,
  responses: { 200: { description: 'The proxies.', schema: PolicyDataplanesSchema } },
  errors: [404],
  ...exampleFor(policy),
});

export const gatewayDataplanesDoc = (kind: AnyKind): RouteDoc => ({
  summary: `List the gateway proxies of a ${kind.singularDisplayName}`,
  tag: TAG,
  responses: { 200: { description: 'The proxies.', schema: GatewayDataplanesSchema } },
  errors: [404],
  ...exampleFor(kind),
});

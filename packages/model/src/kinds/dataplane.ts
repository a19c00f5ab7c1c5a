import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind, KDS_FLAGS } from '../kind.js';
import { isIp, overlapsLoopback, parseRequestUri, validateProxyAddress } from '../validation/address.js';
import { PROTOCOLS, validateDuration, validatePort, validateThreshold } from '../validation/scalars.js';
import { PROTOCOL_TAG, SERVICE_TAG, type TagMap, tagPairs, validateTags } from '../validation/tags.js';
import { fieldPath, indexPath, keyPath, type Violation, Violations } from '../validation/violations.js';
import { bool, duration, enumOf, list, message, str, stringMap, u32, u32Value } from '../wire.js';
import { type MeshConstraints, MetricsBackendSchema, validateMetricsBackend } from './mesh.js';

const InboundSchema = message({
  port: u32(),
  servicePort: u32(),
  serviceAddress: str(),
  address: str(),
  tags: stringMap(),
  health: message({ ready: bool() }).optional(),
  serviceProbe: message({
    interval: duration(),
    timeout: duration(),
    unhealthyThreshold: u32Value(),
    healthyThreshold: u32Value(),
    tcp: message({}).optional(),
  }).optional(),
});
type Inbound = z.infer<typeof InboundSchema>;

const OutboundSchema = message({
  address: str(),
  port: u32(),
  tags: stringMap(),
  // A shorter spelling of `tags: {"mesh.io/service": ...}` that the API also accepts; stored and returned as sent.
  service: str(),
});
export type DataplaneOutbound = z.infer<typeof OutboundSchema>;

const GatewaySchema = message({ tags: stringMap(), type: enumOf(['DELEGATED', 'BUILTIN']) });

const NetworkingSchema = message({
  address: str(),
  advertisedAddress: str(),
  inbound: list(InboundSchema),
  outbound: list(OutboundSchema),
  gateway: GatewaySchema.optional(),
  transparentProxying: message({
    redirectPortInbound: u32(),
    redirectPortOutbound: u32(),
    directAccessServices: list(z.string()),
    redirectPortInboundV6: u32(),
    reachableServices: list(z.string()),
  }).optional(),
  admin: message({ port: u32() }).optional(),
});
type Networking = z.infer<typeof NetworkingSchema>;

const ProbesSchema = message({
  port: u32(),
  endpoints: list(message({ inboundPort: u32(), inboundPath: str(), path: str() })),
});

export const DataplaneSpecSchema = message({
  networking: NetworkingSchema.optional(),
  metrics: MetricsBackendSchema.optional(),
  probes: ProbesSchema.optional(),
});
export type DataplaneSpec = z.infer<typeof DataplaneSpecSchema>;

/** An outbound's tags, with the `service` alias read as the service tag (explicit tags win). */
export function outboundTags(outbound: DataplaneOutbound): TagMap | undefined {
  if (!outbound.service) return outbound.tags;
  return { [SERVICE_TAG]: outbound.service, ...outbound.tags };
}

/** A present protocol tag must name a known protocol, in any case (inbounds, external services). */
export function checkProtocolTag(v: Violations, path: string, tags: TagMap): void {
  const value = tags[PROTOCOL_TAG];
  if (value !== undefined && !(PROTOCOLS as readonly string[]).includes(value.toLowerCase())) {
    v.add(keyPath(path, PROTOCOL_TAG), `tag "${PROTOCOL_TAG}" has an invalid value ${JSON.stringify(value)}. Allowed values: ${PROTOCOLS.join(', ')}`);
  }
}

function gatewayProtocolIsTcp(v: Violations, path: string, tags: TagMap): void {
  const value = tags[PROTOCOL_TAG];
  if (value !== undefined && value !== 'tcp') {
    v.add(keyPath(path, PROTOCOL_TAG), `other values than tcp are not allowed, provided value "${value}"`);
  }
}

/** An inbound listens on this loopback port: its own side or the application's side. */
function inboundUsesLoopbackPort(networking: Networking, port: number): boolean {
  return (networking.inbound ?? []).some((inbound) => {
    const dataplaneIp = inbound.address || networking.address || '';
    const workloadIp = inbound.serviceAddress || dataplaneIp;
    const workloadPort = inbound.servicePort || inbound.port || 0;
    return (port === (inbound.port ?? 0) && overlapsLoopback(dataplaneIp)) || (port === workloadPort && overlapsLoopback(workloadIp));
  });
}

/** Outbounds listen on 127.0.0.1 unless given another address. */
const outboundUsesLoopbackPort = (networking: Networking, port: number): boolean =>
  (networking.outbound ?? []).some((outbound) => port === (outbound.port ?? 0) && overlapsLoopback(outbound.address || '127.0.0.1'));

function validateServiceProbe(v: Violations, path: string, probe: Inbound['serviceProbe']): void {
  if (!probe) return;
  if (probe.interval !== undefined) validateDuration(v, fieldPath(path, 'interval'), probe.interval);
  if (probe.timeout !== undefined) validateDuration(v, fieldPath(path, 'timeout'), probe.timeout);
  if (probe.unhealthyThreshold !== undefined) validateThreshold(v, fieldPath(path, 'unhealthyThreshold'), probe.unhealthyThreshold);
  if (probe.healthyThreshold !== undefined) validateThreshold(v, fieldPath(path, 'healthyThreshold'), probe.healthyThreshold);
}

function validateInbound(v: Violations, path: string, inbound: Inbound, dataplaneAddress: string | undefined): void {
  validatePort(v, fieldPath(path, 'port'), inbound.port);
  if (inbound.servicePort) validatePort(v, fieldPath(path, 'servicePort'), inbound.servicePort);
  const samePort = !inbound.servicePort || inbound.servicePort === inbound.port;
  const serviceAddressPath = fieldPath(path, 'serviceAddress');
  const clashMessage = 'serviceAddress and servicePort has to differ from address and port';
  if (inbound.serviceAddress) {
    if (!isIp(inbound.serviceAddress)) v.add(serviceAddressPath, 'serviceAddress has to be valid IP address');
    if (inbound.serviceAddress === dataplaneAddress && samePort) v.add(serviceAddressPath, clashMessage);
  }
  if (inbound.address) {
    if (!isIp(inbound.address)) v.add(fieldPath(path, 'address'), 'address has to be valid IP address');
    if (inbound.address === inbound.serviceAddress && samePort) v.add(serviceAddressPath, clashMessage);
  }
  validateTags(v, fieldPath(path, 'tags'), inbound.tags, { extraMapChecks: [checkProtocolTag] });
  validateServiceProbe(v, fieldPath(path, 'serviceProbe'), inbound.serviceProbe);
  if (!inbound.tags || !(SERVICE_TAG in inbound.tags)) v.add(keyPath(fieldPath(path, 'tags'), SERVICE_TAG), 'tag has to exist');
}

function validateOutbound(v: Violations, path: string, outbound: DataplaneOutbound): void {
  validatePort(v, fieldPath(path, 'port'), outbound.port);
  if (outbound.address && !isIp(outbound.address)) v.add(fieldPath(path, 'address'), 'address has to be valid IP address');
  const tags = outboundTags(outbound);
  if (!tags) v.add(fieldPath(path, 'tags'), `mandatory tag "${SERVICE_TAG}" is missing`);
  else validateTags(v, fieldPath(path, 'tags'), tags, { requireService: true });
}

function validateNetworking(v: Violations, networking: Networking): void {
  validateProxyAddress(v, 'networking', networking.address);
  (networking.inbound ?? []).forEach((inbound, i) => validateInbound(v, indexPath('networking.inbound', i), inbound, networking.address));
  (networking.outbound ?? []).forEach((outbound, i) => validateOutbound(v, indexPath('networking.outbound', i), outbound));
}

function validateProbes(v: Violations, probes: DataplaneSpec['probes']): void {
  if (!probes) return;
  validatePort(v, 'probes.port', probes.port);
  (probes.endpoints ?? []).forEach((endpoint, i) => {
    const path = indexPath('probes.endpoints', i);
    validatePort(v, fieldPath(path, 'inboundPort'), endpoint.inboundPort);
    if (!parseRequestUri(endpoint.inboundPath ?? '')) v.add(fieldPath(path, 'inboundPath'), 'should be a valid URL Path');
    if (!parseRequestUri(endpoint.path ?? '')) v.add(fieldPath(path, 'path'), 'should be a valid URL Path');
  });
}

const validateGatewayTags = (v: Violations, tags: TagMap | undefined): void =>
  validateTags(v, 'networking.gateway.tags', tags, { requireService: true, extraMapChecks: [gatewayProtocolIsTcp] });

export function validateDataplane(spec: DataplaneSpec) {
  const v = new Violations();
  const networking = spec.networking;
  if (!networking) {
    v.add('networking', 'must be defined');
    return v.list;
  }
  if (networking.admin) {
    const adminPort = networking.admin.port ?? 0;
    if (inboundUsesLoopbackPort(networking, adminPort)) v.add('networking.admin.port', 'must differ from inbound');
    if (outboundUsesLoopbackPort(networking, adminPort)) v.add('networking.admin.port', 'must differ from outbound');
  }
  const hasInbounds = (networking.inbound ?? []).length > 0;
  const gateway = networking.gateway;
  if (gateway?.type === 'BUILTIN') {
    if (hasInbounds) v.add('networking.inbound', 'inbound cannot be defined for builtin gateways');
    if ((networking.outbound ?? []).length > 0) v.add('networking.outbound', 'outbound cannot be defined for builtin gateways');
    if (spec.probes) v.add('networking.probes', 'probes cannot be defined for builtin gateways');
    validateGatewayTags(v, gateway.tags);
    validateNetworking(v, networking);
  } else if (gateway) {
    if (hasInbounds) v.add('networking.inbound', 'inbound cannot be defined for delegated gateways');
    validateGatewayTags(v, gateway.tags);
    validateNetworking(v, networking);
    validateProbes(v, spec.probes);
  } else {
    if (!hasInbounds) v.add('networking', 'has to contain at least one inbound interface or gateway');
    validateNetworking(v, networking);
    validateProbes(v, spec.probes);
    if (spec.metrics) validateMetricsBackend(v, 'metrics', spec.metrics);
  }
  return v.list;
}

/** Constraint tags: `*` requires a non-empty value; anything else must equal the proxy's value. */
function matchesConstraint(required: TagMap | undefined, tags: TagMap): boolean {
  return Object.entries(required ?? {}).every(([key, value]) => {
    const actual = tags[key] ?? '';
    return (value === '*' && actual !== '') || actual === value;
  });
}

const describeTagSet = (tags: TagMap | undefined): string =>
  JSON.stringify(Object.entries(tags ?? {}).map(([key, value]) => `${key}=${value}`).sort().join(' '));

/**
 * The mesh's `constraints.dataplaneProxy` check of a dataplane joining it: every inbound's tags
 * (and the gateway's) must meet one requirement, if any, and no restriction. Reports the first
 * failing tag set only, like the reference.
 */
export function checkDataplaneConstraints(meshName: string, dataplane: DataplaneSpec, constraints: MeshConstraints): Violation[] {
  const proxy = constraints?.dataplaneProxy;
  if (!proxy) return [];
  const requirements = proxy.requirements ?? [];
  const restrictions = proxy.restrictions ?? [];
  const tagSets = dataplaneTagSets(dataplane);
  const refuse = (why: string): Violation[] => [
    { field: 'networking', message: `dataplane cannot be a member of mesh ${JSON.stringify(meshName)} because its tags ${why} defined on the Mesh` },
  ];
  for (const tags of tagSets) {
    if (requirements.length > 0 && !requirements.some((rule) => matchesConstraint(rule.tags, tags))) {
      return refuse(`${describeTagSet(tags)} does not fulfill any requirements`);
    }
    const restriction = restrictions.find((rule) => matchesConstraint(rule.tags, tags));
    if (restriction) return refuse(`${describeTagSet(tags)} matches restricted tags ${describeTagSet(restriction.tags)}`);
  }
  return [];
}

/** The tag sets a dataplane is known by: each inbound's, then the gateway's. */
export function dataplaneTagSets(spec: DataplaneSpec): TagMap[] {
  const networking = spec.networking;
  return [...(networking?.inbound ?? []).map((inbound) => inbound.tags ?? {}), ...(networking?.gateway ? [networking.gateway.tags ?? {}] : [])];
}

/** `builtin` or `delegated` for a gateway proxy (DELEGATED is the proto's zero value). */
export const dataplaneGatewayType = (spec: DataplaneSpec): 'builtin' | 'delegated' | undefined =>
  spec.networking?.gateway ? (spec.networking.gateway.type === 'BUILTIN' ? 'builtin' : 'delegated') : undefined;

/** The most inbounds, and outbounds, one Dataplane may have. */
const MAX_INBOUNDS = 1000;
const MAX_OUTBOUNDS = 1000;

export const dataplaneKind = defineKind({
  name: 'Dataplane',
  cliNames: { singular: 'dataplane', plural: 'dataplanes' },
  path: 'dataplanes',
  scope: 'mesh',
  displayName: 'Dataplanes',
  singularDisplayName: 'Dataplane',
  kdsFlags: KDS_FLAGS.fromZoneToGlobal,
  tagSets: dataplaneTagSets,
  gatewayType: dataplaneGatewayType,
  schema: DataplaneSpecSchema,
  // Far beyond any real proxy; what one costs to match and render grows with its inbounds times
  // its outbounds, and every other request waits meanwhile (docs/api.md, Limits).
  listLimits: [
    { field: 'networking.inbound', max: MAX_INBOUNDS, items: 'inbounds' },
    { field: 'networking.outbound', max: MAX_OUTBOUNDS, items: 'outbounds' },
  ],
  validate: validateDataplane,
  affects: 'proxyAndConsumers',
  example: demo.inMesh('web-1', {
    networking: {
      address: '10.0.0.1',
      inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': demo.EXAMPLE_SERVICE, 'mesh.io/protocol': 'http' } }],
      outbound: [{ port: 10001, service: 'backend' }],
    },
  }),
  cliColumns: [{ header: 'TAGS', value: (spec) => tagPairs(dataplaneTagSets(spec)) }],
});

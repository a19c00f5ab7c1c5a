import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { validateHostname, validatePort } from '../validation/scalars.js';
import { PROTOCOL_TAG, SELECTOR_PROFILES, SERVICE_TAG, sortedKeys, validateSelector, validateSelectors, ZONE_TAG, type TagMap } from '../validation/tags.js';
import { fieldPath, indexPath, keyPath, Violations } from '../validation/violations.js';
import { bool, enumOf, list, message, str, stringMap, u32 } from '../wire.js';
import { DataSourceSchema, selectorList } from './common.js';

const ListenerSchema = message({
  hostname: str(),
  port: u32(),
  protocol: enumOf(['NONE', 'TCP', 'TLS', 'HTTP', 'HTTPS']),
  tls: message({
    mode: enumOf(['NONE', 'TERMINATE', 'PASSTHROUGH']),
    certificates: list(DataSourceSchema),
    options: message({}).optional(),
  }).optional(),
  tags: stringMap(),
  crossMesh: bool(),
  resources: message({ connectionLimit: u32() }).optional(),
});
type Listener = z.infer<typeof ListenerSchema>;

export const MeshGatewaySpecSchema = message({
  selectors: selectorList(),
  tags: stringMap(),
  conf: message({ listeners: list(ListenerSchema) }).optional(),
});
export type MeshGatewaySpec = z.infer<typeof MeshGatewaySpecSchema>;

/** Tags that describe the proxies themselves, so a gateway or listener may not set them. */
const RESERVED_TAGS = new Set(['mesh.io/external-service-name', PROTOCOL_TAG, SERVICE_TAG, ZONE_TAG]);

/** Selector-style tags that may not use the reserved keys. */
function validateGatewayTags(v: Violations, path: string, tags: TagMap | undefined): void {
  for (const key of sortedKeys(tags)) {
    // Reserved keys are valid tag names, so checking key by key puts their violation where the
    // reference does: after the key's name checks, before its value checks.
    if (RESERVED_TAGS.has(key)) v.add(keyPath(path, key), `tag name must not be ${JSON.stringify(key)}`);
    validateSelector(v, path, { [key]: tags?.[key] ?? '' }, {});
  }
}

function validateListener(v: Violations, path: string, listener: Listener): void {
  const { tls, crossMesh } = listener;
  // The hostname is optional: routes may give it instead.
  if (listener.hostname !== undefined) validateHostname(v, fieldPath(path, 'hostname'), listener.hostname);
  validatePort(v, fieldPath(path, 'port'), listener.port);
  if (listener.protocol === undefined) {
    v.add(fieldPath(path, 'protocol'), 'cannot be empty');
  } else if (listener.protocol === 'HTTPS') {
    if (crossMesh) v.add(fieldPath(path, 'protocol'), 'protocol is not supported with crossMesh');
    else if (tls === undefined) v.add(fieldPath(path, 'tls'), 'cannot be empty');
    else if (tls.mode === 'PASSTHROUGH') v.add(fieldPath(path, 'tls.mode'), 'mode is not supported on HTTPS listeners');
  }
  if (tls !== undefined && !crossMesh) {
    const certificates = tls.certificates?.length ?? 0;
    if (tls.mode === undefined) {
      v.add(fieldPath(path, 'tls.mode'), 'cannot be empty');
    } else if (tls.mode === 'TERMINATE') {
      // One RSA and one ECDSA certificate at most.
      if (certificates === 0) v.add(fieldPath(path, 'tls.certificates'), 'cannot be empty in TLS termination mode');
      else if (certificates > 2) v.add(fieldPath(path, 'tls.certificates'), 'cannot have more than 2 certificates');
    }
  }
  // Cross-mesh listeners use the mesh's mTLS; only empty `options` may be given.
  if (tls !== undefined && crossMesh && (tls.mode !== undefined || tls.certificates !== undefined)) {
    v.add(fieldPath(path, 'tls'), 'must be empty with crossMesh');
  }
  validateGatewayTags(v, fieldPath(path, 'tags'), listener.tags);
}

/**
 * Listeners sharing a port are collapsed into one Envoy listener, so they must agree on the
 * protocol and the connection limit, and differ in hostname (none means `*`). The reference
 * reports these in map order; here ports come in order of first use, listeners in index order.
 */
function validateSharedPorts(v: Violations, path: string, listeners: Listener[]): void {
  const byPort = new Map<number, Array<[index: number, listener: Listener]>>();
  listeners.forEach((listener, i) => {
    const port = listener.port ?? 0;
    byPort.set(port, [...(byPort.get(port) ?? []), [i, listener]]);
  });
  const groups = [...byPort.values()];
  const disagree = (group: Array<[number, Listener]>, value: (listener: Listener) => unknown) =>
    new Set(group.map(([, listener]) => value(listener))).size > 1;
  const hostname = (listener: Listener) => listener.hostname ?? '*';

  for (const group of groups) {
    if (!disagree(group, (listener) => listener.protocol ?? 'NONE')) continue;
    for (const [i] of group) v.add(indexPath(path, i), 'protocol conflicts with other listeners on this port');
  }
  for (const group of groups) {
    for (const [i, listener] of group) {
      const sameHostname = group.filter(([, other]) => hostname(other) === hostname(listener));
      if (sameHostname.length > 1) v.add(indexPath(path, i), 'multiple listeners for hostname on this port');
    }
  }
  for (const group of groups) {
    const limited = group.filter(([, listener]) => listener.resources?.connectionLimit !== undefined);
    if (!disagree(limited, (listener) => listener.resources?.connectionLimit)) continue;
    for (const [i] of limited) v.add(fieldPath(indexPath(path, i), 'resources.connectionLimit'), 'conflicting values for this port');
  }
}

export function validateMeshGateway(spec: MeshGatewaySpec) {
  const v = new Violations();
  const listeners = spec.conf?.listeners ?? [];
  // A cross-mesh gateway is reachable from other meshes as one service: one selector at most.
  const crossMesh = listeners.some((listener) => listener.crossMesh);
  validateSelectors(v, 'selectors', spec.selectors, { ...SELECTOR_PROFILES.service, requireAtMostOneSelector: crossMesh });
  validateGatewayTags(v, 'tags', spec.tags);
  if (spec.conf === undefined) {
    v.add('conf', 'cannot be empty');
    return v.list;
  }
  if (listeners.length === 0) v.add('conf.listeners', 'cannot be empty');
  listeners.forEach((listener, i) => validateListener(v, indexPath('conf.listeners', i), listener));
  validateSharedPorts(v, 'conf.listeners', listeners);
  return v.list;
}

export const meshGatewayKind = defineKind({
  name: 'MeshGateway',
  cliNames: { singular: 'meshgateway', plural: 'meshgateways' },
  path: 'meshgateways',
  scope: 'mesh',
  displayName: 'Mesh Gateways',
  singularDisplayName: 'Mesh Gateway',
  selection: 'selectors',
  affects: 'selectedProxies',
  inspectable: false,
  schema: MeshGatewaySpecSchema,
  validate: validateMeshGateway,
  example: demo.inMesh('edge', { selectors: [{ match: { 'mesh.io/service': 'edge' } }], conf: { listeners: [{ port: 8080, protocol: 'HTTP', hostname: 'example.com' }] } }),
});

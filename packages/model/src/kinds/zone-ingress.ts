import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind, KDS_FLAGS } from '../kind.js';
import { overlapsLoopback, validateProxyAddress } from '../validation/address.js';
import { validatePort } from '../validation/scalars.js';
import { validateTags } from '../validation/tags.js';
import { indexPath, Violations } from '../validation/violations.js';
import { bool, list, message, str, stringMap, u32 } from '../wire.js';

export const ZoneIngressSpecSchema = message({
  zone: str(),
  networking: message({
    address: str(),
    advertisedAddress: str(),
    port: u32(),
    advertisedPort: u32(),
    admin: message({ port: u32() }).optional(),
  }).optional(),
  availableServices: list(message({ tags: stringMap(), instances: u32(), mesh: str(), externalService: bool() })),
});
export type ZoneIngressSpec = z.infer<typeof ZoneIngressSpecSchema>;

export function validateZoneIngress(spec: ZoneIngressSpec) {
  const v = new Violations();
  const { address, advertisedAddress, port, advertisedPort, admin } = spec.networking ?? {};
  if (admin) {
    const adminPort = admin.port ?? 0;
    const clashes =
      (adminPort === (port ?? 0) && overlapsLoopback(address ?? '')) ||
      (adminPort === (advertisedPort ?? 0) && overlapsLoopback(advertisedAddress ?? ''));
    if (clashes) v.add('networking.admin.port', 'must differ from port');
  }
  if (!advertisedAddress && advertisedPort) v.add('networking.advertisedAddress', 'has to be defined with advertisedPort');
  if (!advertisedPort && advertisedAddress) v.add('networking.advertisedPort', 'has to be defined with advertisedAddress');
  // The reference reports these at `networking.address.address` and `networking.advertisedAddress.address`.
  if (address) validateProxyAddress(v, 'networking.address', address);
  if (advertisedAddress) validateProxyAddress(v, 'networking.advertisedAddress', advertisedAddress);
  validatePort(v, 'networking.port', port);
  if (advertisedPort) validatePort(v, 'networking.advertisedPort', advertisedPort);
  // Singular `availableService`, as the reference spells the path.
  (spec.availableServices ?? []).forEach((service, i) => {
    validateTags(v, `${indexPath('availableService', i)}.tags`, service.tags, { requireService: true });
  });
  return v.list;
}

export const zoneIngressKind = defineKind({
  name: 'ZoneIngress',
  cliNames: { singular: 'zone-ingress', plural: 'zone-ingresses' },
  path: 'zone-ingresses',
  scope: 'global',
  displayName: 'Zone Ingresses',
  singularDisplayName: 'Zone Ingress',
  // Zones register their ingresses; the global passes each on to the other zones.
  kdsFlags: KDS_FLAGS.fromZoneToGlobal | KDS_FLAGS.fromGlobalToZone,
  schema: ZoneIngressSpecSchema,
  validate: validateZoneIngress,
  affects: 'zoneProxies',
  example: {
    name: 'ingress-1',
    spec: {
      zone: 'zone-1',
      networking: { address: '192.168.0.1', port: 10001, advertisedAddress: '10.0.0.1', advertisedPort: 10000 },
      availableServices: [{ tags: { 'mesh.io/service': 'backend' }, instances: 2, mesh: demo.EXAMPLE_MESH }],
    },
  },
});

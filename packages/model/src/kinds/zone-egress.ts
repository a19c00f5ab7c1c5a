import type { z } from 'zod';
import { defineKind, KDS_FLAGS } from '../kind.js';
import { overlapsLoopback, validateProxyAddress } from '../validation/address.js';
import { validatePort } from '../validation/scalars.js';
import { Violations } from '../validation/violations.js';
import { message, str, u32 } from '../wire.js';

export const ZoneEgressSpecSchema = message({
  zone: str(),
  networking: message({ address: str(), port: u32(), admin: message({ port: u32() }).optional() }).optional(),
});
export type ZoneEgressSpec = z.infer<typeof ZoneEgressSpecSchema>;

export function validateZoneEgress(spec: ZoneEgressSpec) {
  const v = new Violations();
  const { address, port, admin } = spec.networking ?? {};
  if (admin && (admin.port ?? 0) === (port ?? 0) && overlapsLoopback(address ?? '')) {
    v.add('networking.admin.port', 'must differ from port');
  }
  // The reference reports this at `networking.address.address`.
  if (address) validateProxyAddress(v, 'networking.address', address);
  validatePort(v, 'networking.port', port);
  return v.list;
}

export const zoneEgressKind = defineKind({
  name: 'ZoneEgress',
  cliNames: { singular: 'zoneegress', plural: 'zoneegresses' },
  path: 'zoneegresses',
  scope: 'global',
  displayName: 'Zone Egresses',
  singularDisplayName: 'Zone Egress',
  kdsFlags: KDS_FLAGS.fromZoneToGlobal,
  schema: ZoneEgressSpecSchema,
  validate: validateZoneEgress,
  affects: 'zoneProxies',
  example: { name: 'egress-1', spec: { zone: 'zone-1', networking: { address: '192.168.0.2', port: 10002 } } },
});

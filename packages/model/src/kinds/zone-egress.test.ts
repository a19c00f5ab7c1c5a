import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { type ZoneEgressSpec, zoneEgressKind } from './zone-egress.js';

const decode = (body: unknown): ZoneEgressSpec => {
  const decoded = decodeSpec(zoneEgressKind, body);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.spec as ZoneEgressSpec;
};
const validate = (body: unknown) => zoneEgressKind.validate(decode(body));

describe('ZoneEgress', () => {
  it('accepts a zone egress, with or without an address', () => {
    expect(validate({ zone: 'zone-1', networking: { address: '192.168.0.1', port: 10002, admin: { port: 10002 } } })).toEqual([]);
    expect(validate({ networking: { address: 'egress.local', port: 10002 } })).toEqual([]);
    expect(validate({ networking: { port: 10002 } })).toEqual([]);
  });

  it('keeps the admin port off a loopback listener', () => {
    expect(validate({ networking: { address: '127.0.0.1', port: 10002, admin: { port: 10002 } } })).toEqual([
      { field: 'networking.admin.port', message: 'must differ from port' },
    ]);
  });

  it('reports the address at its doubled path and the port', () => {
    expect(validate({ networking: { address: '::' } })).toEqual([
      { field: 'networking.address.address', message: 'must not be 0.0.0.0 or ::' },
      { field: 'networking.port', message: 'port must be in the range [1, 65535]' },
    ]);
    expect(validate({ networking: { address: '..>_<..', port: 70000 } })).toEqual([
      { field: 'networking.address.address', message: 'address has to be valid IP address or domain name' },
      { field: 'networking.port', message: 'port must be in the range [1, 65535]' },
    ]);
  });

  it('normalises the wire form', () => {
    expect(decode({ zone: '', networking: { address: '10.0.0.1', port: 10002, admin: { port: 0 } }, extra: 1 })).toEqual({
      networking: { address: '10.0.0.1', port: 10002, admin: {} },
    });
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(zoneEgressKind, { zone: 1 })).toMatchObject({ ok: false });
    expect(decodeSpec(zoneEgressKind, { networking: { port: 1.5 } })).toMatchObject({ ok: false });
  });
});

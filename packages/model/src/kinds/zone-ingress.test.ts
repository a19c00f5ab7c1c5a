import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { type ZoneIngressSpec, zoneIngressKind } from './zone-ingress.js';

const decode = (body: unknown): ZoneIngressSpec => {
  const decoded = decodeSpec(zoneIngressKind, body);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.spec as ZoneIngressSpec;
};
const validate = (body: unknown) => zoneIngressKind.validate(decode(body));

const availableServices = [
  { tags: { 'mesh.io/service': 'backend', version: '1', region: 'us' }, instances: 2, mesh: 'default' },
  { tags: { 'mesh.io/service': 'httpbin' }, instances: 1, mesh: 'default', externalService: true },
];
const ingress = (networking: Record<string, unknown>) => ({
  zone: 'zone-1',
  networking: { address: '192.168.0.1', advertisedAddress: '10.0.0.1', port: 10001, advertisedPort: 1234, ...networking },
  availableServices,
});

describe('ZoneIngress', () => {
  it('accepts advertised IPv4 or IPv6 addresses, or none yet', () => {
    expect(validate(ingress({}))).toEqual([]);
    expect(validate(ingress({ advertisedAddress: '::ffff:0a00:0001' }))).toEqual([]);
    expect(validate({ networking: { address: '192.168.0.1', port: 10001 }, availableServices: [] })).toEqual([]);
    expect(validate(ingress({ admin: { port: 10001 } }))).toEqual([]);
  });

  it('keeps the admin port off a loopback listener', () => {
    expect(validate(ingress({ admin: { port: 10001 }, address: '127.0.0.1' }))).toEqual([
      { field: 'networking.admin.port', message: 'must differ from port' },
    ]);
    expect(validate(ingress({ admin: { port: 1234 }, advertisedAddress: '0.0.0.0' }))).toEqual([
      { field: 'networking.admin.port', message: 'must differ from port' },
      { field: 'networking.advertisedAddress.address', message: 'must not be 0.0.0.0 or ::' },
    ]);
  });

  it('requires the advertised address and port together', () => {
    expect(validate(ingress({ advertisedAddress: undefined }))).toEqual([
      { field: 'networking.advertisedAddress', message: 'has to be defined with advertisedPort' },
    ]);
    expect(validate(ingress({ advertisedPort: 0 }))).toEqual([
      { field: 'networking.advertisedPort', message: 'has to be defined with advertisedAddress' },
    ]);
  });

  it('reports addresses at their doubled paths, ports and available service tags', () => {
    expect(
      validate({
        networking: { address: '..>_<..', advertisedAddress: '!@#', advertisedPort: 100000 },
        availableServices: [
          ...availableServices,
          { tags: { version: 'v2', region: 'eu' } },
          { tags: { 'mesh.io/service': '' } },
          { tags: { version: '' } },
        ],
      }),
    ).toEqual([
      { field: 'networking.address.address', message: 'address has to be valid IP address or domain name' },
      { field: 'networking.advertisedAddress.address', message: 'address has to be valid IP address or domain name' },
      { field: 'networking.port', message: 'port must be in the range [1, 65535]' },
      { field: 'networking.advertisedPort', message: 'port must be in the range [1, 65535]' },
      { field: 'availableService[2].tags', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'availableService[3].tags["mesh.io/service"]', message: 'tag value must be non-empty' },
      { field: 'availableService[4].tags["version"]', message: 'tag value must be non-empty' },
      { field: 'availableService[4].tags', message: 'mandatory tag "mesh.io/service" is missing' },
    ]);
  });

  it('requires a port even without networking', () => {
    expect(validate({})).toEqual([{ field: 'networking.port', message: 'port must be in the range [1, 65535]' }]);
  });

  it('normalises the wire form', () => {
    expect(
      decode({
        networking: { address: '192.168.0.1', advertised_address: '', port: 10001, advertised_port: 0, admin: {} },
        available_services: [{ tags: { 'mesh.io/service': 'backend' }, instances: 0, mesh: 'default', external_service: false }],
        unknown: true,
      }),
    ).toEqual({
      networking: { address: '192.168.0.1', port: 10001, admin: {} },
      availableServices: [{ tags: { 'mesh.io/service': 'backend' }, mesh: 'default' }],
    });
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(zoneIngressKind, { networking: { port: -1 } })).toMatchObject({ ok: false });
    expect(decodeSpec(zoneIngressKind, { availableServices: { tags: {} } })).toMatchObject({ ok: false });
  });
});

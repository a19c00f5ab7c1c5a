import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { checkDataplaneConstraints, type DataplaneSpec, dataplaneKind } from './dataplane.js';
import type { MeshConstraints } from './mesh.js';

const decode = (body: unknown): DataplaneSpec => {
  const decoded = decodeSpec(dataplaneKind, body);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.spec;
};
const validate = (body: unknown) => dataplaneKind.validate(decode(body));

const backend = { port: 8080, tags: { 'mesh.io/service': 'backend', version: '1' } };
const redis = { port: 3333, tags: { 'mesh.io/service': 'redis' } };
/** A valid sidecar dataplane, with networking fields replaced as given. */
const sidecar = (networking: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) => ({
  networking: { address: '192.168.0.1', inbound: [backend], outbound: [redis], ...networking },
  ...rest,
});

describe('Dataplane', () => {
  it('accepts the shapes of the reference and the shorter ones of the API', () => {
    expect(validate(sidecar())).toEqual([]);
    expect(validate(sidecar({ outbound: [{ port: 10001, service: 'backend' }] }))).toEqual([]);
    expect(
      validate(
        sidecar({
          address: '0:0:0:0:0:FFFF:C0A8:0001',
          inbound: [{ ...backend, servicePort: 7777, address: '::1' }],
          outbound: [{ ...redis, address: '::1' }],
        }),
      ),
    ).toEqual([]);
    expect(validate(sidecar({ address: 'example.com' }))).toEqual([]);
    expect(validate(sidecar({ inbound: [{ port: 10001, serviceAddress: '192.168.0.2', servicePort: 5050, address: '1.1.1.1', tags: backend.tags }] }))).toEqual([]);
    expect(
      validate({
        networking: {
          address: '192.168.0.1',
          gateway: { tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'tcp', 'mesh.io/valid': 'abc.0123-789.under_score:90' } },
          outbound: [redis],
        },
      }),
    ).toEqual([]);
    expect(validate({ networking: { address: '192.168.0.1', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } } })).toEqual([]);
  });

  it('accepts probes, service probes, an admin port on another interface and a metrics backend', () => {
    expect(
      validate(
        sidecar(
          {
            admin: { port: 8080 },
            inbound: [{ ...backend, address: '192.168.0.1', servicePort: 7777, serviceProbe: { interval: '1s', unhealthyThreshold: 5, tcp: {} } }],
            outbound: [{ ...redis, address: '192.168.0.1' }],
          },
          {
            probes: { port: 9000, endpoints: [{ inboundPort: 8088, inboundPath: '/healthz', path: '/8080/healthz' }] },
            metrics: { type: 'prometheus', conf: { aggregate: [{ name: 'app', port: 123, path: '/stats' }] } },
          },
        ),
      ),
    ).toEqual([]);
  });

  it('requires networking, and stops there', () => {
    expect(validate({ probes: { port: 0 } })).toEqual([{ field: 'networking', message: 'must be defined' }]);
  });

  it('requires an address and an inbound or a gateway', () => {
    expect(validate({ networking: {} })).toEqual([
      { field: 'networking', message: 'has to contain at least one inbound interface or gateway' },
      { field: 'networking.address', message: "address can't be empty" },
    ]);
  });

  it('checks the dataplane address', () => {
    expect(validate(sidecar({ address: '0.0.0.0' }))).toEqual([{ field: 'networking.address', message: 'must not be 0.0.0.0 or ::' }]);
    expect(validate(sidecar({ address: '::' }))).toEqual([{ field: 'networking.address', message: 'must not be 0.0.0.0 or ::' }]);
    expect(validate(sidecar({ address: '..>_<..' }))).toEqual([
      { field: 'networking.address', message: 'address has to be valid IP address or domain name' },
    ]);
  });

  it('keeps the admin port off loopback inbounds and outbounds', () => {
    const networking = { inbound: [{ ...backend, servicePort: 7777, address: '127.0.0.1' }], outbound: [{ ...redis, address: '127.0.0.1' }] };
    expect(validate(sidecar({ ...networking, admin: { port: 8080 } }))).toEqual([{ field: 'networking.admin.port', message: 'must differ from inbound' }]);
    expect(validate(sidecar({ ...networking, admin: { port: 7777 } }))).toEqual([{ field: 'networking.admin.port', message: 'must differ from inbound' }]);
    expect(validate(sidecar({ ...networking, admin: { port: 3333 } }))).toEqual([{ field: 'networking.admin.port', message: 'must differ from outbound' }]);
    // Outbounds default to 127.0.0.1, and a wildcard inbound address overlaps loopback.
    expect(validate(sidecar({ inbound: [{ ...backend, address: '0.0.0.0' }], admin: { port: 8080 } }))).toEqual([
      { field: 'networking.admin.port', message: 'must differ from inbound' },
    ]);
    expect(validate(sidecar({ admin: { port: 3333 } }))).toEqual([{ field: 'networking.admin.port', message: 'must differ from outbound' }]);
  });

  it('refuses inbounds, outbounds and probes where gateways forbid them', () => {
    expect(validate(sidecar({ inbound: [{ ...backend, servicePort: 7777 }], gateway: { tags: { 'mesh.io/service': 'kong' } } }))).toEqual([
      { field: 'networking.inbound', message: 'inbound cannot be defined for delegated gateways' },
    ]);
    expect(
      validate({
        networking: { address: '192.168.0.1', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'kong' } }, inbound: [backend], outbound: [redis] },
        probes: { port: 0, endpoints: [{ inboundPort: 8088, inboundPath: '/healthz', path: '/8080/healthz' }] },
      }),
    ).toEqual([
      { field: 'networking.inbound', message: 'inbound cannot be defined for builtin gateways' },
      { field: 'networking.outbound', message: 'outbound cannot be defined for builtin gateways' },
      { field: 'networking.probes', message: 'probes cannot be defined for builtin gateways' },
    ]);
  });

  it('checks gateway tags: service required, protocol only tcp', () => {
    const gateway = (tags: Record<string, string>, type?: string) => ({ networking: { address: '192.168.0.1', gateway: { type, tags } } });
    expect(validate(gateway({ foo: 'bar' }, 'BUILTIN'))).toEqual([
      { field: 'networking.gateway.tags', message: 'mandatory tag "mesh.io/service" is missing' },
    ]);
    expect(validate(gateway({ 'mesh.io/service': 'backend', version: '' }))).toEqual([
      { field: 'networking.gateway.tags["version"]', message: 'tag value must be non-empty' },
    ]);
    expect(validate(gateway({ 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' }))).toEqual([
      { field: 'networking.gateway.tags["mesh.io/protocol"]', message: 'other values than tcp are not allowed, provided value "http"' },
    ]);
  });

  it('checks inbound ports and addresses', () => {
    expect(
      validate(
        sidecar({
          inbound: [
            { tags: { 'mesh.io/service': 'backend' } },
            { port: 65536, servicePort: 65536, address: 'invalid-address', tags: { 'mesh.io/service': 'sub' } },
            { port: 10001, serviceAddress: 'INVALID', tags: { 'mesh.io/service': 'a' } },
            { port: 10001, serviceAddress: '192.168.0.1', tags: { 'mesh.io/service': 'b' } },
            { port: 10001, address: '192.168.0.2', serviceAddress: '192.168.0.2', servicePort: 10001, tags: { 'mesh.io/service': 'c' } },
            { port: 10001, address: '192.168.0.2', serviceAddress: '192.168.0.2', servicePort: 10002, tags: { 'mesh.io/service': 'd' } },
          ],
        }),
      ),
    ).toEqual([
      { field: 'networking.inbound[0].port', message: 'port must be in the range [1, 65535]' },
      { field: 'networking.inbound[1].port', message: 'port must be in the range [1, 65535]' },
      { field: 'networking.inbound[1].servicePort', message: 'port must be in the range [1, 65535]' },
      { field: 'networking.inbound[1].address', message: 'address has to be valid IP address' },
      { field: 'networking.inbound[2].serviceAddress', message: 'serviceAddress has to be valid IP address' },
      { field: 'networking.inbound[3].serviceAddress', message: 'serviceAddress and servicePort has to differ from address and port' },
      { field: 'networking.inbound[4].serviceAddress', message: 'serviceAddress and servicePort has to differ from address and port' },
    ]);
  });

  it('checks inbound tags, protocol first and the service tag last', () => {
    expect(
      validate(
        sidecar({
          inbound: [
            { port: 1234, tags: { version: 'v1' } },
            { port: 1234, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': '', version: '' } },
            { port: 1234, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'not-yet-supported-protocol' } },
            { port: 1234, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'HTTP', 'inv@lidT/gN%me': 'value', invalidTagValue: 'inv@lid+t@g' } },
          ],
        }),
      ),
    ).toEqual([
      { field: 'networking.inbound[0].tags["mesh.io/service"]', message: 'tag has to exist' },
      {
        field: 'networking.inbound[1].tags["mesh.io/protocol"]',
        message: 'tag "mesh.io/protocol" has an invalid value "". Allowed values: grpc, http, http2, kafka, tcp',
      },
      { field: 'networking.inbound[1].tags["mesh.io/protocol"]', message: 'tag value must be non-empty' },
      { field: 'networking.inbound[1].tags["version"]', message: 'tag value must be non-empty' },
      {
        field: 'networking.inbound[2].tags["mesh.io/protocol"]',
        message: 'tag "mesh.io/protocol" has an invalid value "not-yet-supported-protocol". Allowed values: grpc, http, http2, kafka, tcp',
      },
      {
        field: 'networking.inbound[3].tags["inv@lidT/gN%me"]',
        message: 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores',
      },
      {
        field: 'networking.inbound[3].tags["invalidTagValue"]',
        message: 'tag value must consist of alphanumeric characters, dots, dashes and underscores',
      },
    ]);
  });

  it('checks present service probe durations and thresholds', () => {
    expect(
      validate(sidecar({ inbound: [{ ...backend, serviceProbe: { timeout: '1s', interval: '0', healthyThreshold: 5, unhealthyThreshold: 0, tcp: {} } }] })),
    ).toEqual([
      { field: 'networking.inbound[0].serviceProbe.interval', message: 'must have a positive value' },
      { field: 'networking.inbound[0].serviceProbe.unhealthyThreshold', message: 'must have a positive value' },
    ]);
  });

  it('checks outbounds, reading `service` as the service tag', () => {
    expect(
      validate(
        sidecar({
          outbound: [
            { port: 3333 },
            { port: 3333, tags: { version: 'v1' } },
            { tags: { 'mesh.io/service': 'redis' } },
            { port: 65536, address: 'invalid', tags: { 'mesh.io/service': 'elastic' } },
            { port: 3333, service: 'a b' },
            { port: 3333, service: 'redis', tags: { version: 'v1' } },
          ],
        }),
      ),
    ).toEqual([
      { field: 'networking.outbound[0].tags', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'networking.outbound[1].tags', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'networking.outbound[2].port', message: 'port must be in the range [1, 65535]' },
      { field: 'networking.outbound[3].port', message: 'port must be in the range [1, 65535]' },
      { field: 'networking.outbound[3].address', message: 'address has to be valid IP address' },
      {
        field: 'networking.outbound[4].tags["mesh.io/service"]',
        message: 'tag value must consist of alphanumeric characters, dots, dashes and underscores',
      },
    ]);
  });

  it('checks probe ports and paths', () => {
    expect(
      validate(
        sidecar(
          {},
          {
            probes: {
              port: 0,
              endpoints: [
                { inboundPort: 8088, inboundPath: '/healthz', path: '/8080/healthz' },
                { inboundPort: 99999999, inboundPath: 'healthz', path: '8080/healthz' },
                { inboundPort: 1000 },
              ],
            },
          },
        ),
      ),
    ).toEqual([
      { field: 'probes.port', message: 'port must be in the range [1, 65535]' },
      { field: 'probes.endpoints[1].inboundPort', message: 'port must be in the range [1, 65535]' },
      { field: 'probes.endpoints[1].inboundPath', message: 'should be a valid URL Path' },
      { field: 'probes.endpoints[1].path', message: 'should be a valid URL Path' },
      { field: 'probes.endpoints[2].inboundPath', message: 'should be a valid URL Path' },
      { field: 'probes.endpoints[2].path', message: 'should be a valid URL Path' },
    ]);
  });

  it('checks a sidecar metrics backend like a mesh one', () => {
    expect(validate(sidecar({}, { metrics: { type: 'custom-backend' } }))).toEqual([
      { field: 'metrics.type', message: 'unknown backend type. Available backends: "prometheus"' },
    ]);
    expect(
      validate(sidecar({}, { metrics: { type: 'prometheus', conf: { aggregate: [{ name: 'app' }, { name: 'app' }, { name: 'dup' }, { name: 'dup' }] } } })),
    ).toEqual([
      { field: 'metrics.conf.aggregate[1].name', message: 'duplicate entry: app, values have to be unique' },
      { field: 'metrics.conf.aggregate[3].name', message: 'duplicate entry: dup, values have to be unique' },
    ]);
  });

  it('does not validate transparent proxying', () => {
    expect(validate(sidecar({ transparentProxying: { redirectPortInbound: 70000, reachableServices: ['!'] } }))).toEqual([]);
  });

  it('normalises the wire form', () => {
    expect(
      decode({
        networking: {
          address: '192.168.0.1',
          inbound: [
            {
              port: 8080,
              service_port: 0,
              tags: backend.tags,
              health: { ready: false },
              service_probe: { interval: '1m', timeout: '250ms', unhealthy_threshold: 0 },
            },
          ],
          outbound: [{ port: 10001, service: 'backend' }, { port: 10002, tags: {}, service: '' }],
          gateway: { type: 'DELEGATED', tags: { 'mesh.io/service': 'gw' } },
          transparent_proxying: { redirect_port_inbound: 15006, redirect_port_inbound_v6: 0, direct_access_services: ['*'] },
          admin: { port: 9901 },
        },
        probes: { port: 9000, endpoints: [] },
        spec: { ignored: true },
      }),
    ).toEqual({
      networking: {
        address: '192.168.0.1',
        inbound: [{ port: 8080, tags: backend.tags, health: {}, serviceProbe: { interval: '60s', timeout: '0.250s', unhealthyThreshold: 0 } }],
        outbound: [{ port: 10001, service: 'backend' }, { port: 10002 }],
        gateway: { tags: { 'mesh.io/service': 'gw' } },
        transparentProxying: { redirectPortInbound: 15006, directAccessServices: ['*'] },
        admin: { port: 9901 },
      },
      probes: { port: 9000 },
    });
    expect(decode({ networking: { gateway: { type: 'BUILTIN' } } })).toEqual({ networking: { gateway: { type: 'BUILTIN' } } });
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(dataplaneKind, { networking: { inbound: [{ port: 'http' }] } })).toMatchObject({ ok: false });
    expect(decodeSpec(dataplaneKind, { networking: { outbound: [{ port: 1, tags: ['a'] }] } })).toMatchObject({ ok: false });
    expect(decodeSpec(dataplaneKind, { networking: { gateway: { type: 'SIDECAR' } } })).toMatchObject({ ok: false });
    expect(decodeSpec(dataplaneKind, { networking: { inbound: [{ port: 1, serviceProbe: { interval: 'soon' } }] } })).toMatchObject({ ok: false });
  });
});

describe('Dataplane list limits', () => {
  const inbounds = (count: number) => Array.from({ length: count }, (_, i) => ({ port: 10_000 + i, tags: { 'mesh.io/service': `in-${i}` } }));
  const outbounds = (count: number) => Array.from({ length: count }, (_, i) => ({ port: 30_000 + i, tags: { 'mesh.io/service': `out-${i}` } }));
  const overInbounds = { field: 'networking.inbound', message: 'must have at most 1000 inbounds (the limit per Dataplane), not 1001' };
  const overOutbounds = { field: 'networking.outbound', message: 'must have at most 1000 outbounds (the limit per Dataplane), not 5000' };

  it('accepts 1000 inbounds and 1000 outbounds', () => {
    expect(validate(sidecar({ inbound: inbounds(1000), outbound: outbounds(1000) }))).toEqual([]);
  });

  it('refuses one more, naming the field and the limit', () => {
    expect(decodeSpec(dataplaneKind, sidecar({ inbound: inbounds(1001) }))).toEqual({
      ok: false,
      message: 'networking.inbound: must have at most 1000 inbounds (the limit per Dataplane), not 1001',
      violations: [overInbounds],
    });
  });

  it('counts before decoding: items of any shape, both lists at once', () => {
    expect(decodeSpec(dataplaneKind, sidecar({ inbound: Array(1001).fill('no inbound'), outbound: Array(5000).fill(null) }))).toMatchObject({
      ok: false,
      violations: [overInbounds, overOutbounds],
    });
  });
});

describe('checkDataplaneConstraints', () => {
  const inbounds = (...tags: Array<Record<string, string>>): DataplaneSpec => decode({ networking: { inbound: tags.map((t) => ({ port: 1, tags: t })) } });
  const constraints = (dataplaneProxy: unknown): MeshConstraints => ({ dataplaneProxy }) as MeshConstraints;

  it('lets any dataplane in without constraints', () => {
    const dataplane = inbounds({ 'mesh.io/service': 'backend' });
    expect(checkDataplaneConstraints('default', dataplane, undefined)).toEqual([]);
    expect(checkDataplaneConstraints('default', dataplane, {})).toEqual([]);
    expect(checkDataplaneConstraints('default', dataplane, constraints({}))).toEqual([]);
  });

  it('lets in a dataplane whose every inbound meets a requirement and no restriction', () => {
    expect(
      checkDataplaneConstraints(
        'default',
        inbounds(
          { 'mesh.io/service': 'backend', 'mesh.io/zone': 'east', version: 'v1' },
          { 'mesh.io/service': 'backend-api', 'mesh.io/zone': 'east', version: 'v2' },
        ),
        constraints({
          requirements: [{ tags: { 'mesh.io/service': 'backend', version: '*' } }, { tags: { 'mesh.io/service': 'backend-api', version: '*' } }],
          restrictions: [{ tags: { 'mesh.io/service': 'web' } }],
        }),
      ),
    ).toEqual([]);
  });

  it('refuses the first inbound that meets no requirement', () => {
    expect(
      checkDataplaneConstraints(
        'default',
        inbounds({ 'mesh.io/service': 'backend' }, { 'mesh.io/service': 'backend-api', version: 'v1' }, { 'mesh.io/service': 'other' }),
        constraints({ requirements: [{ tags: { 'mesh.io/service': 'backend' } }] }),
      ),
    ).toEqual([
      {
        field: 'networking',
        message: 'dataplane cannot be a member of mesh "default" because its tags "mesh.io/service=backend-api version=v1" does not fulfill any requirements defined on the Mesh',
      },
    ]);
  });

  it('refuses a dataplane matching a restriction', () => {
    expect(
      checkDataplaneConstraints(
        'prod',
        inbounds({ 'mesh.io/service': 'backend', 'mesh.io/zone': 'east' }),
        constraints({
          requirements: [{ tags: { 'mesh.io/service': 'backend' } }],
          restrictions: [{ tags: { 'mesh.io/zone': 'east', 'mesh.io/service': '*' } }],
        }),
      ),
    ).toEqual([
      {
        field: 'networking',
        message:
          'dataplane cannot be a member of mesh "prod" because its tags "mesh.io/service=backend mesh.io/zone=east" matches restricted tags "mesh.io/service=* mesh.io/zone=east" defined on the Mesh',
      },
    ]);
  });

  it('checks gateway tags too, where `*` needs a non-empty value', () => {
    const gateway = decode({ networking: { gateway: { tags: { 'mesh.io/service': 'edge' } } } });
    expect(checkDataplaneConstraints('default', gateway, constraints({ requirements: [{ tags: { team: '*' } }] }))).toEqual([
      {
        field: 'networking',
        message: 'dataplane cannot be a member of mesh "default" because its tags "mesh.io/service=edge" does not fulfill any requirements defined on the Mesh',
      },
    ]);
    expect(checkDataplaneConstraints('default', gateway, constraints({ requirements: [{ tags: { 'mesh.io/service': '*' } }] }))).toEqual([]);
  });
});

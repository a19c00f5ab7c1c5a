import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { violationsOf, wireForm } from '../test-support.js';
import { meshGatewayKind } from './mesh-gateway.js';

const validate = (body: unknown) => violationsOf(meshGatewayKind, body);

const selectors = [{ match: { 'mesh.io/service': 'gateway' } }];
const withListeners = (...listeners: unknown[]) => validate({ selectors, conf: { listeners } });

describe('MeshGateway', () => {
  it('accepts the documented example', () => {
    expect(
      validate({
        selectors: [{ match: { 'mesh.io/service': 'edge-gateway' } }],
        tags: { product: 'edge' },
        conf: {
          listeners: [
            { port: 8080, protocol: 'HTTP', hostname: 'foo.example.com', tags: { port: 'http-8080' } },
            {
              port: 8443,
              protocol: 'HTTPS',
              hostname: '*',
              tls: { mode: 'TERMINATE', certificates: [{ secret: 'edge-cert' }] },
              resources: { connectionLimit: 100 },
            },
          ],
        },
      }),
    ).toEqual([]);
  });

  it('accepts cross-mesh listeners, TLS termination and listeners sharing a port', () => {
    expect(withListeners({ hostname: 'www-1.example.com', port: 443, crossMesh: true, protocol: 'HTTP' })).toEqual([]);
    expect(withListeners({ protocol: 'HTTP', port: 99, crossMesh: true, tls: { options: {} }, tags: { name: 'http' } })).toEqual([]);
    expect(withListeners({ port: 443, protocol: 'TLS', tls: { mode: 'TERMINATE', certificates: [{ secret: 'a' }, { inline: 'YQ==' }] } })).toEqual([]);
    expect(withListeners({ port: 443, protocol: 'TLS', tls: { mode: 'PASSTHROUGH' } })).toEqual([]);
    expect(
      withListeners(
        { protocol: 'HTTP', hostname: 'one.com', port: 99, resources: { connectionLimit: 2 } },
        { protocol: 'HTTP', hostname: 'two.com', port: 99, resources: { connectionLimit: 2 } },
        { protocol: 'HTTP', hostname: '*.three.com', port: 99 },
        { protocol: 'TCP', port: 100 },
      ),
    ).toEqual([]);
  });

  it('requires selectors with the service tag and conf', () => {
    expect(validate({ selectors: [{ match: { product: 'edge' } }] })).toEqual([
      { field: 'selectors[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'conf', message: 'cannot be empty' },
    ]);
    expect(validate({ conf: {} })).toEqual([
      { field: 'selectors', message: 'must have at least one element' },
      { field: 'conf.listeners', message: 'cannot be empty' },
    ]);
  });

  it('allows one selector only when a listener is cross-mesh', () => {
    const twoSelectors = [...selectors, { match: { 'mesh.io/service': 'other-gateway' } }];
    expect(validate({ selectors: twoSelectors, conf: { listeners: [{ port: 443, protocol: 'HTTP' }] } })).toEqual([]);
    expect(validate({ selectors: twoSelectors, conf: { listeners: [{ port: 443, crossMesh: true, protocol: 'HTTP' }] } })).toEqual([
      { field: 'selectors[1]', message: 'there can be at most one selector' },
    ]);
  });

  it('refuses reserved tag names on the gateway and its listeners', () => {
    expect(
      validate({
        selectors,
        tags: { product: 'edge', 'mesh.io/service': 'gateway', 'mesh.io/zone': '', 'bad key': '*' },
        conf: { listeners: [{ port: 80, protocol: 'HTTP', tags: { 'mesh.io/protocol': 'http', 'mesh.io/external-service-name': 'x y' } }] },
      }),
    ).toEqual([
      { field: 'tags["bad key"]', message: 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores' },
      { field: 'tags["mesh.io/service"]', message: 'tag name must not be "mesh.io/service"' },
      { field: 'tags["mesh.io/zone"]', message: 'tag name must not be "mesh.io/zone"' },
      { field: 'tags["mesh.io/zone"]', message: 'tag value must be non-empty' },
      { field: 'conf.listeners[0].tags["mesh.io/external-service-name"]', message: 'tag name must not be "mesh.io/external-service-name"' },
      {
        field: 'conf.listeners[0].tags["mesh.io/external-service-name"]',
        message: 'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
      },
      { field: 'conf.listeners[0].tags["mesh.io/protocol"]', message: 'tag name must not be "mesh.io/protocol"' },
    ]);
  });

  it('checks hostname, port and protocol of each listener', () => {
    expect(
      withListeners(
        { hostname: '*.foo.*.example.com', protocol: 'HTTP', port: 99 },
        { hostname: 'foo.example$.com', protocol: 'HTTP', port: 100 },
        { protocol: 'HTTP' },
        { port: 101, protocol: 'NONE' },
      ),
    ).toEqual([
      { field: 'conf.listeners[0].hostname', message: 'invalid wildcard domain' },
      { field: 'conf.listeners[1].hostname', message: 'invalid hostname' },
      { field: 'conf.listeners[2].port', message: 'port must be in the range [1, 65535]' },
      { field: 'conf.listeners[3].protocol', message: 'cannot be empty' },
    ]);
  });

  it('checks TLS settings', () => {
    const certificate = { secret: 'cert' };
    expect(
      withListeners(
        { hostname: 'a.com', protocol: 'HTTPS', port: 1 },
        { hostname: 'b.com', protocol: 'HTTPS', port: 2, tls: { mode: 'PASSTHROUGH' } },
        { hostname: 'c.com', protocol: 'HTTPS', port: 3, tls: { options: {} } },
        { hostname: 'd.com', protocol: 'HTTPS', port: 4, tls: { mode: 'TERMINATE' } },
        { hostname: 'e.com', protocol: 'TLS', port: 5, tls: { mode: 'TERMINATE', certificates: [certificate, certificate, certificate] } },
      ),
    ).toEqual([
      { field: 'conf.listeners[0].tls', message: 'cannot be empty' },
      { field: 'conf.listeners[1].tls.mode', message: 'mode is not supported on HTTPS listeners' },
      { field: 'conf.listeners[2].tls.mode', message: 'cannot be empty' },
      { field: 'conf.listeners[3].tls.certificates', message: 'cannot be empty in TLS termination mode' },
      { field: 'conf.listeners[4].tls.certificates', message: 'cannot have more than 2 certificates' },
    ]);
  });

  it('checks cross-mesh listeners: no HTTPS, no TLS settings', () => {
    expect(
      withListeners(
        { hostname: 'foo.example.com', protocol: 'HTTPS', port: 99, crossMesh: true },
        { hostname: 'bar.example.com', protocol: 'HTTP', port: 98, crossMesh: true, tls: { mode: 'TERMINATE' } },
        { hostname: 'baz.example.com', protocol: 'HTTP', port: 97, crossMesh: true, tls: { certificates: [{ secret: 'x' }] } },
      ),
    ).toEqual([
      { field: 'conf.listeners[0].protocol', message: 'protocol is not supported with crossMesh' },
      { field: 'conf.listeners[1].tls', message: 'must be empty with crossMesh' },
      { field: 'conf.listeners[2].tls', message: 'must be empty with crossMesh' },
    ]);
  });

  it('reports listeners that cannot share their port, after the per-listener checks', () => {
    expect(
      withListeners(
        { hostname: 'www-1.example.com', port: 443, protocol: 'TCP', resources: { connectionLimit: 2 } },
        { hostname: 'www-1.example.com', port: 443, protocol: 'HTTPS', tls: { mode: 'TERMINATE' }, resources: { connectionLimit: 1 } },
        { port: 80, protocol: 'HTTP' },
        { port: 80, protocol: 'HTTP', hostname: '*' },
        { port: 443, protocol: 'TCP' },
      ),
    ).toEqual([
      { field: 'conf.listeners[1].tls.certificates', message: 'cannot be empty in TLS termination mode' },
      { field: 'conf.listeners[0]', message: 'protocol conflicts with other listeners on this port' },
      { field: 'conf.listeners[1]', message: 'protocol conflicts with other listeners on this port' },
      { field: 'conf.listeners[4]', message: 'protocol conflicts with other listeners on this port' },
      { field: 'conf.listeners[0]', message: 'multiple listeners for hostname on this port' },
      { field: 'conf.listeners[1]', message: 'multiple listeners for hostname on this port' },
      { field: 'conf.listeners[2]', message: 'multiple listeners for hostname on this port' },
      { field: 'conf.listeners[3]', message: 'multiple listeners for hostname on this port' },
      { field: 'conf.listeners[0].resources.connectionLimit', message: 'conflicting values for this port' },
      { field: 'conf.listeners[1].resources.connectionLimit', message: 'conflicting values for this port' },
    ]);
  });

  it('normalises the body: zero values and enum zeros dropped, empty TLS options kept', () => {
    expect(
      wireForm(meshGatewayKind, {
        selectors,
        tags: {},
        conf: {
          listeners: [
            {
              port: 443,
              protocol: 'TLS',
              hostname: '',
              crossMesh: false,
              tls: { mode: 'NONE', certificates: [], options: {} },
              resources: { connection_limit: 0 },
              unknown: 1,
            },
          ],
        },
      }),
    ).toStrictEqual({
      selectors,
      conf: { listeners: [{ port: 443, protocol: 'TLS', tls: { options: {} }, resources: {} }] },
    });
  });

  it('refuses unknown enum names and fields of the wrong JSON type', () => {
    expect(decodeSpec(meshGatewayKind, { conf: { listeners: [{ protocol: 'UDP' }] } })).toMatchObject({ ok: false });
    expect(decodeSpec(meshGatewayKind, { conf: { listeners: [{ port: '80a' }] } })).toMatchObject({ ok: false });
    expect(decodeSpec(meshGatewayKind, { conf: { listeners: [{ crossMesh: 'yes' }] } })).toMatchObject({ ok: false });
  });
});

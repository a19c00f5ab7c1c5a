import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { hostnameMatches, matchGateway, routesInUse } from './gateway.js';
import { describeGateway, gatewayAttachmentsOfPolicy } from './gateway-inspection.js';
import { dataplanesMatchingGateway, dataplanesSelectedBy } from './policy-dataplanes.js';
import { ANY, connection, dataplane, policy, service, snapshotOf, T1 } from './test-fixtures.js';

const gatewayDataplane = (name: string, gatewayService: string) =>
  dataplane(name, { address: '10.0.0.10', gateway: { type: 'BUILTIN', tags: { [SERVICE_TAG]: gatewayService } } });

const exactRule = (path: string, to: string) => ({
  matches: [{ path: { match: 'EXACT', value: path } }],
  backends: [{ destination: { [SERVICE_TAG]: to } }],
});

const httpRoute = (name: string, rules: object[], hostnames: string[] = [], selector = service('elastic')) =>
  policy('MeshGatewayRoute', name, { selectors: [selector], conf: { http: { ...(hostnames.length ? { hostnames } : {}), rules } } });

const meshGateway = (name: string, listeners: object[], selector = service('elastic')) => policy('MeshGateway', name, { selectors: [selector], conf: { listeners } });

describe('matchGateway', () => {
  // The reference's `inspect gateway dataplane` test (pkg/api-server/testdata/inspect_gateway_dataplane.json).
  const referenceSnapshot = snapshotOf({
    MeshGateway: [meshGateway('elastic', [{ protocol: 'HTTP', port: 80 }])],
    MeshGatewayRoute: [httpRoute('route-1', [exactRule('/redis', 'redis'), exactRule('/backend', 'backend')])],
    TrafficLog: [connection('TrafficLog', 'tl-1', ANY, ANY)],
    TrafficPermission: [connection('TrafficPermission', 'tp-1', ANY, ANY)],
    Timeout: [connection('Timeout', 't-1', ANY, service('redis'))],
    HealthCheck: [connection('HealthCheck', 'hc-1', service('elastic'), service('backend'))],
  });

  it('reproduces the reference inspection of a builtin gateway', () => {
    const match = matchGateway(gatewayDataplane('gateway-1', 'elastic'), referenceSnapshot);
    expect(describeGateway(match, (p, kind) => `${kind}/${p.name}`)).toEqual({
      kind: 'MeshGatewayDataplane',
      gateway: { mesh: 'default', name: 'elastic' },
      listeners: [
        {
          port: 80,
          protocol: 'HTTP',
          hosts: [
            {
              hostName: '*',
              routes: [
                {
                  route: 'route-1',
                  destinations: [
                    { tags: { [SERVICE_TAG]: 'backend' }, policies: { HealthCheck: 'HealthCheck/hc-1' } },
                    { tags: { [SERVICE_TAG]: 'redis' }, policies: { Timeout: 'Timeout/t-1' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
      policies: { TrafficLog: 'TrafficLog/tl-1' },
    });
  });

  it('describes a dataplane no gateway selects with empty names and no listeners', () => {
    const match = matchGateway(gatewayDataplane('gateway-2', 'other'), referenceSnapshot);
    expect(describeGateway(match)).toEqual({ kind: 'MeshGatewayDataplane', gateway: { mesh: '', name: '' }, listeners: [], policies: { TrafficLog: referenceSnapshot.policies.TrafficLog?.[0] } });
  });

  it('gives each policy its gateway attachments', () => {
    const match = matchGateway(gatewayDataplane('gateway-1', 'elastic'), referenceSnapshot);
    expect(gatewayAttachmentsOfPolicy(match, 'Timeout', 't-1')).toEqual({
      gateway: { mesh: 'default', name: 'elastic' },
      listeners: [{ port: 80, protocol: 'HTTP', hosts: [{ hostName: '*', routes: [{ route: 'route-1', destinations: [{ [SERVICE_TAG]: 'redis' }] }] }] }],
    });
    expect(gatewayAttachmentsOfPolicy(match, 'TrafficLog', 'tl-1')).toEqual({ gateway: { mesh: 'default', name: 'elastic' } });
    expect(gatewayAttachmentsOfPolicy(match, 'TrafficPermission', 'tp-1')).toBeUndefined();
    const items = dataplanesSelectedBy('HealthCheck', 'hc-1', [gatewayDataplane('gateway-1', 'elastic')], referenceSnapshot);
    expect(items.map((item) => [item.kind, item.dataplane.name])).toEqual([['MeshGatewayDataplane', 'gateway-1']]);
  });

  it('orders hosts exact names first, wildcard domains next and * last, and redistributes wildcard routes', () => {
    const snapshot = snapshotOf({
      MeshGateway: [meshGateway('edge', [{ protocol: 'HTTP', port: 80 }, { protocol: 'HTTP', port: 80, hostname: 'foo.example.com' }])],
      MeshGatewayRoute: [
        httpRoute('r-bar', [exactRule('/bar', 'bar')], ['bar.example.com']),
        httpRoute('r-foo', [exactRule('/foo', 'foo')], ['foo.example.com']),
        httpRoute('r-star-example', [{ matches: [{ path: { match: 'PREFIX', value: '/ex' } }], backends: [{ destination: { [SERVICE_TAG]: 'ex' } }] }], ['*.example.com']),
        httpRoute('r-wild', [exactRule('/wild', 'wild')]),
      ],
    });
    const [listener] = matchGateway(gatewayDataplane('gateway-1', 'elastic'), snapshot).listeners;
    expect(listener?.hosts.map((host) => [host.hostname, host.routes.map((route) => route.name)])).toEqual([
      ['foo.example.com', ['r-foo', 'r-star-example', 'r-wild']],
      // Created from the wildcard host before r-wild was put back on it (the reference's order effect).
      ['bar.example.com', ['r-bar', 'r-star-example']],
      ['*.example.com', ['r-star-example']],
      ['*', ['r-wild']],
    ]);
    const foo = listener?.hosts[0];
    expect(foo?.entries.map((entry) => [entry.route, entry.match.exactPath ?? entry.match.prefixPath])).toEqual([
      ['r-wild', '/wild'],
      ['r-foo', '/foo'],
      ['r-star-example', '/ex'],
      ['r-star-example', '/ex/'],
    ]);
  });

  it('matches hostnames exactly or by a one-label wildcard', () => {
    expect(hostnameMatches('foo.example.com', ['*.example.com'])).toBe(true);
    expect(hostnameMatches('*.example.com', ['foo.example.com'])).toBe(true);
    expect(hostnameMatches('a.foo.example.com', ['*.example.com'])).toBe(false);
    expect(hostnameMatches('foo.example.com', ['bar.example.com', 'foo.example.com'])).toBe(true);
  });

  it('ranks destination policies by the first matching source and the full destination tags', () => {
    const snapshot = snapshotOf({
      MeshGateway: [meshGateway('edge', [{ protocol: 'HTTP', port: 8080, tags: { zone: 'a' } }])],
      MeshGatewayRoute: [
        httpRoute('api', [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: [{ weight: 1, destination: { [SERVICE_TAG]: 'api', version: 'v2' } }] }]),
      ],
      HealthCheck: [
        connection('HealthCheck', 'hc-service', ANY, service('api')),
        connection('HealthCheck', 'hc-v2', ANY, service('api', { version: 'v2' })),
      ],
      Retry: [
        connection('Retry', 'old', service('elastic', { zone: 'a' }), service('api')),
        connection('Retry', 'new', service('elastic', { zone: '*' }), service('api'), T1),
        connection('Retry', 'unrelated', service('elastic', { zone: 'b' }), ANY),
      ],
    });
    const [entry] = matchGateway(gatewayDataplane('gateway-1', 'elastic'), snapshot).listeners[0]?.hosts[0]?.entries ?? [];
    expect(entry?.match.prefixPath).toBe('/');
    expect(entry?.forwards[0]?.policies.HealthCheck?.name).toBe('hc-v2');
    expect(entry?.forwards[0]?.policies.Retry?.name).toBe('old');
  });

  it('collapses listeners by port and gives TCP routes only to TCP listeners', () => {
    const snapshot = snapshotOf({
      MeshGateway: [meshGateway('edge', [{ protocol: 'TCP', port: 9000 }, { protocol: 'HTTP', port: 80 }])],
      MeshGatewayRoute: [
        httpRoute('web', [exactRule('/', 'web')]),
        policy('MeshGatewayRoute', 'db', { selectors: [service('elastic')], conf: { tcp: { rules: [{ backends: [{ destination: { [SERVICE_TAG]: 'db' } }] }] } } }),
      ],
    });
    const match = matchGateway(gatewayDataplane('gateway-1', 'elastic'), snapshot);
    expect(match.listeners.map((l) => [l.port, l.protocol, l.hosts.flatMap((h) => h.entries.map((e) => [e.route, e.forwards[0]?.protocol]))])).toEqual([
      [80, 'HTTP', [['web', 'http']]],
      [9000, 'TCP', [['db', 'tcp']]],
    ]);
    expect([...routesInUse(match)].sort()).toEqual(['db', 'web']);
    expect([...match.reachedServices].sort()).toEqual(['db', 'web']);
  });

  it('keeps the reference listing of a route with several backends: per entry the mirror and last backend', () => {
    const snapshot = snapshotOf({
      MeshGateway: [meshGateway('edge', [{ protocol: 'HTTP', port: 80 }])],
      MeshGatewayRoute: [
        httpRoute('split', [
          {
            matches: [{ path: { match: 'EXACT', value: '/x' } }, { path: { match: 'EXACT', value: '/y' } }],
            filters: [{ mirror: { backend: { destination: { [SERVICE_TAG]: 'shadow' } }, percentage: 10 } }],
            backends: [
              { weight: 50, destination: { [SERVICE_TAG]: 'a' } },
              { weight: 50, destination: { [SERVICE_TAG]: 'b' } },
            ],
          },
        ]),
      ],
    });
    const match = matchGateway(gatewayDataplane('gateway-1', 'elastic'), snapshot);
    const [route] = describeGateway(match).listeners[0]?.hosts[0]?.routes ?? [];
    expect(route?.destinations.map((d) => d.tags[SERVICE_TAG])).toEqual(['b', 'b', 'shadow', 'shadow']);
    expect(match.listeners[0]?.hosts[0]?.entries[0]?.forwards.map((f) => [f.tags[SERVICE_TAG], f.weight])).toEqual([
      ['a', 50],
      ['b', 50],
    ]);
  });

  it('expands prefix matches and their rewrites to whole path segments', () => {
    const snapshot = snapshotOf({
      MeshGateway: [meshGateway('edge', [{ protocol: 'HTTP', port: 80 }])],
      MeshGatewayRoute: [
        httpRoute('api', [
          {
            matches: [{ path: { match: 'PREFIX', value: '/api/' } }],
            filters: [{ rewrite: { replacePrefixMatch: '/v1' } }],
            backends: [{ destination: { [SERVICE_TAG]: 'api' } }],
          },
        ]),
      ],
    });
    const entries = matchGateway(gatewayDataplane('gateway-1', 'elastic'), snapshot).listeners[0]?.hosts[0]?.entries ?? [];
    expect(entries.map((e) => [e.match.exactPath, e.match.prefixPath, e.rewrite])).toEqual([
      ['/api', undefined, { replaceFullPath: '/v1', hostToBackendHostname: false }],
      [undefined, '/api/', { replacePrefixMatch: '/v1/', hostToBackendHostname: false }],
    ]);
  });

  it('lists builtin gateway dataplanes a MeshGateway selects', () => {
    const dataplanes = [gatewayDataplane('gateway-1', 'elastic'), gatewayDataplane('other-1', 'other'), dataplane('sidecar', { address: '10.0.0.1', inbound: [{ port: 1, tags: { [SERVICE_TAG]: 'elastic' } }] })];
    const gateway = meshGateway('edge', [{ protocol: 'HTTP', port: 80 }]);
    expect(dataplanesMatchingGateway(gateway, dataplanes).map((d) => d.name)).toEqual(['gateway-1']);
  });
});

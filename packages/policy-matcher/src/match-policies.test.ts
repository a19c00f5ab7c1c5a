import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { matchPolicies } from './match-policies.js';
import type { PolicyOf } from './snapshot.js';
import { ANY, connection, dataplane, externalService, meshSpecOf, names, outboundsOf, policy, service, snapshotOf, T0, T1, web1 } from './test-fixtures.js';

const timeout = (name: string, source: object, destination: object, time = T0) => connection('Timeout', name, source, destination, time);
const timeoutOf = (timeouts: PolicyOf<'Timeout'>[], proxy = web1()) => matchPolicies(proxy, snapshotOf({ Timeout: timeouts })).outbounds[0]?.timeout?.name;

describe('worked examples (docs/matching.md, Examples)', () => {
  it('1: an exact destination beats a wildcard of the same tag count', () => {
    expect(timeoutOf([timeout('t-any', ANY, ANY), timeout('t-backend', ANY, service('backend'))])).toBe('t-backend');
  });

  it('2: more source tags beat a more exact destination', () => {
    const timeouts = [timeout('t-any', ANY, ANY), timeout('t-backend', ANY, service('backend')), timeout('t-web-v1', service('web', { version: 'v1' }), ANY)];
    expect(timeoutOf(timeouts)).toBe('t-web-v1');
  });

  it('3: the tag count decides before exactness', () => {
    expect(timeoutOf([timeout('a', service('*', { version: '*' }), ANY), timeout('b', service('web'), service('backend'))])).toBe('a');
  });

  it('4: on equal rank the newer policy wins', () => {
    expect(timeoutOf([timeout('a-old', ANY, service('backend'), T0), timeout('z-new', ANY, service('backend'), T1)])).toBe('z-new');
  });

  it('5: on equal rank and time the first name wins', () => {
    expect(timeoutOf([timeout('b', ANY, service('backend')), timeout('a', ANY, service('backend'))])).toBe('a');
  });

  it('6: a destination with more than the service tag never matches an outbound', () => {
    expect(timeoutOf([timeout('v2', ANY, service('backend', { version: 'v2' }))])).toBeUndefined();
  });

  it('7: a source needing a tag no inbound has does not select the proxy', () => {
    expect(timeoutOf([timeout('x', service('web', { env: 'prod' }), ANY)])).toBeUndefined();
  });

  it('8: health checks follow the route to its split service, timeouts stay on the outbound service', () => {
    const proxy = web1([{ port: 10001, tags: { [SERVICE_TAG]: 'legacy' } }]);
    const matched = matchPolicies(
      proxy,
      snapshotOf({
        TrafficRoute: [connection('TrafficRoute', 'legacy-to-modern', ANY, service('legacy'), T0, { split: [{ weight: 1, destination: { [SERVICE_TAG]: 'modern' } }] })],
        HealthCheck: [connection('HealthCheck', 'hc-modern', ANY, service('modern'))],
        Timeout: [timeout('t-modern', ANY, service('modern'))],
      }),
    );
    expect(matched.services.find((s) => s.service === 'modern')?.healthCheck?.name).toBe('hc-modern');
    expect(matched.outbounds[0]?.timeout).toBeUndefined();
    expect(matched.outbounds[0]?.trafficRoute?.name).toBe('legacy-to-modern');
    expect(matched.destinations).toEqual([{ service: 'modern', tagSets: [{ [SERVICE_TAG]: 'modern' }] }]);
  });

  it('9: the most specific destination picks the traffic permission of an inbound', () => {
    const matched = matchPolicies(
      web1(),
      snapshotOf({ TrafficPermission: [connection('TrafficPermission', 'tp-all', ANY, ANY), connection('TrafficPermission', 'tp-1', ANY, service('web', { version: 'v1' }))] }),
    );
    expect(matched.inbounds[0]?.trafficPermission?.name).toBe('tp-1');
  });

  it('10: fault injections all apply, the most specific first source first', () => {
    const matched = matchPolicies(
      web1(),
      snapshotOf({ FaultInjection: [connection('FaultInjection', 'fi-b', ANY, service('web')), connection('FaultInjection', 'fi-a', service('frontend'), service('web'))] }),
    );
    expect(names(matched.inbounds[0]?.faultInjections ?? [])).toEqual(['fi-a', 'fi-b']);
  });

  it('11: the best selector of a policy over all inbounds wins', () => {
    const proxy = dataplane('ex-1', {
      address: '10.0.0.2',
      inbound: [
        { port: 8080, tags: { [SERVICE_TAG]: 'ex', app: 'ex' } },
        { port: 8081, tags: { [SERVICE_TAG]: 'ex-admin', app: 'ex', version: '1.0', env: 'prod' } },
      ],
    });
    const templates = [
      policy('ProxyTemplate', 'last', { selectors: [{ match: { app: 'ex', version: '1.0' } }] }),
      policy('ProxyTemplate', 'first', { selectors: [{ match: { app: 'ex' } }, { match: { app: 'ex', version: '1.0', env: 'prod' } }] }),
    ];
    expect(matchPolicies(proxy, snapshotOf({ ProxyTemplate: templates })).proxyTemplate?.name).toBe('first');
  });

  it('12: without selectors the newer template wins', () => {
    const templates = [policy('ProxyTemplate', 'b', {}, T1), policy('ProxyTemplate', 'a', {}, T0)];
    expect(matchPolicies(web1(), snapshotOf({ ProxyTemplate: templates })).proxyTemplate?.name).toBe('b');
  });

  it('13: traffic logs attach to every outbound service and pass_through', () => {
    const proxy = web1([
      { port: 10001, tags: { [SERVICE_TAG]: 'redis' } },
      { port: 10002, tags: { [SERVICE_TAG]: 'web' } },
    ]);
    const matched = matchPolicies(proxy, snapshotOf({ TrafficLog: [connection('TrafficLog', 'all', ANY, ANY)] }));
    expect(matched.services.map((s) => [s.service, s.trafficLog?.name])).toEqual([
      ['pass_through', 'all'],
      ['redis', 'all'],
      ['web', 'all'],
    ]);
  });
});

describe('edge cases', () => {
  it('ranks a wildcard-valued tag above an empty selector and below an exact one', () => {
    const templates = [
      policy('ProxyTemplate', 'empty', { selectors: [{ match: {} }] }),
      policy('ProxyTemplate', 'any-web', { selectors: [{ match: { [SERVICE_TAG]: '*' } }] }),
    ];
    expect(matchPolicies(web1(), snapshotOf({ ProxyTemplate: templates })).proxyTemplate?.name).toBe('any-web');
    templates.push(policy('ProxyTemplate', 'aaa-web', { selectors: [{ match: { [SERVICE_TAG]: 'web' } }] }, T0));
    expect(matchPolicies(web1(), snapshotOf({ ProxyTemplate: templates })).proxyTemplate?.name).toBe('aaa-web');
  });

  it('breaks equal rank by creation time to the nanosecond, then by name', () => {
    const traces = [
      policy('TrafficTrace', 'b', { selectors: [service('web')] }, '2023-11-20T10:00:00.000000002Z'),
      policy('TrafficTrace', 'a', { selectors: [service('web')] }, '2023-11-20T10:00:00.000000001Z'),
    ];
    expect(matchPolicies(web1(), snapshotOf({ TrafficTrace: traces })).trafficTrace?.name).toBe('b');
    const sameTime = [policy('TrafficTrace', 'b', { selectors: [service('web')] }), policy('TrafficTrace', 'a', { selectors: [service('web')] })];
    expect(matchPolicies(web1(), snapshotOf({ TrafficTrace: sameTime })).trafficTrace?.name).toBe('a');
  });

  it('gives the same winners whatever the order policies are listed in', () => {
    const timeouts = [timeout('c', ANY, service('backend')), timeout('a', ANY, service('backend')), timeout('b', ANY, ANY)];
    const winners = [timeouts, [...timeouts].reverse()].map((list) => timeoutOf(list));
    expect(winners).toEqual(['a', 'a']);
  });

  it('matches each inbound on its own tags, never merged', () => {
    const proxy = dataplane('multi-1', {
      address: '10.0.0.3',
      inbound: [
        { port: 8080, servicePort: 18080, tags: { [SERVICE_TAG]: 'api', version: 'v1' } },
        { port: 9090, tags: { [SERVICE_TAG]: 'admin' } },
      ],
    });
    const snapshot = snapshotOf({
      TrafficPermission: [connection('TrafficPermission', 'tp-all', ANY, ANY), connection('TrafficPermission', 'tp-api', ANY, service('api'))],
      FaultInjection: [connection('FaultInjection', 'fi-admin', ANY, service('admin'))],
      // Tags of two inbounds together: no inbound has both.
      TrafficTrace: [policy('TrafficTrace', 'merged', { selectors: [service('admin', { version: 'v1' })] })],
    });
    const matched = matchPolicies(proxy, snapshot);
    expect(matched.inbounds.map((i) => [i.name, i.service, i.trafficPermission?.name, names(i.faultInjections)])).toEqual([
      ['10.0.0.3:8080:18080', 'api', 'tp-api', []],
      ['10.0.0.3:9090:9090', 'admin', 'tp-all', ['fi-admin']],
    ]);
    expect(matched.trafficTrace).toBeUndefined();
  });

  it('lists a fault injection once per matching destination', () => {
    const fi = policy('FaultInjection', 'twice', { sources: [ANY], destinations: [service('web'), service('*', { version: 'v1' })] });
    expect(names(matchPolicies(web1(), snapshotOf({ FaultInjection: [fi] })).inbounds[0]?.faultInjections ?? [])).toEqual(['twice', 'twice']);
  });

  it('matches outbounds written with `service` as the service tag', () => {
    const proxy = web1([{ port: 10001, service: 'backend' }]);
    const matched = matchPolicies(proxy, snapshotOf({ Timeout: [timeout('t-backend', ANY, service('backend'))] }));
    expect(matched.outbounds.map((o) => [o.name, o.service, o.timeout?.name])).toEqual([['127.0.0.1:10001', 'backend', 't-backend']]);
  });

  it('treats external services as ordinary destination services and opens them by permission', () => {
    const proxy = web1([{ port: 10001, tags: { [SERVICE_TAG]: 'httpbin' } }]);
    const httpbin = externalService('httpbin', { [SERVICE_TAG]: 'httpbin', 'mesh.io/protocol': 'http' });
    const other = externalService('other', { [SERVICE_TAG]: 'other' });
    const snapshot = snapshotOf(
      {
        Timeout: [timeout('t-httpbin', ANY, service('httpbin'))],
        CircuitBreaker: [connection('CircuitBreaker', 'cb-httpbin', service('web'), service('httpbin'))],
        TrafficPermission: [connection('TrafficPermission', 'web-to-httpbin', service('web'), service('httpbin')), connection('TrafficPermission', 'only-admin', service('admin'), service('other'))],
      },
      { externalServices: [httpbin, other] },
    );
    const matched = matchPolicies(proxy, snapshot);
    expect(matched.outbounds[0]?.timeout?.name).toBe('t-httpbin');
    expect(matched.services.find((s) => s.service === 'httpbin')?.circuitBreaker?.name).toBe('cb-httpbin');
    expect(matched.externalServices.map((e) => [e.externalService.name, e.trafficPermission.name])).toEqual([['httpbin', 'web-to-httpbin']]);
  });

  it('counts zone tags like any other tag, and never matches them on an outbound', () => {
    const proxy = dataplane('web-east', {
      address: '10.0.0.4',
      inbound: [{ port: 8080, tags: { [SERVICE_TAG]: 'web', 'mesh.io/zone': 'east' } }],
      outbound: [{ port: 10001, tags: { [SERVICE_TAG]: 'backend' } }],
    });
    const snapshot = snapshotOf({
      Timeout: [
        timeout('from-web', service('web'), ANY),
        timeout('from-web-east', service('web', { 'mesh.io/zone': 'east' }), ANY),
        timeout('to-backend-east', service('*', { 'mesh.io/zone': '*', version: '*' }), service('backend', { 'mesh.io/zone': 'east' })),
      ],
      TrafficPermission: [connection('TrafficPermission', 'east', ANY, service('web', { 'mesh.io/zone': 'east' })), connection('TrafficPermission', 'any', ANY, ANY)],
    });
    const matched = matchPolicies(proxy, snapshot);
    expect(matched.outbounds[0]?.timeout?.name).toBe('from-web-east');
    expect(matched.inbounds[0]?.trafficPermission?.name).toBe('east');
  });

  it('resolves route wildcards per outbound and maps the destinations', () => {
    const proxy = web1([
      { port: 10001, tags: { [SERVICE_TAG]: 'backend' } },
      { port: 10002, tags: { [SERVICE_TAG]: 'redis' } },
    ]);
    const routes = [
      connection('TrafficRoute', 'route-all', ANY, ANY, T0, { destination: { [SERVICE_TAG]: '*' } }),
      connection('TrafficRoute', 'backend-split', service('web'), service('backend'), T0, {
        split: [
          { weight: 90, destination: { [SERVICE_TAG]: 'backend', version: 'v1' } },
          { weight: 10, destination: { [SERVICE_TAG]: '*', version: 'v2' } },
        ],
      }),
    ];
    const matched = matchPolicies(proxy, snapshotOf({ TrafficRoute: routes }));
    expect(matched.outbounds.map((o) => [o.service, o.trafficRoute?.name])).toEqual([
      ['backend', 'backend-split'],
      ['redis', 'route-all'],
    ]);
    expect(matched.outbounds[1]?.routeConf?.destination).toEqual({ [SERVICE_TAG]: 'redis' });
    expect(matched.outbounds[0]?.routeConf?.split?.[1]?.destination).toEqual({ version: 'v2', [SERVICE_TAG]: 'backend' });
    expect(matched.destinations).toEqual([
      { service: 'backend', tagSets: [{ [SERVICE_TAG]: 'backend', version: 'v1' }, { version: 'v2', [SERVICE_TAG]: 'backend' }] },
      { service: 'redis', tagSets: [{ [SERVICE_TAG]: 'redis' }] },
    ]);
    // The stored policy is untouched.
    expect(routes[0]?.spec.conf?.destination).toEqual({ [SERVICE_TAG]: '*' });
  });

  it('applies a rate limit on both sides', () => {
    const proxy = web1();
    const limits = [connection('RateLimit', 'to-web', ANY, service('web')), connection('RateLimit', 'to-backend', service('web'), service('backend'))];
    const matched = matchPolicies(proxy, snapshotOf({ RateLimit: limits }));
    expect(names(matched.inbounds[0]?.rateLimits ?? [])).toEqual(['to-web']);
    expect(matched.outbounds[0]?.rateLimit?.name).toBe('to-backend');
  });

  it('adds the metrics inbound when the mesh enables prometheus', () => {
    const meshSpec = meshSpecOf({ metrics: { enabledBackend: 'prom', backends: [{ name: 'prom', type: 'prometheus', conf: { port: 5670, tags: { [SERVICE_TAG]: 'dataplane-metrics' } } }] } });
    const snapshot = snapshotOf({ TrafficPermission: [connection('TrafficPermission', 'allow-all', ANY, ANY)] }, { meshSpec });
    const matched = matchPolicies(web1(), snapshot);
    expect(matched.inbounds.map((i) => [i.name, i.service, i.trafficPermission?.name])).toEqual([
      ['10.0.0.1:8080:8081', 'web', 'allow-all'],
      ['10.0.0.1:5670:5670', undefined, 'allow-all'],
    ]);
    const own = dataplane('own-port', { address: '10.0.0.9', inbound: [{ port: 80, tags: { [SERVICE_TAG]: 'a' } }] }, { metrics: { type: 'prometheus', conf: { port: 1234 } } });
    expect(matchPolicies(own, snapshot).inbounds[1]?.name).toBe('10.0.0.9:1234:1234');
  });

  it('gives transparent proxies the reachable VIP outbounds', () => {
    const proxy = dataplane('tp-1', {
      address: '10.0.0.5',
      inbound: [{ port: 8080, tags: { [SERVICE_TAG]: 'web' } }],
      outbound: [{ address: '240.0.0.1', port: 80, tags: { [SERVICE_TAG]: 'stale' } }, { port: 10001, tags: { [SERVICE_TAG]: 'static' } }],
      transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001, reachableServices: ['backend', 'static'] },
    });
    const vipOutbounds = outboundsOf([
      { address: '240.0.0.1', port: 80, tags: { [SERVICE_TAG]: 'backend' } },
      { address: '240.0.0.2', port: 80, tags: { [SERVICE_TAG]: 'redis' } },
    ]);
    const matched = matchPolicies(proxy, snapshotOf({}, { vipOutbounds }));
    expect(matched.outbounds.map((o) => [o.name, o.service])).toEqual([
      ['240.0.0.1:80', 'backend'],
      ['127.0.0.1:10001', 'static'],
    ]);
  });

  it('brackets IPv6 outbound addresses', () => {
    const matched = matchPolicies(web1([{ address: '::1', port: 10001, tags: { [SERVICE_TAG]: 'backend' } }]), snapshotOf({}));
    expect(matched.outbounds[0]?.name).toBe('[::1]:10001');
  });

  it('matches a delegated gateway by its gateway tags', () => {
    const gateway = dataplane('edge-1', {
      address: '10.0.0.6',
      gateway: { tags: { [SERVICE_TAG]: 'edge' } },
      outbound: [{ port: 10001, tags: { [SERVICE_TAG]: 'backend' } }],
    });
    const matched = matchPolicies(gateway, snapshotOf({ Timeout: [timeout('from-edge', service('edge'), service('backend'))] }));
    expect(matched.outbounds[0]?.timeout?.name).toBe('from-edge');
    expect([...matched.ownServices]).toEqual(['edge']);
  });
});

describe('instances of a service matched under one index', () => {
  const instance = (name: string, address: string, version: string) =>
    dataplane(name, {
      address,
      inbound: [{ port: 8080, tags: { [SERVICE_TAG]: 'web', version } }],
      outbound: [{ port: name === 'web-2' ? 20001 : 10001, tags: { [SERVICE_TAG]: 'backend' } }],
    });
  const snapshot = snapshotOf({
    Timeout: [timeout('t-all', ANY, ANY), timeout('t-v2', service('web', { version: 'v2' }), ANY)],
    TrafficPermission: [connection('TrafficPermission', 'tp-v2', ANY, service('web', { version: 'v2' }))],
  });

  it('share the policies of equal tags and keep their own interfaces; other tags match apart', () => {
    const [one, two, three] = [instance('web-1', '10.0.0.1', 'v1'), instance('web-2', '10.0.0.2', 'v1'), instance('web-3', '10.0.0.3', 'v2')].map((proxy) =>
      matchPolicies(proxy, snapshot),
    );
    expect([one, two, three].map((matched) => matched?.dataplane.name)).toEqual(['web-1', 'web-2', 'web-3']);
    expect([one, two, three].map((matched) => matched?.inbounds[0]?.name)).toEqual(['10.0.0.1:8080:8080', '10.0.0.2:8080:8080', '10.0.0.3:8080:8080']);
    expect([one, two, three].map((matched) => matched?.outbounds[0]?.name)).toEqual(['127.0.0.1:10001', '127.0.0.1:20001', '127.0.0.1:10001']);
    expect([one, two, three].map((matched) => matched?.outbounds[0]?.timeout?.name)).toEqual(['t-all', 't-all', 't-v2']);
    expect([one, two, three].map((matched) => matched?.inbounds[0]?.trafficPermission?.name)).toEqual([undefined, undefined, 'tp-v2']);
  });
});

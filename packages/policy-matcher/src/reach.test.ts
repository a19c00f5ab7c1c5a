import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { matchPolicies } from './match-policies.js';
import { mayAffect, maySelect, policyReach, proxyServicesOf } from './reach.js';
import { ANY, connection, dataplane, externalService, policy, service, snapshotOf, web1 } from './test-fixtures.js';

describe('policyReach', () => {
  it('pins outbound-side policies to source and destination services', () => {
    expect(policyReach('Timeout', connection('Timeout', 't', service('web'), service('backend')).spec)).toEqual({
      conditions: [{ proxies: { any: false, services: ['web'] }, destinations: { any: false, services: ['backend'] } }],
    });
    expect(policyReach('TrafficLog', connection('TrafficLog', 'l', ANY, ANY).spec).conditions[0]?.proxies.any).toBe(true);
  });

  it('lets inbound-side policies reach proxies by their destinations', () => {
    const reach = policyReach('TrafficPermission', connection('TrafficPermission', 'tp', ANY, service('web', { version: 'v1' })).spec);
    expect(reach.conditions[0]).toEqual({ proxies: { any: false, services: ['web'] } });
  });

  it('treats selector policies without selectors as reaching everyone', () => {
    expect(policyReach('ProxyTemplate', policy('ProxyTemplate', 'pt', {}).spec).conditions).toEqual([{ proxies: { any: true, services: [] } }]);
    expect(policyReach('TrafficTrace', policy('TrafficTrace', 'tt', { selectors: [service('web'), { match: { app: 'x' } }] }).spec).conditions[0]?.proxies).toEqual({
      any: true,
      services: ['web'],
    });
  });
});

describe('mayAffect', () => {
  const snapshot = snapshotOf(
    { TrafficRoute: [connection('TrafficRoute', 'to-modern', ANY, service('backend'), undefined, { destination: { [SERVICE_TAG]: 'modern' } })] },
    { externalServices: [externalService('httpbin', { [SERVICE_TAG]: 'httpbin' })] },
  );
  const services = proxyServicesOf(matchPolicies(web1(), snapshot), snapshot);

  it('knows what a proxy is and reaches, routes and external services included', () => {
    expect([...services.own]).toEqual(['web']);
    expect([...services.reached].sort()).toEqual(['backend', 'httpbin', 'modern', 'pass_through']);
  });

  it('tells affected proxies from unaffected ones', () => {
    const affects = (kind: 'Timeout' | 'HealthCheck', source: object, destination: object) => mayAffect(policyReach(kind, connection(kind, 'p', source, destination).spec), services);
    expect(affects('HealthCheck', ANY, service('modern'))).toBe(true);
    expect(affects('Timeout', service('web'), service('redis'))).toBe(false);
    expect(affects('Timeout', service('admin'), service('backend'))).toBe(false);
    expect(maySelect(policyReach('FaultInjection', connection('FaultInjection', 'f', ANY, service('web')).spec), services.own)).toBe(true);
  });

  it('covers exactly the proxies whose match a policy changes here', () => {
    const other = dataplane('other', { address: '10.0.0.7', inbound: [{ port: 80, tags: { [SERVICE_TAG]: 'other' } }] });
    const timeout = connection('Timeout', 'web-only', service('web'), ANY);
    const before = snapshotOf({});
    const after = snapshotOf({ Timeout: [timeout] });
    const outcome = [web1(), other].map((proxy) => ({
      changed: JSON.stringify(matchPolicies(proxy, before)) !== JSON.stringify(matchPolicies(proxy, after)),
      affected: mayAffect(policyReach('Timeout', timeout.spec), proxyServicesOf(matchPolicies(proxy, before), before)),
    }));
    expect(outcome).toEqual([
      { changed: true, affected: true },
      { changed: false, affected: false },
    ]);
  });
});

import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { snapshotOf, policy, T1 } from './test-fixtures.js';
import { matchVirtualOutbounds, virtualOutboundEntries } from './virtual-outbound.js';

const virtualOutbound = (name: string, selector: object, host: string, port: string, parameters: object[], time?: string) =>
  policy('VirtualOutbound', name, { selectors: [{ match: selector }], conf: { host, port, parameters } }, time);

describe('virtual outbounds', () => {
  const perInstance = virtualOutbound('per-instance', { [SERVICE_TAG]: '*', instance: '*' }, '{{.svc}}.{{.inst}}.mesh', '8080', [
    { name: 'svc', tagKey: SERVICE_TAG },
    { name: 'inst', tagKey: 'instance' },
  ]);
  const perService = virtualOutbound('per-service', { [SERVICE_TAG]: '*' }, '{{.svc}}.svc', '{{.port}}', [{ name: 'svc', tagKey: SERVICE_TAG }, { name: 'port' }], T1);
  const snapshot = snapshotOf({ VirtualOutbound: [perService, perInstance] });

  it('orders matches by selector rank, then newest', () => {
    const tags = { [SERVICE_TAG]: 'backend', instance: 'b-1', port: '9090' };
    expect(matchVirtualOutbounds(snapshot, tags).map((vo) => vo.name)).toEqual(['per-instance', 'per-service']);
  });

  it('renders host and port, keeps the parameter tags and skips invalid results', () => {
    expect(virtualOutboundEntries(snapshot, { [SERVICE_TAG]: 'backend', instance: 'b-1', port: '9090', version: 'v1' })).toEqual([
      { virtualOutbound: perInstance, host: 'backend.b-1.mesh', port: 8080, tags: { [SERVICE_TAG]: 'backend', instance: 'b-1' } },
      { virtualOutbound: perService, host: 'backend.svc', port: 9090, tags: { [SERVICE_TAG]: 'backend', port: '9090' } },
    ]);
    // No `port` tag: the port template renders "<no value>", which is no number.
    expect(virtualOutboundEntries(snapshot, { [SERVICE_TAG]: 'backend' })).toEqual([]);
  });
});

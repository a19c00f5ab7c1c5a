import { describe, expect, it } from 'vitest';
import { currentSubscription, proxyServices, proxyStatus, proxyType, type DataplaneOverview } from './status.js';

type Overview = Pick<DataplaneOverview, 'dataplane' | 'dataplaneInsight'>;

const connected = { subscriptions: [{ id: 'a', controlPlaneInstanceId: 'cp-1', connectTime: '2024-05-06T07:08:09Z', disconnectTime: '2024-05-06T07:09:00Z' }, { id: 'b', controlPlaneInstanceId: 'cp-2', connectTime: '2024-05-06T07:10:00Z' }] };
const disconnected = { subscriptions: [{ id: 'a', controlPlaneInstanceId: 'cp-1', connectTime: '2024-05-06T07:08:09Z', disconnectTime: '2024-05-06T07:09:00Z' }] };

const sidecar = (...ready: Array<boolean | undefined>): Overview['dataplane'] => ({
  networking: {
    address: '10.0.0.1',
    inbound: ready.map((isReady, i) => ({ port: 8080 + i, tags: { 'mesh.io/service': i === 0 ? 'web' : 'admin' }, ...(isReady === undefined ? {} : { health: { ready: isReady } }) })),
  },
});

describe('a proxy status', () => {
  it('is offline without a connected subscription, whatever its inbounds say', () => {
    expect(proxyStatus({ dataplane: sidecar(true) })).toBe('offline');
    expect(proxyStatus({ dataplane: sidecar(true), dataplaneInsight: disconnected })).toBe('offline');
    expect(proxyStatus({ dataplane: sidecar(true), dataplaneInsight: {} })).toBe('offline');
  });

  it('follows the inbounds of a connected sidecar: all ready or unreported online, some not ready degraded, none ready offline', () => {
    expect(proxyStatus({ dataplane: sidecar(true, undefined), dataplaneInsight: connected })).toBe('online');
    expect(proxyStatus({ dataplane: sidecar(true, false), dataplaneInsight: connected })).toBe('partiallyDegraded');
    expect(proxyStatus({ dataplane: sidecar(false, false), dataplaneInsight: connected })).toBe('offline');
  });

  it('is online for a connected gateway, which has no inbounds to report', () => {
    const gateway = { networking: { address: '10.0.0.2', gateway: { type: 'BUILTIN' as const, tags: { 'mesh.io/service': 'edge' } } } };
    expect(proxyStatus({ dataplane: gateway, dataplaneInsight: connected })).toBe('online');
    expect(proxyType({ dataplane: gateway })).toBe('builtin');
    expect(proxyServices({ dataplane: gateway })).toEqual(['edge']);
  });
});

describe('a proxy type, services and subscription', () => {
  it('tells standard proxies from delegated gateways, and lists each service once', () => {
    expect(proxyType({ dataplane: sidecar(true) })).toBe('standard');
    expect(proxyType({ dataplane: { networking: { address: '10.0.0.3', gateway: { tags: { 'mesh.io/service': 'kong' } } } } })).toBe('delegated');
    expect(proxyServices({ dataplane: sidecar(true, true, true) })).toEqual(['web', 'admin']);
  });

  it('shows the connected subscription, else the latest', () => {
    expect(currentSubscription({ dataplaneInsight: connected })?.id).toBe('b');
    expect(currentSubscription({ dataplaneInsight: disconnected })?.id).toBe('a');
    expect(currentSubscription({})).toBeUndefined();
  });
});

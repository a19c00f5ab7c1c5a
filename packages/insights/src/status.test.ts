import { describe, expect, it } from 'vitest';
import { dataplaneStatus, isConnected, zoneStatus } from './status.js';

const connected = { subscriptions: [{ id: 's-1', connectTime: '2024-01-01T00:00:00.000Z' }] };
const disconnected = {
  subscriptions: [{ id: 's-1', connectTime: '2024-01-01T00:00:00.000Z', disconnectTime: '2024-01-01T00:01:00.000Z' }],
};

const withInbounds = (...ready: Array<boolean | undefined>) => ({
  networking: {
    address: '10.0.0.1',
    inbound: ready.map((r, i) => ({ port: 8080 + i, tags: { 'mesh.io/service': `svc-${i}` }, ...(r === undefined ? {} : { health: r ? { ready: true } : {} }) })),
  },
});

describe('dataplaneStatus', () => {
  it('is offline without an insight, without subscriptions, or with every subscription closed', () => {
    expect(dataplaneStatus(withInbounds(undefined), undefined)).toBe('offline');
    expect(dataplaneStatus(withInbounds(undefined), {})).toBe('offline');
    expect(dataplaneStatus(withInbounds(undefined), disconnected)).toBe('offline');
    // A subscription that never connected does not count either.
    const neverConnected = { subscriptions: [{ id: 's-1', version: {} }] };
    expect(dataplaneStatus(withInbounds(undefined), neverConnected)).toBe('offline');
  });

  it('is online when connected and no inbound reports unready (an absent health is ready)', () => {
    expect(dataplaneStatus(withInbounds(undefined, true), connected)).toBe('online');
    const reconnected = { subscriptions: [...disconnected.subscriptions, { id: 's-2', connectTime: '2024-01-01T00:02:00.000Z' }] };
    expect(dataplaneStatus(withInbounds(true), reconnected)).toBe('online');
  });

  it('is partially degraded when some inbounds are unready, offline when all are', () => {
    expect(dataplaneStatus(withInbounds(false, true), connected)).toBe('partiallyDegraded');
    expect(dataplaneStatus(withInbounds(false, false), connected)).toBe('offline');
  });

  it('is offline with no inbounds, unless it is a gateway', () => {
    expect(dataplaneStatus(withInbounds(), connected)).toBe('offline');
    const gateway = { networking: { address: '10.0.0.1', gateway: { tags: { 'mesh.io/service': 'edge' } } } };
    expect(dataplaneStatus(gateway, connected)).toBe('online');
    expect(dataplaneStatus(gateway, disconnected)).toBe('offline');
  });
});

describe('zoneStatus', () => {
  it('is active when connected and enabled (absent `enabled` counts as enabled)', () => {
    expect(zoneStatus({}, { subscriptions: [{ connectTime: '2024-01-01T00:00:00.000Z' }] })).toEqual({ active: true, url: '' });
    expect(zoneStatus({ enabled: false }, { subscriptions: [{ connectTime: '2024-01-01T00:00:00.000Z' }] })).toEqual({ active: false, url: '' });
    expect(zoneStatus({ enabled: true }, undefined)).toEqual({ active: false, url: '' });
  });

  it("reports the address of the zone's latest subscription", () => {
    const insight = {
      subscriptions: [
        { connectTime: '2024-01-01T00:00:00.000Z', disconnectTime: '2024-01-01T00:01:00.000Z', url: 'grpcs://old:5685' },
        { connectTime: '2024-01-01T00:02:00.000Z', url: 'grpcs://zone-1:5685' },
      ],
    };
    expect(zoneStatus({}, insight)).toEqual({ active: true, url: 'grpcs://zone-1:5685' });
  });

  it('isConnected looks for an open subscription', () => {
    expect(isConnected(undefined)).toBe(false);
    expect(isConnected([{ connectTime: 'x', disconnectTime: 'y' }, { connectTime: 'z' }])).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { serviceStatus, serviceTypeLabel } from './service-status.js';

describe('serviceStatus', () => {
  it('reads the insight status as a proxy status, and none without proxies', () => {
    expect(serviceStatus({ status: 'online' })).toBe('online');
    expect(serviceStatus({ status: 'offline' })).toBe('offline');
    expect(serviceStatus({ status: 'partially_degraded' })).toBe('partiallyDegraded');
    expect(serviceStatus({ status: 'not_available' })).toBeUndefined();
    expect(serviceStatus({})).toBeUndefined();
  });
});

describe('serviceTypeLabel', () => {
  it('names a service internal unless its insight gives another type', () => {
    expect(serviceTypeLabel({})).toBe('Internal');
    expect(serviceTypeLabel({ serviceType: 'gateway_delegated' })).toBe('Delegated gateway');
  });
});

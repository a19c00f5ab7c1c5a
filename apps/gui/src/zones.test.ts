import { describe, expect, it } from 'vitest';
import { currentSession, zoneOfProxy, zoneStatus, zoneType, zoneVersion } from './zones.js';

const closed = { id: 'a', globalInstanceId: 'global-1', connectTime: '2024-05-06T07:08:09Z', disconnectTime: '2024-05-06T07:09:00Z', version: { meshCp: { version: '2.4.0' } } };
const open = { id: 'b', globalInstanceId: 'global-2', connectTime: '2024-05-06T07:10:00Z', version: { meshCp: { version: '2.5.0' } }, config: '{"environment":"kubernetes"}' };

describe('a zone', () => {
  it('is online while enabled with a connected sync session, offline otherwise', () => {
    expect(zoneStatus({ zone: {}, zoneInsight: { subscriptions: [closed, open] } })).toBe('online');
    expect(zoneStatus({ zone: { enabled: false }, zoneInsight: { subscriptions: [open] } })).toBe('offline');
    expect(zoneStatus({ zone: {}, zoneInsight: { subscriptions: [closed] } })).toBe('offline');
    expect(zoneStatus({ zone: {} })).toBe('offline');
  });

  it('reports the version and type of its current session, else of its latest', () => {
    expect(currentSession({ zoneInsight: { subscriptions: [open, closed] } })?.id).toBe('b');
    expect(zoneVersion({ zoneInsight: { subscriptions: [open, closed] } })).toBe('2.5.0');
    expect(zoneVersion({ zoneInsight: { subscriptions: [closed] } })).toBe('2.4.0');
    expect(zoneType({ zoneInsight: { subscriptions: [open, closed] } })).toBe('kubernetes');
    expect(zoneType({ zoneInsight: { subscriptions: [closed] } })).toBeUndefined();
    expect(zoneType({ zoneInsight: { subscriptions: [{ ...open, config: 'not json' }] } })).toBeUndefined();
  });

  it('owns the ingresses its spec or, on a synced copy, its label names', () => {
    expect(zoneOfProxy({}, { zone: 'zone-1' })).toBe('zone-1');
    expect(zoneOfProxy({ labels: { 'mesh.io/zone': 'zone-2' } }, {})).toBe('zone-2');
    expect(zoneOfProxy({}, {})).toBeUndefined();
  });
});

// What the global takes from a zone: its own names only, ingresses and egresses in its zone only.
import { describe, expect, it } from 'vitest';
import { zoneMessageProblem } from './channels.js';

const ingress = (zone: string) => JSON.stringify({ zone, networking: { address: '10.0.0.1', port: 10001 } });

describe('zoneMessageProblem', () => {
  it('accepts a zone’s own names and ingresses', () => {
    expect(
      zoneMessageProblem('east', {
        full: false,
        kinds: [
          { type: 'Dataplane', nonce: 'n', resources: [{ mesh: 'default', name: 'east.web-1', spec: '{}' }], removed: [{ mesh: 'default', name: 'east.web-2' }] },
          { type: 'ZoneIngress', nonce: 'n', resources: [{ mesh: '', name: 'east.ingress', spec: ingress('east') }], removed: [] },
        ],
      }),
    ).toBeUndefined();
  });

  it('refuses another zone’s names, created or removed', () => {
    expect(zoneMessageProblem('east', { full: false, kinds: [{ type: 'Dataplane', nonce: 'n', resources: [{ mesh: 'default', name: 'west.web-1', spec: '{}' }], removed: [] }] })).toBe(
      'Dataplane "west.web-1": zone east may only send names starting with "east."',
    );
    expect(zoneMessageProblem('east', { full: false, kinds: [{ type: 'DataplaneInsight', nonce: 'n', resources: [], removed: [{ mesh: 'default', name: 'eastern.web-1' }] }] })).toBe(
      'DataplaneInsight "eastern.web-1": zone east may only send names starting with "east."',
    );
  });

  it('refuses an ingress or egress that says it is in another zone', () => {
    expect(zoneMessageProblem('east', { full: true, kinds: [{ type: 'ZoneEgress', nonce: 'n', resources: [{ mesh: '', name: 'east.egress', spec: ingress('west') }], removed: [] }] })).toBe(
      'ZoneEgress "east.egress": zone east may only send its own, got one in zone "west"',
    );
  });
});

// What a proxy registering itself again keeps of the stored resource (docs/xds.md, Connecting).
import { describe, expect, it } from 'vitest';
import { registeredSpec } from './registration.js';

const SERVICES = [{ tags: { 'mesh.io/service': 'backend', 'mesh.io/zone': 'east' }, instances: 2, mesh: 'default' }];
const INGRESS = { networking: { address: '10.0.0.10', port: 10001, advertisedAddress: '192.0.2.10', advertisedPort: 10001 } };

describe('registeredSpec', () => {
  it('keeps the available services of a zone ingress, whatever its template says', () => {
    const stored = { ...INGRESS, availableServices: SERVICES };
    expect(registeredSpec('ZoneIngress', INGRESS, stored)).toEqual(stored);
    const moved = { networking: { ...INGRESS.networking, advertisedPort: 10002 }, availableServices: [{ tags: { 'mesh.io/service': 'made-up' }, instances: 9, mesh: 'default' }] };
    expect(registeredSpec('ZoneIngress', moved, stored)).toEqual({ ...moved, availableServices: SERVICES });
    expect(registeredSpec('ZoneIngress', INGRESS, undefined)).toEqual(INGRESS);
  });

  it('keeps the health of the inbounds a dataplane brings again without one, by address and port', () => {
    const inbound = (port: number, extra: Record<string, unknown> = {}) => ({ port, tags: { 'mesh.io/service': `svc-${port}` }, ...extra });
    const stored = {
      networking: {
        address: '10.0.0.1',
        inbound: [inbound(8080, { health: { ready: true } }), inbound(8081, { address: '10.0.0.9', health: { ready: false } }), inbound(8082, { health: { ready: true } })],
      },
    };
    const brought = {
      networking: {
        address: '10.0.0.1',
        inbound: [inbound(8080), inbound(8081, { address: '10.0.0.9' }), inbound(8082, { health: { ready: false } }), inbound(8083)],
      },
    };
    expect(registeredSpec('Dataplane', brought, stored)).toEqual({
      networking: {
        address: '10.0.0.1',
        inbound: [inbound(8080, { health: { ready: true } }), inbound(8081, { address: '10.0.0.9', health: { ready: false } }), inbound(8082, { health: { ready: false } }), inbound(8083)],
      },
    });
    // Another address is another instance: nothing of the stored one's health applies.
    const elsewhere = { networking: { address: '10.0.0.2', inbound: [inbound(8080)] } };
    expect(registeredSpec('Dataplane', elsewhere, stored)).toEqual(elsewhere);
  });

  it('registers a zone egress as brought', () => {
    const egress = { networking: { address: '10.0.0.20', port: 10002 } };
    expect(registeredSpec('ZoneEgress', egress, { networking: { address: '10.0.0.21', port: 10002 } })).toEqual(egress);
  });
});

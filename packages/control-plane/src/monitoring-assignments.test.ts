import { type AnyKind, dataplaneKind, type DataplaneSpec, decodeSpec, meshKind, type MeshSpec } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { monitoringAssignments } from './monitoring-assignments.js';

/** A spec as the store holds it: decoded from its wire form. */
function decoded<T>(kind: AnyKind, body: object): T {
  const result = decodeSpec(kind, body);
  if (!result.ok) throw new Error(result.message);
  return result.spec as T;
}

const prometheusMesh = (conf: Record<string, unknown> = { port: 5670, path: '/metrics' }): MeshSpec =>
  decoded(meshKind, { metrics: { enabledBackend: 'prom-1', backends: [{ name: 'prom-1', type: 'prometheus', conf }] } });

const proxy = (address: string, inbounds: Array<Record<string, string>>, extra: { metrics?: object; advertisedAddress?: string } = {}): DataplaneSpec =>
  decoded(dataplaneKind, {
    ...(extra.metrics ? { metrics: extra.metrics } : {}),
    networking: { address, ...(extra.advertisedAddress ? { advertisedAddress: extra.advertisedAddress } : {}), inbound: inbounds.map((tags, i) => ({ port: 10000 + i, tags })) },
  });

describe('monitoring assignments', () => {
  it('makes one target per proxy of a mesh with prometheus enabled, labelled with its tags, first value and all values', () => {
    const meshes = new Map<string, MeshSpec>([
      ['default', prometheusMesh()],
      ['quiet', decoded<MeshSpec>(meshKind, {})],
    ]);
    const assignments = monitoringAssignments(meshes, [
      { mesh: 'default', name: 'web-1', spec: proxy('10.0.0.2', [{ 'mesh.io/service': 'web', 'mesh.io/zone': 'east', version: 'v2' }, { 'mesh.io/service': 'admin', version: 'v1' }]) },
      { mesh: 'quiet', name: 'db-1', spec: proxy('10.0.0.3', [{ 'mesh.io/service': 'db' }]) },
      { mesh: 'default', name: 'backend-1', spec: proxy('10.0.0.1', [{ 'mesh.io/service': 'backend' }]) },
    ]);
    expect(assignments.map((assignment) => assignment.targets[0]!.name)).toEqual(['backend-1', 'web-1']);
    expect(assignments[1]).toEqual({
      mesh: 'default',
      // The first of its services in name order.
      service: 'admin',
      targets: [
        {
          name: 'web-1',
          scheme: 'http',
          address: '10.0.0.2:5670',
          metrics_path: '/metrics',
          labels: {
            mesh_io_service: 'admin',
            mesh_io_services: ',admin,web,',
            mesh_io_zone: 'east',
            mesh_io_zones: ',east,',
            version: 'v1',
            versions: ',v1,v2,',
          },
        },
      ],
      labels: {},
    });
  });

  it("uses the proxy's own metrics settings, its advertised address, https for provided TLS, and `unknown` without a service", () => {
    const own = { type: 'prometheus', conf: { port: 9102, path: '/stats', tls: { mode: 'providedTLS' } } };
    const [assignment] = monitoringAssignments(new Map([['default', prometheusMesh()]]), [
      { mesh: 'default', name: 'gw-1', spec: proxy('fd00::1', [], { metrics: own, advertisedAddress: 'fd00::9' }) },
    ]);
    expect(assignment).toMatchObject({ service: 'unknown', targets: [{ scheme: 'https', address: '[fd00::9]:9102', metrics_path: '/stats', labels: {} }] });
  });
});

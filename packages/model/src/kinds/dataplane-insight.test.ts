import { describe, expect, it } from 'vitest';
import { isInsightKind, KINDS } from '../registry.js';
import { decodeSpec } from '../decode.js';
import { isWritableViaApi, MODES, syncsGlobalToZone, syncsZoneToGlobal } from '../kind.js';
import { wireForm } from '../test-support.js';
import { dataplaneInsightKind } from './dataplane-insight.js';
import { zoneEgressInsightKind } from './zone-egress-insight.js';
import { zoneIngressInsightKind } from './zone-ingress-insight.js';

const subscription = {
  id: '5e3c0e4c-2f0a-4b8e-9c1d-6a7b8c9d0e1f',
  control_plane_instance_id: '00000000-0000-4000-8000-000000000000',
  connectTime: '2024-05-06T07:00:00Z',
  status: {
    lastUpdateTime: '2024-05-06T07:00:01.5+02:00',
    total: { responsesSent: 3, responsesAcknowledged: '2', responsesRejected: 0 },
    rds: {},
  },
  version: { meshDp: { version: '2.5.0', meshCpCompatible: true }, envoy: { version: '1.28.0', build: '' }, unknown: 1 },
  generation: 0,
};

describe('DataplaneInsight', () => {
  it('emits counters as strings, timestamps in UTC with milliseconds, and drops zero values', () => {
    expect(wireForm(dataplaneInsightKind, { subscriptions: [subscription], mTLS: { issuedBackend: 'ca-1', supportedBackends: ['ca-1'], certificateRegenerations: 2 } })).toEqual({
      subscriptions: [
        {
          id: '5e3c0e4c-2f0a-4b8e-9c1d-6a7b8c9d0e1f',
          controlPlaneInstanceId: '00000000-0000-4000-8000-000000000000',
          connectTime: '2024-05-06T07:00:00.000Z',
          status: { lastUpdateTime: '2024-05-06T05:00:01.500Z', total: { responsesSent: '3', responsesAcknowledged: '2' }, rds: {} },
          version: { meshDp: { version: '2.5.0', meshCpCompatible: true }, envoy: { version: '1.28.0' } },
        },
      ],
      mTLS: { issuedBackend: 'ca-1', supportedBackends: ['ca-1'], certificateRegenerations: 2 },
    });
  });

  it('refuses a timestamp that is not one', () => {
    expect(decodeSpec(dataplaneInsightKind, { subscriptions: [{ connectTime: 'yesterday' }] })).toMatchObject({ ok: false });
  });

  it('is read-only, mesh-scoped and synced up from zones, like its kin for zone proxies', () => {
    expect(dataplaneInsightKind).toMatchObject({ path: 'dataplane-insights', scope: 'mesh', inCatalogue: false });
    expect(zoneIngressInsightKind).toMatchObject({ path: 'zone-ingress-insights', scope: 'global' });
    expect(zoneEgressInsightKind).toMatchObject({ path: 'zoneegressinsights', scope: 'global' });
    for (const kind of [dataplaneInsightKind, zoneIngressInsightKind, zoneEgressInsightKind]) {
      expect(MODES.filter((mode) => isWritableViaApi(kind, mode))).toEqual([]);
      expect([syncsZoneToGlobal(kind), syncsGlobalToZone(kind)]).toEqual([true, false]);
    }
    expect(wireForm(zoneIngressInsightKind, { subscriptions: [{ id: 'a', generation: 4 }] })).toEqual({ subscriptions: [{ id: 'a', generation: 4 }] });
    expect(KINDS.filter(isInsightKind).map((kind) => kind.name)).toEqual(['DataplaneInsight', 'ZoneInsight', 'ZoneIngressInsight', 'ZoneEgressInsight']);
  });
});

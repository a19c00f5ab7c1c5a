import { describe, expect, it } from 'vitest';
import { isWritableViaApi, MODES } from '../kind.js';
import { wireForm } from '../test-support.js';
import { zoneInsightKind } from './zone-insight.js';

describe('ZoneInsight', () => {
  it('keeps per-kind counters, the version, the configuration and the reported address', () => {
    const body = {
      subscriptions: [
        {
          id: '8d6f1c2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f',
          globalInstanceId: '00000000-0000-4000-8000-000000000000',
          connectTime: '2024-05-06T07:00:00.000Z',
          disconnectTime: '2024-05-06T08:00:00.000Z',
          status: { total: { responsesSent: '2' }, stat: { Mesh: { responsesSent: 2, responsesAcknowledged: 2 } } },
          version: { meshCp: { version: '2.5.0', gitTag: '2.5.0', meshCpGlobalCompatible: true } },
          generation: 7,
          config: '{"mode":"zone"}',
          authTokenProvided: false,
          url: 'grpcs://zone-1.example:5685',
        },
      ],
      healthCheck: { time: '2024-05-06T08:00:00Z' },
    };
    expect(wireForm(zoneInsightKind, body)).toEqual({
      subscriptions: [
        {
          id: '8d6f1c2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f',
          globalInstanceId: '00000000-0000-4000-8000-000000000000',
          connectTime: '2024-05-06T07:00:00.000Z',
          disconnectTime: '2024-05-06T08:00:00.000Z',
          status: { total: { responsesSent: '2' }, stat: { Mesh: { responsesSent: '2', responsesAcknowledged: '2' } } },
          version: { meshCp: { version: '2.5.0', gitTag: '2.5.0', meshCpGlobalCompatible: true } },
          generation: 7,
          config: '{"mode":"zone"}',
          url: 'grpcs://zone-1.example:5685',
        },
      ],
      healthCheck: { time: '2024-05-06T08:00:00.000Z' },
    });
  });

  it('is kept by the global alone and never written through the API', () => {
    expect(zoneInsightKind).toMatchObject({ path: 'zone-insights', scope: 'global', inCatalogue: false, kdsFlags: 0 });
    expect(MODES.filter((mode) => isWritableViaApi(zoneInsightKind, mode))).toEqual([]);
    expect(wireForm(zoneInsightKind, { subscriptions: [{ id: 'a', status: { stat: {} } }] })).toEqual({ subscriptions: [{ id: 'a', status: {} }] });
  });
});

// Zone sync's counters under the reference's names (`kds_delta_*`, `kds_resources_sync`).
import type { SyncMetrics } from '@mesh/kds';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createSyncMetrics(registry: Registry): SyncMetrics {
  const sent = new Counter({
    name: 'kds_delta_responses_sent',
    help: 'Zone sync responses this control plane sent, by resource kind',
    labelNames: ['type_url'],
    registers: [registry],
  });
  const confirmations = new Counter({
    name: 'kds_delta_requests_received',
    help: 'Acknowledgements (ACK) and rejections (NACK) of zone sync responses, by resource kind',
    labelNames: ['type_url', 'confirmation'],
    registers: [registry],
  });
  const streams = new Gauge({ name: 'kds_delta_streams_active', help: 'Zone sync sessions open on this control plane', registers: [registry] });
  const applied = new Histogram({
    name: 'kds_resources_sync',
    help: 'Seconds it took to apply what zone sync received',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  return {
    responsesSent: (kinds) => kinds.forEach((kind) => sent.inc({ type_url: kind })),
    confirmations: (kinds, accepted) => kinds.forEach((kind) => confirmations.inc({ type_url: kind, confirmation: accepted ? 'ACK' : 'NACK' })),
    applied: (seconds) => applied.observe(seconds),
    streams: (delta) => streams.inc(delta),
  };
}

// The data plane server's metrics under the reference's names (`xds_*`; docs/xds.md, Metrics).
import type { XdsMetrics } from '@mesh/xds-server';
import { Counter, Gauge, Summary, type Registry } from 'prom-client';

const percentiles = [0.5, 0.9, 0.99];

export function createXdsMetrics(registry: Registry): XdsMetrics {
  const generations = new Summary({
    name: 'xds_generation',
    help: 'Milliseconds it took to compute a proxy configuration, by proxy type and result',
    labelNames: ['proxy_type', 'result'],
    percentiles,
    registers: [registry],
  });
  const generationErrors = new Counter({ name: 'xds_generation_errors', help: 'Proxy configurations that could not be computed', registers: [registry] });
  const sent = new Counter({ name: 'xds_responses_sent', help: 'Discovery responses sent to proxies, by type', labelNames: ['type_url'], registers: [registry] });
  const confirmations = new Counter({
    name: 'xds_requests_received',
    help: 'Acknowledgements (ACK) and rejections (NACK) of discovery responses, by type',
    labelNames: ['type_url', 'confirmation'],
    registers: [registry],
  });
  const delivery = new Summary({
    name: 'xds_delivery',
    help: 'Milliseconds from a discovery response going out to the proxy acknowledging or rejecting it',
    percentiles,
    registers: [registry],
  });
  const streams = new Gauge({ name: 'xds_streams_active', help: 'Discovery streams of proxies open on this control plane', registers: [registry] });
  return {
    generation: (proxyType, result, milliseconds) => generations.observe({ proxy_type: proxyType, result }, milliseconds),
    generationError: () => generationErrors.inc(),
    responseSent: (typeUrl) => sent.inc({ type_url: typeUrl }),
    confirmation: (typeUrl, accepted) => confirmations.inc({ type_url: typeUrl, confirmation: accepted ? 'ACK' : 'NACK' }),
    delivery: (milliseconds) => delivery.observe(milliseconds),
    streams: (delta) => streams.inc(delta),
  };
}

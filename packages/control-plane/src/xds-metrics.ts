// The data plane server's metrics under the reference's names (`xds_*`; docs/xds.md, Metrics).
// A push to thousands of proxies counts several events per proxy: they are tallied in plain
// numbers and handed to prom-client when the registry is read, or once many are waiting and the
// events pause, so a push pays for no label lookups and quantile digests while it goes.
import { encodingCacheBytes, type XdsMetrics } from '@mesh/xds-server';
import { Counter, Gauge, Summary, type Registry } from 'prom-client';

const percentiles = [0.5, 0.9, 0.99];

/** Observations kept before they are handed over without waiting for a read, once the events pause. */
const PENDING_LIMIT = 20_000;

/** Observations handed over at once, paused or not: a bound on what waits for a read. */
const PENDING_CAP = 200_000;

/** How long the events must pause before waiting observations are handed over (a push's ACKs come closer). */
const PAUSE_MS = 250;

/** The longest wait for a pause: events that never pause are handed over this often. */
const MAX_WAIT_MS = 5_000;

/** Event counts by label values, added to a counter when it is read. */
class PendingCounts<L extends string> {
  private readonly counts = new Map<string, { labels: Record<L, string>; count: number }>();

  add(key: string, labels: () => Record<L, string>): void {
    const entry = this.counts.get(key);
    if (entry) entry.count++;
    else this.counts.set(key, { labels: labels(), count: 1 });
  }

  flushInto(counter: Counter<L>): void {
    for (const { labels, count } of this.counts.values()) counter.inc(labels, count);
    this.counts.clear();
  }
}

export function createXdsMetrics(registry: Registry): XdsMetrics {
  const pendingGenerations = new Map<string, { labels: { proxy_type: string; result: string }; values: number[] }>();
  const pendingDeliveries: number[] = [];
  let pendingObservations = 0;
  let handOver: NodeJS.Timeout | undefined;
  const pendingSent = new PendingCounts<'type_url'>();
  // ACKs and NACKs apart: an ACK's count is found by its type URL alone.
  const pendingAcks = new PendingCounts<'type_url' | 'confirmation'>();
  const pendingNacks = new PendingCounts<'type_url' | 'confirmation'>();

  const generations = new Summary({
    name: 'xds_generation',
    help: 'Milliseconds it took to compute a proxy configuration, by proxy type and result',
    labelNames: ['proxy_type', 'result'],
    percentiles,
    registers: [registry],
    collect: () => flushObservations(),
  });
  const generationErrors = new Counter({ name: 'xds_generation_errors', help: 'Proxy configurations that could not be computed', registers: [registry] });
  const sent: Counter<'type_url'> = new Counter({
    name: 'xds_responses_sent',
    help: 'Discovery responses sent to proxies, by type',
    labelNames: ['type_url'],
    registers: [registry],
    collect: (): void => pendingSent.flushInto(sent),
  });
  const confirmations: Counter<'type_url' | 'confirmation'> = new Counter({
    name: 'xds_requests_received',
    help: 'Acknowledgements (ACK) and rejections (NACK) of discovery responses, by type',
    labelNames: ['type_url', 'confirmation'],
    registers: [registry],
    collect: (): void => {
      pendingAcks.flushInto(confirmations);
      pendingNacks.flushInto(confirmations);
    },
  });
  const delivery = new Summary({
    name: 'xds_delivery',
    help: 'Milliseconds from a discovery response going out to the proxy acknowledging or rejecting it',
    percentiles,
    registers: [registry],
    collect: () => flushObservations(),
  });
  const streams = new Gauge({ name: 'xds_streams_active', help: 'Discovery streams of proxies open on this control plane', registers: [registry] });
  const encodingCache: Gauge = new Gauge({
    name: 'xds_encoding_cache_bytes',
    help: 'Bytes of encoded proxy resources in use, found by content for reuse',
    registers: [registry],
    collect: (): void => encodingCache.set(encodingCacheBytes()),
  });

  function flushObservations(): void {
    clearTimeout(handOver);
    handOver = undefined;
    for (const { labels, values } of pendingGenerations.values()) for (const value of values) generations.observe(labels, value);
    pendingGenerations.clear();
    for (const value of pendingDeliveries) delivery.observe(value);
    pendingDeliveries.length = 0;
    pendingObservations = 0;
  }

  /** Hands the observations over once none came for a pause, or after the longest wait; checked every pause. */
  function handOverWhenPaused(waitedMs = 0): void {
    const seen = pendingObservations;
    handOver = setTimeout(() => {
      if (pendingObservations === seen || waitedMs + PAUSE_MS >= MAX_WAIT_MS) flushObservations();
      else handOverWhenPaused(waitedMs + PAUSE_MS);
    }, PAUSE_MS);
    handOver.unref();
  }

  const observed = (): void => {
    ++pendingObservations;
    if (pendingObservations >= PENDING_CAP) flushObservations();
    else if (pendingObservations >= PENDING_LIMIT && handOver === undefined) handOverWhenPaused();
  };

  return {
    generation: (proxyType, result, milliseconds) => {
      const key = `${proxyType}\u0000${result}`;
      const entry = pendingGenerations.get(key);
      if (entry) entry.values.push(milliseconds);
      else pendingGenerations.set(key, { labels: { proxy_type: proxyType, result }, values: [milliseconds] });
      observed();
    },
    generationError: () => generationErrors.inc(),
    responseSent: (typeUrl) => pendingSent.add(typeUrl, () => ({ type_url: typeUrl })),
    confirmation: (typeUrl, accepted) => {
      if (accepted) pendingAcks.add(typeUrl, () => ({ type_url: typeUrl, confirmation: 'ACK' }));
      else pendingNacks.add(typeUrl, () => ({ type_url: typeUrl, confirmation: 'NACK' }));
    },
    delivery: (milliseconds) => {
      pendingDeliveries.push(milliseconds);
      observed();
    },
    streams: (delta) => streams.inc(delta),
  };
}

// The data plane server's figures as /metrics shows them: tallied during a push, handed to
// prom-client later, none lost or counted twice on the way.
import { Registry, Summary } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createXdsMetrics } from './xds-metrics.js';

const CLUSTERS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

const figure = (text: string, line: string) => {
  const escaped = line.replace(/[{}.()+*?[\]\\/^$|]/g, '\\$&');
  return Number(new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text)?.[1]);
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('createXdsMetrics', () => {
  it('shows each event under the reference names', async () => {
    const registry = new Registry();
    const metrics = createXdsMetrics(registry);
    metrics.streams(1);
    metrics.streams(1);
    metrics.streams(-1);
    metrics.generation('dataplane', 'generated', 4);
    metrics.generation('dataplane', 'changed', 2);
    metrics.generation('dataplane', 'changed', 6);
    metrics.responseSent(CLUSTERS);
    metrics.responseSent(CLUSTERS);
    metrics.confirmation(CLUSTERS, true);
    metrics.confirmation(CLUSTERS, false);
    metrics.delivery(3);
    metrics.generationError();
    const text = await registry.metrics();
    expect(figure(text, 'xds_streams_active')).toBe(1);
    expect(figure(text, 'xds_generation_count{proxy_type="dataplane",result="changed"}')).toBe(2);
    expect(figure(text, 'xds_generation_sum{proxy_type="dataplane",result="changed"}')).toBe(8);
    expect(figure(text, 'xds_generation_count{proxy_type="dataplane",result="generated"}')).toBe(1);
    expect(figure(text, `xds_responses_sent{type_url="${CLUSTERS}"}`)).toBe(2);
    expect(figure(text, `xds_requests_received{type_url="${CLUSTERS}",confirmation="ACK"}`)).toBe(1);
    expect(figure(text, `xds_requests_received{type_url="${CLUSTERS}",confirmation="NACK"}`)).toBe(1);
    expect(figure(text, 'xds_delivery_count')).toBe(1);
    expect(figure(text, 'xds_generation_errors')).toBe(1);
  });

  it('feeds the quantile digests once a push pauses, or after 5 s of events that do not, never mid-push', () => {
    const observe = vi.spyOn(Summary.prototype, 'observe');
    try {
      const metrics = createXdsMetrics(new Registry());
      // A push: events every few milliseconds, past the 20,000 that wait for a pause.
      for (let i = 0; i < 25_000; i++) {
        metrics.delivery(1);
        if (i % 100 === 0) vi.advanceTimersByTime(10);
      }
      expect(observe).not.toHaveBeenCalled();
      // A pause is seen within two checks 250 ms apart.
      vi.advanceTimersByTime(500);
      expect(observe).toHaveBeenCalledTimes(25_000);
      observe.mockClear();
      // Events that never pause for 250 ms: handed over after 5 s all the same.
      for (let i = 0; i < 20_000; i++) metrics.delivery(1);
      for (let elapsed = 0; elapsed < 4_800; elapsed += 200) {
        metrics.delivery(1);
        vi.advanceTimersByTime(200);
      }
      expect(observe).not.toHaveBeenCalled();
      for (let elapsed = 0; elapsed < 400; elapsed += 200) {
        metrics.delivery(1);
        vi.advanceTimersByTime(200);
      }
      expect(observe.mock.calls.length).toBeGreaterThan(20_000);
    } finally {
      observe.mockRestore();
    }
  });

  it('loses and repeats no observation of a long push, whether handed over at a pause, at the cap or on a read', async () => {
    const registry = new Registry();
    const metrics = createXdsMetrics(registry);
    // Past the point where they wait for a pause, with the events still coming: a push in progress.
    for (let i = 0; i < 30_000; i++) {
      metrics.delivery(1);
      if (i % 1000 === 0) vi.advanceTimersByTime(100);
    }
    // The pause: the waiting observations are handed over.
    vi.advanceTimersByTime(1000);
    // Past the cap without a pause: handed over at once.
    for (let i = 0; i < 200_000; i++) metrics.delivery(2);
    for (let i = 0; i < 10; i++) metrics.generation('dataplane', 'skip', 1);
    const text = await registry.metrics();
    expect(figure(text, 'xds_delivery_count')).toBe(230_000);
    expect(figure(text, 'xds_delivery_sum')).toBe(430_000);
    expect(figure(text, 'xds_generation_count{proxy_type="dataplane",result="skip"}')).toBe(10);
    // A read takes what waits; the next read adds only what came since.
    metrics.delivery(5);
    expect(figure(await registry.metrics(), 'xds_delivery_count')).toBe(230_001);
  });
});

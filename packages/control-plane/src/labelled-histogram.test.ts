// The histogram of API requests and store operations: what a scrape of /metrics shows of it.
import { type Metric, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LabelledHistogram } from './labelled-histogram.js';

function registered() {
  const histogram = new LabelledHistogram<'handler' | 'method' | 'code'>('requests_seconds', 'Requests', ['handler', 'method', 'code'], [0.01, 0.1]);
  const registry = new Registry();
  registry.registerMetric(histogram as unknown as Metric);
  return { histogram, scrape: () => registry.metrics() };
}

describe('LabelledHistogram', () => {
  it('shows cumulative buckets, sum and count per label values, a number shown as text', async () => {
    const { histogram, scrape } = registered();
    histogram.observe(['/meshes/{mesh}', 'GET', 200], 0.005);
    histogram.observe(['/meshes/{mesh}', 'GET', 200], 0.05);
    histogram.observe(['/meshes/{mesh}', 'GET', 200], 2);
    histogram.observe(['/meshes/{mesh}', 'PUT', 201], 0.01);
    const text = await scrape();
    expect(text).toContain('# HELP requests_seconds Requests\n# TYPE requests_seconds histogram\n');
    const get = 'handler="/meshes/{mesh}",method="GET",code="200"';
    expect(text).toContain(`requests_seconds_bucket{le="0.01",${get}} 1\n`);
    expect(text).toContain(`requests_seconds_bucket{le="0.1",${get}} 2\n`);
    expect(text).toContain(`requests_seconds_bucket{le="+Inf",${get}} 3\n`);
    expect(text).toContain(`requests_seconds_sum{${get}} 2.055\n`);
    expect(text).toContain(`requests_seconds_count{${get}} 3\n`);
    // A bound is inclusive, as Prometheus reads `le`.
    expect(text).toContain('requests_seconds_bucket{le="0.01",handler="/meshes/{mesh}",method="PUT",code="201"} 1\n');
  });

  it('keeps label values apart that share a prefix, and forgets all on reset', async () => {
    const { histogram, scrape } = registered();
    histogram.observe(['a', 'GET', 200], 0.001);
    histogram.observe(['a', 'GET', 404], 0.001);
    histogram.observe(['b', 'GET', 200], 0.001);
    const text = await scrape();
    expect(text.match(/^requests_seconds_count\{.*\} 1$/gm)).toHaveLength(3);
    histogram.reset();
    expect(await scrape()).not.toContain('requests_seconds_count');
  });
});

import { describe, expect, it } from 'vitest';
import { convertFamilies, type ExpositionFormat, formatOfContentType, mergeFamilies, parseExposition, selectFormat, writeExposition } from './exposition.js';

const ENVOY = `# TYPE envoy_cluster_upstream_cx_total counter
envoy_cluster_upstream_cx_total{envoy_cluster_name="backend"} 3
envoy_cluster_upstream_cx_total{envoy_cluster_name="admin"} 1
# TYPE envoy_cluster_upstream_rq_completed counter
envoy_cluster_upstream_rq_completed{envoy_cluster_name="backend"} 5
# TYPE envoy_server_live gauge
envoy_server_live 1
# TYPE envoy_cluster_upstream_cx_connect_ms histogram
envoy_cluster_upstream_cx_connect_ms_bucket{envoy_cluster_name="backend",le="0.5"} 1
envoy_cluster_upstream_cx_connect_ms_bucket{envoy_cluster_name="backend",le="+Inf"} 3
envoy_cluster_upstream_cx_connect_ms_sum{envoy_cluster_name="backend"} 2.5
envoy_cluster_upstream_cx_connect_ms_count{envoy_cluster_name="backend"} 3
`;

const APP_OPENMETRICS = `# HELP app_orders Orders "taken".
# TYPE app_orders counter
app_orders_total{shop="north"} 42 # {trace_id="abc"} 1.0 1700000000.5
app_orders_created{shop="north"} 1700000000
# TYPE app_build info
app_build_info{version="1.2"} 1
# EOF
`;

/** Parsed, converted to `to`, merged and written, as a scrape does. */
function mergeAs(to: ExpositionFormat, ...sources: Array<[string, string, ExpositionFormat]>) {
  const merged = mergeFamilies(sources.map(([source, text, from]) => ({ source, families: convertFamilies(parseExposition(text, from).families, from, to) })));
  return { text: writeExposition(merged.families, to), conflicts: merged.conflicts };
}

describe('expositions', () => {
  it('tells the format by content type, and prefers OpenMetrics 1.0.0, then 0.0.1, then Prometheus text', () => {
    expect(formatOfContentType('text/plain; charset=UTF-8')).toBe('text');
    expect(formatOfContentType('application/openmetrics-text; version=1.0.0; charset=utf-8')).toBe('openmetrics-1.0.0');
    expect(formatOfContentType('application/openmetrics-text')).toBe('openmetrics-0.0.1');
    expect(formatOfContentType('application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited')).toBeUndefined();
    expect(selectFormat(['text', 'openmetrics-0.0.1'])).toBe('openmetrics-0.0.1');
    expect(selectFormat(['openmetrics-0.0.1', 'openmetrics-1.0.0'])).toBe('openmetrics-1.0.0');
    expect(selectFormat([])).toBe('text');
  });

  it('writes one family per name: a later source adds series not there yet, and a family of another type is left out', () => {
    const app = '# HELP envoy_server_live Alive.\n# TYPE envoy_server_live gauge\nenvoy_server_live 7\nenvoy_server_live{node="b"} 1\n# TYPE envoy_cluster_upstream_cx_total gauge\nenvoy_cluster_upstream_cx_total 9\nno_metadata 3\n';
    const { text, conflicts } = mergeAs('text', ['app', app, 'text'], ['envoy', ENVOY, 'text']);
    expect(text).toBe(
      [
        '# HELP envoy_server_live Alive.',
        '# TYPE envoy_server_live gauge',
        'envoy_server_live 7',
        'envoy_server_live{node="b"} 1',
        '# TYPE envoy_cluster_upstream_cx_total gauge',
        'envoy_cluster_upstream_cx_total 9',
        '# TYPE no_metadata untyped',
        'no_metadata 3',
        '# TYPE envoy_cluster_upstream_rq_completed counter',
        'envoy_cluster_upstream_rq_completed{envoy_cluster_name="backend"} 5',
        '# TYPE envoy_cluster_upstream_cx_connect_ms histogram',
        'envoy_cluster_upstream_cx_connect_ms_bucket{envoy_cluster_name="backend",le="0.5"} 1',
        'envoy_cluster_upstream_cx_connect_ms_bucket{envoy_cluster_name="backend",le="+Inf"} 3',
        'envoy_cluster_upstream_cx_connect_ms_sum{envoy_cluster_name="backend"} 2.5',
        'envoy_cluster_upstream_cx_connect_ms_count{envoy_cluster_name="backend"} 3',
        '',
      ].join('\n'),
    );
    expect(conflicts).toEqual([{ name: 'envoy_cluster_upstream_cx_total', source: 'envoy', type: 'counter', keptType: 'gauge' }]);
  });

  it('writes OpenMetrics with Envoy\'s text families converted: counters named _total keep their type, other counters become unknown', () => {
    const { text } = mergeAs('openmetrics-1.0.0', ['app', APP_OPENMETRICS, 'openmetrics-1.0.0'], ['envoy', ENVOY, 'text']);
    expect(text).toBe(
      [
        '# HELP app_orders Orders \\"taken\\".',
        '# TYPE app_orders counter',
        'app_orders_total{shop="north"} 42',
        'app_orders_created{shop="north"} 1700000000',
        '# TYPE app_build info',
        'app_build_info{version="1.2"} 1',
        '# TYPE envoy_cluster_upstream_cx counter',
        'envoy_cluster_upstream_cx_total{envoy_cluster_name="backend"} 3',
        'envoy_cluster_upstream_cx_total{envoy_cluster_name="admin"} 1',
        '# TYPE envoy_cluster_upstream_rq_completed unknown',
        'envoy_cluster_upstream_rq_completed{envoy_cluster_name="backend"} 5',
        '# TYPE envoy_server_live gauge',
        'envoy_server_live 1',
        '# TYPE envoy_cluster_upstream_cx_connect_ms histogram',
        'envoy_cluster_upstream_cx_connect_ms_bucket{envoy_cluster_name="backend",le="0.5"} 1',
        'envoy_cluster_upstream_cx_connect_ms_bucket{envoy_cluster_name="backend",le="+Inf"} 3',
        'envoy_cluster_upstream_cx_connect_ms_sum{envoy_cluster_name="backend"} 2.5',
        'envoy_cluster_upstream_cx_connect_ms_count{envoy_cluster_name="backend"} 3',
        '# EOF',
        '',
      ].join('\n'),
    );
  });

  it('writes Prometheus text from OpenMetrics: counters under their _total name, _created and info samples as gauges', () => {
    const { text } = mergeAs('text', ['app', APP_OPENMETRICS, 'openmetrics-1.0.0']);
    expect(text).toBe(
      [
        '# HELP app_orders_total Orders "taken".',
        '# TYPE app_orders_total counter',
        'app_orders_total{shop="north"} 42',
        '# HELP app_orders_created Orders "taken".',
        '# TYPE app_orders_created gauge',
        'app_orders_created{shop="north"} 1700000000',
        '# TYPE app_build_info gauge',
        'app_build_info{version="1.2"} 1',
        '',
      ].join('\n'),
    );
  });

  it('keeps label values and timestamps through both formats, and counts the lines that are no metrics', () => {
    const parsed = parseExposition('# TYPE x gauge\nx{path="/a\\"b\\\\c\\nd"} 1 1700000000123\nthis is not a metric\n', 'text');
    expect(parsed.skippedLines).toBe(1);
    expect(parsed.families[0]?.samples[0]).toEqual({ name: 'x', labels: [['path', '/a"b\\c\nd']], value: '1', timestampMs: 1700000000123 });
    expect(writeExposition(parsed.families, 'text')).toBe('# TYPE x gauge\nx{path="/a\\"b\\\\c\\nd"} 1 1700000000123\n');
    expect(writeExposition(parsed.families, 'openmetrics-1.0.0')).toBe('# TYPE x gauge\nx{path="/a\\"b\\\\c\\nd"} 1 1700000000.123\n# EOF\n');
  });
});

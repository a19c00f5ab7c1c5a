// MeshTrace: the tracing of every HTTP connection manager, and the collector's cluster.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const trace = (backend: object) =>
  targetRefPolicy('MeshTrace', 'trace', {
    targetRef: { kind: 'Mesh' },
    default: {
      backends: [backend],
      sampling: { overall: 80, client: '12.5', random: 50 },
      tags: [{ name: 'team', literal: 'core' }, { name: 'user', header: { name: 'x-user', default: 'anonymous' } }],
    },
  });

const tracingOf = (config: ProxyConfig, name: string): unknown => {
  const listener = config.listeners.find((candidate) => candidate.name === name) as Listener;
  return (((listener.filterChains as JsonObject[])[0]?.filters as JsonObject[]).at(-1)?.typedConfig as JsonObject).tracing;
};

describe('MeshTrace', () => {
  const topology = targetRefTopology('STRICT');
  const before = topology.render(topology.web1, {});
  const zipkin = trace({ type: 'Zipkin', zipkin: { url: 'https://zipkin.local:9411/api/v2/spans', traceId128bit: true, apiVersion: 'httpProto', sharedSpanContext: false } });
  const after = topology.render(topology.web1, { MeshTrace: [zipkin] });

  it('traces every HTTP listener as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-trace.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('reports to Zipkin with the sampling and tags given, through a TLS cluster for an https URL', () => {
    expect(tracingOf(after, 'inbound:10.0.0.1:8080')).toEqual({
      overallSampling: { value: 80 },
      clientSampling: { value: 12.5 },
      randomSampling: { value: 50 },
      customTags: [
        { tag: 'team', literal: { value: 'core' } },
        { tag: 'user', requestHeader: { name: 'x-user', defaultValue: 'anonymous' } },
      ],
      provider: {
        name: 'envoy.tracers.zipkin',
        typedConfig: {
          '@type': 'type.googleapis.com/envoy.config.trace.v3.ZipkinConfig',
          collectorCluster: 'meshtrace:zipkin',
          collectorEndpoint: '/api/v2/spans',
          collectorEndpointVersion: 'HTTP_PROTO',
          collectorHostname: 'zipkin.local:9411',
          traceId128bit: true,
          sharedSpanContext: false,
        },
      },
    });
    expect(tracingOf(after, 'inbound:10.0.0.1:8100')).toBeUndefined();
    expect(after.clusters.find((cluster) => cluster.name === 'meshtrace:zipkin')).toMatchObject({ type: 'STRICT_DNS', transportSocketMatches: [{ name: 'zipkin.local' }] });
  });

  it('names Datadog services by direction and destination when told to split them', () => {
    const config = topology.render(topology.web1, { MeshTrace: [trace({ type: 'Datadog', datadog: { url: 'http://datadog-agent:8126', splitService: true } })] });
    const serviceName = (name: string) => ((tracingOf(config, name) as JsonObject).provider as JsonObject).typedConfig;
    expect(serviceName('inbound:10.0.0.1:8080')).toMatchObject({ collectorCluster: 'meshtrace:datadog', serviceName: 'web_INBOUND' });
    expect(serviceName('outbound:127.0.0.1:10001')).toMatchObject({ serviceName: 'web_OUTBOUND_backend' });
    expectEnvoyAccepts(config);
  });

  it('sends OpenTelemetry spans over gRPC to the collector', () => {
    const config = topology.render(topology.web1, { MeshTrace: [trace({ type: 'OpenTelemetry', openTelemetry: { endpoint: 'otel-collector:4317' } })] });
    expect(((tracingOf(config, 'outbound:127.0.0.1:10001') as JsonObject).provider as JsonObject).typedConfig).toEqual({
      '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig',
      grpcService: { envoyGrpc: { clusterName: 'meshtrace:opentelemetry' } },
      serviceName: 'web',
    });
    expect(config.clusters.find((cluster) => cluster.name === 'meshtrace:opentelemetry')).toMatchObject({ typedExtensionProtocolOptions: expect.any(Object) });
    expectEnvoyAccepts(config);
  });
});

// MeshAccessLog: access logs of inbounds, outbounds and the transparent proxy's pass-through.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const logs = targetRefPolicy('MeshAccessLog', 'logs', {
  targetRef: { kind: 'Mesh' },
  from: [{ targetRef: { kind: 'Mesh' }, default: { backends: [{ type: 'File', file: { path: '/var/log/in.log' } }] } }],
  to: [
    { targetRef: { kind: 'Mesh' }, default: { backends: [{ type: 'Tcp', tcp: { address: 'logstash:5000', format: { type: 'Json', json: [{ key: 'from', value: '%KUMA_SOURCE_SERVICE%' }, { key: 'to', value: '%KUMA_DESTINATION_SERVICE%' }] } } }] } },
    {
      targetRef: { kind: 'MeshService', name: 'backend' },
      default: {
        backends: [
          {
            type: 'OpenTelemetry',
            openTelemetry: {
              endpoint: 'otel-collector:4317',
              body: { kvlistValue: { values: [{ key: 'mesh', value: { stringValue: '%KUMA_MESH%' } }] } },
              attributes: [{ key: 'source', value: '%KUMA_SOURCE_SERVICE%' }],
            },
          },
          { type: 'OpenTelemetry', openTelemetry: { endpoint: 'otel-collector' } },
        ],
      },
    },
    { targetRef: { kind: 'MeshService', name: 'redis' }, default: { backends: [{ type: 'File', file: { path: '/var/log/redis.log', format: { type: 'Plain', plain: '%START_TIME% %KUMA_MESH% %UPSTREAM_HOST%', omitEmptyValues: true } } }] } },
    { targetRef: { kind: 'MeshService', name: 'other-backend' }, default: { backends: [] } },
  ],
});

const accessLogsOf = (config: ProxyConfig, name: string): JsonObject[] => {
  const listener = config.listeners.find((candidate) => candidate.name === name) as Listener;
  const filter = ((listener.filterChains as JsonObject[])[0]?.filters as JsonObject[]).at(-1) as JsonObject;
  return ((filter.typedConfig as JsonObject).accessLog as JsonObject[]) ?? [];
};

describe('MeshAccessLog', () => {
  const topology = targetRefTopology('STRICT');
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshAccessLog: [logs] });

  it('adds access logs as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-access-log.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('logs inbound traffic to a file, and outbound traffic to the backends of its destination', () => {
    expect(accessLogsOf(after, 'inbound:10.0.0.1:8080')).toEqual([
      {
        name: 'envoy.access_loggers.file',
        typedConfig: expect.objectContaining({ path: '/var/log/in.log', logFormat: { textFormatSource: { inlineString: expect.stringMatching(/^\[%START_TIME%\] default "%REQ\(:METHOD\)%.*"unknown" "web" "10\.0\.0\.1" "%UPSTREAM_HOST%"\n$/) } } }),
      },
    ]);
    // The TCP backend sends JSON records through the agent's socket.
    expect(accessLogsOf(after, 'outbound:127.0.0.1:10002')).toEqual([
      expect.objectContaining({ typedConfig: expect.objectContaining({ path: '/var/log/redis.log', logFormat: { textFormatSource: { inlineString: '%START_TIME% default %UPSTREAM_HOST%\n' }, omitEmptyValues: true } }) }),
    ]);
    expect(accessLogsOf(after, 'outbound:127.0.0.1:10003')).toEqual([
      expect.objectContaining({ typedConfig: expect.objectContaining({ path: '/tmp/mesh-al-web-1-default.sock', logFormat: { jsonFormat: { address: 'logstash:5000', message: { from: 'web', to: 'grpc-api' } } } }) }),
    ]);
    expect(accessLogsOf(after, 'outbound:127.0.0.1:10005')).toEqual([]);
  });

  it('sends OpenTelemetry records through a cluster per collector', () => {
    const [first, second] = accessLogsOf(after, 'outbound:127.0.0.1:10001');
    expect(first?.typedConfig).toMatchObject({
      commonConfig: { logName: 'MeshAccessLog', grpcService: { envoyGrpc: { clusterName: 'meshaccesslog:opentelemetry:0' } }, transportApiVersion: 'V3' },
      body: { kvlistValue: { values: [{ key: 'mesh', value: { stringValue: 'default' } }] } },
      attributes: { values: [{ key: 'source', value: { stringValue: '%KUMA_SOURCE_SERVICE%' } }] },
    });
    expect(second?.typedConfig).toMatchObject({ commonConfig: { grpcService: { envoyGrpc: { clusterName: 'meshaccesslog:opentelemetry:0' } } }, body: { stringValue: expect.stringContaining('"web" "backend"') } });
    expect(after.clusters.filter((cluster) => cluster.name.startsWith('meshaccesslog:'))).toEqual([
      expect.objectContaining({ name: 'meshaccesslog:opentelemetry:0', type: 'STRICT_DNS', connectTimeout: '10s', altStatName: 'meshaccesslog_opentelemetry_0' }),
    ]);
  });

  it("logs the transparent proxy's traffic leaving the mesh as the service pass_through", () => {
    const passThrough = targetRefPolicy('MeshAccessLog', 'external', {
      targetRef: { kind: 'Mesh' },
      to: [{ targetRef: { kind: 'MeshService', name: 'pass_through' }, default: { backends: [{ type: 'File', file: { path: '/var/log/external.log' } }] } }],
    });
    const config = topology.render(topology.transparent, { MeshAccessLog: [passThrough] });
    expect(accessLogsOf(config, 'outbound:passthrough:ipv4')).toEqual([expect.objectContaining({ typedConfig: expect.objectContaining({ path: '/var/log/external.log' }) })]);
    expect(accessLogsOf(config, 'outbound:127.0.0.1:10001')).toEqual([]);
    expectEnvoyAccepts(config);
  });
});

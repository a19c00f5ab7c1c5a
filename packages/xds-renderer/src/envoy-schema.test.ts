// Every rendered resource, checked against Envoy's .proto definitions.
import { describe, expect, it } from 'vitest';
import { renderDataplaneConfigDump, renderZoneEgressConfigDump, renderZoneIngressConfigDump } from './config-dump.js';
import { scalarText, type TypedObject } from './envoy.js';
import { renderProxyConfig, type ProxyConfig } from './proxy.js';
import { envoySchemaErrors } from './testing/envoy-schema.js';
import { fullTopology, type MtlsMode, specExample } from './testing/topologies.js';
import { renderZoneEgressConfig, renderZoneIngressConfig } from './zone-proxies.js';

const allResources = (config: ProxyConfig): TypedObject[] => [...config.listeners, ...config.clusters, ...config.endpoints, ...config.secrets];

function expectAccepted(resources: readonly TypedObject[]): void {
  const problems = resources.flatMap((resource) => envoySchemaErrors(resource).map((error) => `${scalarText(resource.name ?? resource.clusterName ?? resource['@type'])}: ${error}`));
  expect(problems).toEqual([]);
}

describe('rendered resources decode with the real Envoy message definitions', () => {
  it('the complete example of web and backend', () => {
    const { context, web1 } = specExample();
    expectAccepted(allResources(renderProxyConfig({ context, dataplane: web1 })));
  });

  for (const mtls of ['off', 'STRICT', 'PERMISSIVE'] as MtlsMode[]) {
    for (const zoneEgress of mtls === 'off' ? [false] : [false, true]) {
      it(`every policy family, mTLS ${mtls}${zoneEgress ? ', through zone egress' : ''}`, () => {
        const topology = fullTopology(mtls, { zoneEgress });
        for (const dataplane of [topology.web1, topology.backend1, topology.transparent]) {
          const config = renderProxyConfig({ context: topology.context, dataplane, metadata: topology.metadata });
          expectAccepted(allResources(config));
          expectAccepted(renderDataplaneConfigDump(dataplane, config, { versions: { listeners: 'v1', clusters: 'v1' }, lastUpdated: { bootstrap: '2023-11-20T09:59:00.000Z', listeners: '2023-11-20T10:00:00.000Z', clusters: '2023-11-20T10:00:00.000Z' }, nodeMetadata: { version: { envoy: { version: '1.28.0' } } } }).configs);
        }
      });
    }
  }

  it('zone ingress and zone egress', () => {
    const { context, metadata } = fullTopology('STRICT');
    const ingress = { name: 'ingress-1', spec: { zone: 'west', networking: { address: '10.2.0.1', port: 10001 }, availableServices: [{ tags: { 'mesh.io/service': 'backend', version: 'v1' }, instances: 1, mesh: 'default' }] } } as const;
    const ingressConfig = renderZoneIngressConfig(ingress as never, [context]);
    expect(ingressConfig.listeners).toHaveLength(1);
    expectAccepted(allResources(ingressConfig));
    expectAccepted(renderZoneIngressConfigDump(ingress as never, ingressConfig).configs);
    const egress = { name: 'egress-1', spec: { networking: { address: '10.0.1.1', port: 10002 } } };
    const identities = new Map([['default', metadata.identity!]]);
    const egressConfig = renderZoneEgressConfig(egress as never, [context], { identities });
    expect(egressConfig.listeners).toHaveLength(1);
    expectAccepted(allResources(egressConfig));
    expectAccepted(renderZoneEgressConfigDump(egress as never, egressConfig).configs);
  });
});

describe('the schema check itself', () => {
  const cluster = { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'c', connectTimeout: '1s' };
  it('accepts a valid resource', () => expect(envoySchemaErrors(cluster)).toEqual([]));
  it('rejects unknown fields, also inside an Any', () => {
    expect(envoySchemaErrors({ ...cluster, conectTimeout: '1s' })).toEqual([expect.stringContaining('conectTimeout: unknown field')]);
    const options = { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicitHttpConfig: { httpProtocolOptions: {} }, bogus: 1 } };
    expect(envoySchemaErrors({ ...cluster, typedExtensionProtocolOptions: options })).toEqual([expect.stringContaining('bogus: unknown field')]);
  });
  it('rejects wrong JSON types, enum names and durations', () => {
    expect(envoySchemaErrors({ ...cluster, connectTimeout: 5 })).toHaveLength(1);
    expect(envoySchemaErrors({ ...cluster, lbPolicy: 'FASTEST' })).toHaveLength(1);
    expect(envoySchemaErrors({ ...cluster, name: 7 })).toHaveLength(1);
    expect(envoySchemaErrors({ ...cluster, perConnectionBufferLimitBytes: -1 })).toHaveLength(1);
  });
  it('rejects two members of a oneof, missing required fields and unknown types', () => {
    expect(envoySchemaErrors({ ...cluster, type: 'EDS', clusterType: { name: 'x' } })).toEqual([expect.stringContaining('oneof')]);
    expect(envoySchemaErrors({ '@type': 'type.googleapis.com/envoy.config.listener.v3.Listener', name: 'l', address: { socketAddress: { address: '1.2.3.4' } } })).toEqual([expect.stringContaining('one of port_value, named_port is required')]);
    expect(envoySchemaErrors({ '@type': 'type.googleapis.com/envoy.config.cluster.v3.Nope' })).toEqual([expect.stringContaining('unknown message type')]);
  });
});

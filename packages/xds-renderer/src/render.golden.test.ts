// Snapshot (golden) tests of rendered resources. `UPDATE_GOLDEN=1` rewrites the files in
// src/testdata/ after a deliberate change; review the diff.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderDataplaneConfigDump, renderZoneEgressConfigDump, renderZoneIngressConfigDump } from './config-dump.js';
import { renderProxyConfig } from './proxy.js';
import { zoneEgress, zoneIngress } from './test-fixtures.js';
import { fullTopology, specExample } from './testing/topologies.js';
import { renderZoneEgressConfig, renderZoneIngressConfig } from './zone-proxies.js';

const testdata = (file: string): URL => new URL(`./testdata/${file}`, import.meta.url);

function expectGolden(file: string, actual: unknown): void {
  const json = `${JSON.stringify(actual, null, 1)}\n`;
  if (process.env.UPDATE_GOLDEN) writeFileSync(testdata(file), json);
  expect(JSON.parse(json)).toEqual(JSON.parse(readFileSync(testdata(file), 'utf8')));
}

describe('the complete example: web-1 calling backend through a 90/10 split', () => {
  const { context, web1 } = specExample();
  const config = renderProxyConfig({ context, dataplane: web1 });
  const emitted = JSON.parse(readFileSync(testdata('spec-4.7-emitted.json'), 'utf8')) as Record<string, Array<{ name?: string; clusterName?: string }>>;

  it('emits the resources the spec lists (the admin cluster and listener aside)', () => {
    const withoutAdmin = <T extends { name: string }>(resources: readonly T[]) => resources.filter((resource) => resource.name !== 'mesh:envoy:admin');
    const v1Cluster = emitted.clusters?.[0];
    // The spec shows one of the two split clusters in full: the other differs by its name only.
    const clusters = [v1Cluster, { ...v1Cluster, name: 'backend-a10be8a87b9201bd' }, emitted.clusters?.[1]];
    expect(JSON.parse(JSON.stringify(withoutAdmin(config.clusters)))).toEqual(clusters);
    expect(JSON.parse(JSON.stringify(config.endpoints))).toEqual(emitted.endpoints);
    expect(JSON.parse(JSON.stringify(withoutAdmin(config.listeners)))).toEqual(emitted.listeners);
  });

  it('matches its golden file, with the admin resources and the /xds dump', () => {
    expectGolden('spec-example.golden.json', config);
    expectGolden('spec-example.xds.golden.json', renderDataplaneConfigDump(web1, config, { versions: { listeners: 'lds-1', clusters: 'cds-1', endpoints: 'eds-1' } }));
  });
});

describe('every policy family', () => {
  it('STRICT mTLS: web-1 and a transparent proxy', () => {
    const topology = fullTopology('STRICT');
    expectGolden('full-strict-web-1.golden.json', renderProxyConfig({ context: topology.context, dataplane: topology.web1, metadata: topology.metadata }));
    expectGolden('full-strict-tp-1.golden.json', renderProxyConfig({ context: topology.context, dataplane: topology.transparent }));
  });

  it('PERMISSIVE mTLS, external services through a zone egress', () => {
    const topology = fullTopology('PERMISSIVE', { zoneEgress: true });
    expectGolden('full-permissive-egress-web-1.golden.json', renderProxyConfig({ context: topology.context, dataplane: topology.web1 }));
  });

  it('without mTLS', () => {
    const topology = fullTopology('off');
    expectGolden('full-plain-web-1.golden.json', renderProxyConfig({ context: topology.context, dataplane: topology.web1, metadata: topology.metadata }));
  });
});

describe('zone proxies', () => {
  const { context, metadata } = fullTopology('STRICT');

  it('zone ingress', () => {
    const ingress = zoneIngress('ingress-1', {
      zone: 'west',
      networking: { address: '10.2.0.1', port: 10001, advertisedAddress: '198.51.100.1', advertisedPort: 10001 },
      availableServices: [
        { tags: { 'mesh.io/service': 'backend', version: 'v1' }, instances: 1, mesh: 'default' },
        { tags: { 'mesh.io/service': 'redis' }, instances: 1, mesh: 'default' },
      ],
    });
    const config = renderZoneIngressConfig(ingress, [context]);
    expectGolden('zone-ingress.golden.json', config);
    expectGolden('zone-ingress.xds.golden.json', renderZoneIngressConfigDump(ingress, config));
  });

  it('zone egress', () => {
    const egress = zoneEgress('egress-1', { networking: { address: '10.0.1.1', port: 10002 } });
    const identities = new Map([['default', metadata.identity ?? { certificatePem: '', privateKeyPem: '', caPem: '' }]]);
    const config = renderZoneEgressConfig(egress, [context], { identities });
    expectGolden('zone-egress.golden.json', config);
    expectGolden('zone-egress.xds.golden.json', renderZoneEgressConfigDump(egress, config));
  });
});

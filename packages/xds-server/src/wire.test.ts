import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { decodeMessage, envoyRoot } from './envoy-protos.js';
import {
  decodeDeltaDiscoveryRequest,
  decodeDiscoveryRequest,
  encodeDeltaDiscoveryResponse,
  encodeDiscoveryResponse,
  encodeResource,
  encodingCacheBytes,
  TYPE_URLS,
  versionOf,
  WireFormatError,
  writeDeltaDiscoveryResponse,
  writeDiscoveryResponse,
} from './wire.js';

const LISTENER = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const CLUSTER = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/** A listener as the renderer writes one: a Struct in its metadata, an Any holding a message with durations. */
const listener = {
  '@type': LISTENER,
  name: 'outbound:127.0.0.1:10001',
  address: { socketAddress: { address: '127.0.0.1', portValue: 10001 } },
  trafficDirection: 'OUTBOUND',
  metadata: { filterMetadata: { 'io.mesh.tags': { 'mesh.io/service': 'backend', weight: 3, on: true, list: ['a'] } } },
  filterChains: [
    {
      filters: [
        {
          name: 'envoy.filters.network.http_connection_manager',
          typedConfig: {
            '@type': HCM,
            statPrefix: 'backend',
            streamIdleTimeout: '1800.5s',
            routeConfig: { name: 'outbound:backend', virtualHosts: [{ name: 'backend', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' } }] }] },
          },
        },
      ],
    },
  ],
};

const anyOf = (any: Buffer) => decodeMessage('google.protobuf.Any', any) as { type_url: string; value: Uint8Array };

describe('resources on the wire', () => {
  it("encodes a rendered resource so Envoy's own messages decode it back, nested Anys, Structs and durations included", () => {
    const encoded = encodeResource(listener.name, listener);
    const any = anyOf(encoded.any);
    expect(any.type_url).toBe(LISTENER);
    const decoded = decodeMessage('envoy.config.listener.v3.Listener', any.value) as Record<string, any>;
    expect(decoded.name).toBe('outbound:127.0.0.1:10001');
    expect(decoded.traffic_direction).toBe('OUTBOUND');
    expect(decoded.metadata.filter_metadata['io.mesh.tags'].fields).toEqual({
      'mesh.io/service': { stringValue: 'backend' },
      weight: { numberValue: 3 },
      on: { boolValue: true },
      list: { listValue: { values: [{ stringValue: 'a' }] } },
    });
    const typed = decoded.filter_chains[0].filters[0].typed_config as { type_url: string; value: Uint8Array };
    expect(typed.type_url).toBe(HCM);
    const hcm = decodeMessage('envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager', typed.value) as Record<string, any>;
    expect(hcm.stream_idle_timeout).toEqual({ seconds: '1800', nanos: 500_000_000 });
    expect(hcm.route_config.virtual_hosts[0].routes[0].route.cluster).toBe('backend');
  });

  it('encodes wrapped scalars and 64-bit integers, and refuses a field the message does not have', () => {
    const cluster = {
      '@type': CLUSTER,
      name: 'backend',
      type: 'EDS',
      connectTimeout: '5s',
      circuitBreakers: { thresholds: [{ maxConnections: 1024 }] },
      edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } },
    };
    const decoded = decodeMessage('envoy.config.cluster.v3.Cluster', anyOf(encodeResource('backend', cluster).any).value) as Record<string, any>;
    expect(decoded.circuit_breakers.thresholds[0].max_connections).toEqual({ value: 1024 });
    expect(decoded.connect_timeout).toMatchObject({ seconds: '5' });
    expect(decoded.eds_cluster_config.eds_config.resource_api_version).toBe('V3');
    expect(() => encodeResource('bad', { '@type': CLUSTER, name: 'bad', nonsense: 1 })).toThrow(/nonsense: unknown field of \.envoy\.config\.cluster\.v3\.Cluster/);
  });

  it('encodes equal resources once, and versions resources by content', () => {
    const cluster = { '@type': CLUSTER, name: 'a', connectTimeout: '1s' };
    const same = encodeResource('a', { ...cluster });
    // Another proxy's equal cluster: the same encoding, the same version.
    expect(encodeResource('a', cluster)).toBe(same);
    expect(versionOf([same])).toBe(versionOf([encodeResource('a', cluster)]));
    expect(encodeResource('b', { ...cluster, name: 'b' }).digest).not.toBe(same.digest);
    expect(versionOf([encodeResource('a', { ...cluster, connectTimeout: '2s' })])).not.toBe(versionOf([same]));
    expect(versionOf([])).not.toBe(versionOf([same]));
  });

  it('keeps the encodings of resources of different types apart, even when their bytes are the same', () => {
    // A cluster and an endpoint assignment naming only `x` are the same message bytes (field 1, `x`).
    const cluster = encodeResource('x', { '@type': CLUSTER, name: 'x' });
    const assignment = encodeResource('x', { '@type': TYPE_URLS.endpoints, clusterName: 'x' });
    expect(assignment).not.toBe(cluster);
    expect(decodeMessage('google.protobuf.Any', assignment.any)).toMatchObject({ type_url: TYPE_URLS.endpoints });
    expect(decodeMessage('google.protobuf.Any', cluster.any)).toMatchObject({ type_url: CLUSTER });
  });

  it('finds an encoding by content only while something holds it', async () => {
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    const cluster = () => ({ '@type': CLUSTER, name: 'held', connectTimeout: '3s', lbPolicy: 'RANDOM' });
    // The only reference to the encoding, dropped below so that the collector may reclaim it.
    const holder: { encoding?: object } = {};
    holder.encoding = encodeResource('held', cluster());
    const released = new WeakRef(holder.encoding);
    expect(encodeResource('held', cluster())).toBe(holder.encoding);
    const holding = encodingCacheBytes();
    delete holder.encoding;
    // Weak references hold until the current job ends; finalizers run in a later task.
    for (let round = 0; round < 10 && released.deref() !== undefined; round++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      collectGarbage();
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(released.deref()).toBeUndefined();
    expect(encodingCacheBytes()).toBeLessThan(holding);
  });

  it('assembles discovery responses Envoy decodes', () => {
    const resource = encodeResource(listener.name, listener);
    const response = decodeMessage(
      'envoy.service.discovery.v3.DiscoveryResponse',
      encodeDiscoveryResponse({ versionInfo: 'v1', resources: [resource, resource], typeUrl: LISTENER, nonce: '7' }),
    ) as Record<string, any>;
    expect(response).toMatchObject({ version_info: 'v1', type_url: LISTENER, nonce: '7' });
    expect(response.resources).toHaveLength(2);
    expect(response.resources[1].type_url).toBe(LISTENER);
  });

  it('writes a response into the room it is given only when it fits, and says how much it takes', () => {
    const small = encodeResource(listener.name, listener);
    const response = { versionInfo: 'v1', resources: [small, small], typeUrl: LISTENER, nonce: '1' };
    const whole = encodeDiscoveryResponse(response);
    const room = Buffer.alloc(whole.length + 10, 0xee);
    expect(writeDiscoveryResponse(response, room.subarray(0, whole.length - 1))).toBe(whole.length);
    expect(room.every((byte) => byte === 0xee)).toBe(true);
    expect(writeDiscoveryResponse(response, room.subarray(5))).toBe(whole.length);
    expect(Buffer.compare(room.subarray(5, 5 + whole.length), whole)).toBe(0);
    expect(room[5 + whole.length]).toBe(0xee);
    expect(decodeMessage('envoy.service.discovery.v3.DiscoveryResponse', whole)).toMatchObject({ version_info: 'v1', nonce: '1', type_url: LISTENER });
  });
});

describe('incremental discovery messages', () => {
  it('reads the requests protobufjs reads', () => {
    const type = envoyRoot().lookupType('envoy.service.discovery.v3.DeltaDiscoveryRequest');
    const bytes = Buffer.from(
      type
        .encode(
          type.fromObject({
            node: { id: 'default.web-1', user_agent_name: 'envoy' },
            type_url: CLUSTER,
            resource_names_subscribe: ['a', 'b'],
            resource_names_unsubscribe: ['c'],
            initial_resource_versions: { a: 'v1', b: 'v2' },
            response_nonce: '4',
            error_detail: { code: 3, message: 'bad' },
          }),
        )
        .finish(),
    );
    const read = decodeDeltaDiscoveryRequest(bytes);
    expect(read).toMatchObject({ node_id: 'default.web-1', type_url: CLUSTER, resource_names_subscribe: ['a', 'b'], resource_names_unsubscribe: ['c'], response_nonce: '4' });
    expect(read.error_detail).toEqual({ code: 3, message: 'bad' });
    expect([...read.initial_resource_versions]).toEqual([
      ['a', 'v1'],
      ['b', 'v2'],
    ]);
    expect(read.node).toEqual(decodeMessage('envoy.service.discovery.v3.DeltaDiscoveryRequest', bytes).node);
    expect(() => decodeDeltaDiscoveryRequest(bytes.subarray(0, bytes.length - 2))).toThrow(WireFormatError);
  });

  it('writes responses Envoy decodes, removed names and versions included', () => {
    const resource = encodeResource(listener.name, listener);
    const response = { systemVersionInfo: 'v9', resources: [{ version: 'r1', resource }], removed: ['gone', 'also-gone'], typeUrl: LISTENER, nonce: '12' };
    const bytes = encodeDeltaDiscoveryResponse(response);
    const room = Buffer.alloc(bytes.length + 3);
    expect(writeDeltaDiscoveryResponse(response, room.subarray(3))).toBe(bytes.length);
    expect(Buffer.compare(room.subarray(3), bytes)).toBe(0);
    const read = decodeMessage('envoy.service.discovery.v3.DeltaDiscoveryResponse', Buffer.from(bytes)) as Record<string, any>;
    expect(read).toMatchObject({ system_version_info: 'v9', type_url: LISTENER, nonce: '12', removed_resources: ['gone', 'also-gone'] });
    expect(read.resources).toHaveLength(1);
    expect(read.resources[0]).toMatchObject({ name: listener.name, version: 'r1', resource: { type_url: LISTENER } });
    expect(Buffer.compare(Buffer.from(read.resources[0].resource.value), anyOf(resource.any).value as Buffer)).toBe(0);
    const empty = decodeMessage('envoy.service.discovery.v3.DeltaDiscoveryResponse', encodeDeltaDiscoveryResponse({ ...response, systemVersionInfo: '', resources: [], removed: [] }));
    expect(empty).toMatchObject({ type_url: LISTENER, nonce: '12' });
  });
});

describe('discovery requests off the wire', () => {
  const requestType = () => envoyRoot().lookupType('envoy.service.discovery.v3.DiscoveryRequest');
  const encode = (request: Record<string, unknown>) => Buffer.from(requestType().encode(requestType().fromObject(request)).finish());

  it('reads what protobufjs reads, the node decoded when asked for', () => {
    const node = {
      id: 'default.web-1',
      cluster: 'web',
      metadata: { fields: { dataplane: { stringValue: '{"type":"Dataplane"}' }, adminPort: { numberValue: 9901 } } },
      user_agent_name: 'envoy',
    };
    const bytes = encode({
      version_info: 'v1',
      node,
      resource_names: ['b', 'a', 'b'],
      type_url: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
      response_nonce: '7',
      error_detail: { code: -3, message: 'rejected: bad cluster' },
      resource_locators: [{ name: 'ignored' }],
    });
    const read = decodeDiscoveryRequest(bytes);
    const expected = decodeMessage('envoy.service.discovery.v3.DiscoveryRequest', bytes);
    expect({
      version_info: read.version_info,
      resource_names: read.resource_names,
      type_url: read.type_url,
      response_nonce: read.response_nonce,
      error_detail: read.error_detail,
    }).toEqual({
      version_info: expected.version_info,
      resource_names: expected.resource_names,
      type_url: expected.type_url,
      response_nonce: expected.response_nonce,
      error_detail: { code: -3, message: 'rejected: bad cluster' },
    });
    expect(read.node_id).toBe('default.web-1');
    expect(read.node).toEqual(expected.node);
  });

  it('leaves out what the request does not carry', () => {
    const read = decodeDiscoveryRequest(encode({ type_url: 'type.googleapis.com/envoy.config.cluster.v3.Cluster' }));
    expect([read.node_id, read.node, read.version_info, read.response_nonce, read.error_detail, read.resource_names]).toEqual([undefined, undefined, undefined, undefined, undefined, []]);
  });

  it('refuses a message cut short', () => {
    const bytes = encode({ version_info: 'v1', type_url: 'type.googleapis.com/envoy.config.cluster.v3.Cluster' });
    expect(() => decodeDiscoveryRequest(bytes.subarray(0, bytes.length - 3))).toThrow(WireFormatError);
    expect(() => decodeDiscoveryRequest(Buffer.from([0x0a, 0xff]))).toThrow(WireFormatError);
  });
});

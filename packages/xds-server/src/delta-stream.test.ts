import { describe, expect, it } from 'vitest';
import type { ProxyConfig } from '@mesh/xds-renderer';
import { type DeltaDiscoveryRequest, DeltaTypeStates } from './delta-stream.js';
import { decodeMessage } from './envoy-protos.js';
import { type Snapshot, snapshotOf, TYPE_URLS } from './snapshot.js';
import { encodeDeltaDiscoveryResponse } from './wire.js';

const cluster = (name: string, timeout = '1s') => ({ '@type': TYPE_URLS.cluster, name, type: 'EDS', connectTimeout: timeout, edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } } });
const endpoints = (clusterName: string, port: number) => ({
  '@type': TYPE_URLS.endpoints,
  clusterName,
  endpoints: [{ lbEndpoints: [{ endpoint: { address: { socketAddress: { address: '10.0.0.1', portValue: port } } } }] }],
});
const listener = (name: string) => ({ '@type': TYPE_URLS.listener, name, address: { socketAddress: { address: '127.0.0.1', portValue: 10001 } } });
const config = (parts: Partial<ProxyConfig>): Snapshot => snapshotOf({ listeners: [], clusters: [], endpoints: [], routes: [], secrets: [], ...parts });

interface Sent {
  typeUrl: string;
  nonce: string;
  /** Names and versions of the resources carried. */
  resources: Array<[string, string]>;
  removed: string[];
}

/** The stream's states with what it writes decoded (as Envoy reads it), a clock and the answers recorded. */
function stream(nackBackoffMs = 0) {
  const sent: Sent[] = [];
  const answered: Array<{ typeUrl: string; rejected: boolean }> = [];
  let now = 1_000_000;
  const states = new DeltaTypeStates(
    (written) => {
      const response = decodeMessage('envoy.service.discovery.v3.DeltaDiscoveryResponse', encodeDeltaDiscoveryResponse(written)) as {
        type_url: string;
        nonce: string;
        resources?: Array<{ name: string; version: string; resource: { type_url: string } }>;
        removed_resources?: string[];
      };
      for (const resource of response.resources ?? []) expect(resource.resource.type_url).toBe(response.type_url);
      sent.push({
        typeUrl: response.type_url,
        nonce: response.nonce,
        resources: (response.resources ?? []).map((resource) => [resource.name, resource.version]),
        removed: response.removed_resources ?? [],
      });
    },
    { responseSent: () => {}, responseAnswered: (typeUrl, rejected) => answered.push({ typeUrl, rejected }) },
    nackBackoffMs,
    () => new Date(now),
  );
  const request = (typeUrl: string, fields: Omit<DeltaDiscoveryRequest, 'type_url'> = {}) => states.takeRequest({ type_url: typeUrl, ...fields });
  const ack = (typeUrl: string) => request(typeUrl, { response_nonce: sent.filter((response) => response.typeUrl === typeUrl).at(-1)!.nonce });
  return { states, sent, answered, request, ack, tick: (ms: number) => (now += ms) };
}

const names = (response: Sent | undefined) => response?.resources.map(([name]) => name);

describe('one incremental ADS stream', () => {
  it('sends all clusters to a wildcard subscription, then only what changed and the names of those gone', () => {
    const { states, sent, answered, request, ack } = stream();
    request(TYPE_URLS.cluster);
    states.respond(config({ clusters: [cluster('a'), cluster('b')] }));
    expect(names(sent[0])).toEqual(['a', 'b']);

    // Unanswered: a change waits for the ACK.
    const changed = config({ clusters: [cluster('a', '2s'), cluster('b')] });
    states.respond(changed);
    expect(sent).toHaveLength(1);
    ack(TYPE_URLS.cluster);
    states.respond(changed);
    expect(names(sent[1])).toEqual(['a']);
    expect(sent[1]!.resources[0]![1]).not.toBe(sent[0]!.resources[0]![1]);

    ack(TYPE_URLS.cluster);
    states.respond(config({ clusters: [cluster('a', '2s')] }));
    expect(sent[2]).toMatchObject({ resources: [], removed: ['b'] });
    ack(TYPE_URLS.cluster);
    states.respond(config({ clusters: [cluster('a', '2s')] }));
    expect(sent).toHaveLength(3);
    expect(answered).toEqual(Array.from({ length: 3 }, () => ({ typeUrl: TYPE_URLS.cluster, rejected: false })));
  });

  it('sends endpoints by subscription, forgets what is unsubscribed, and resends an assignment whose cluster changed', () => {
    const { states, sent, request, ack } = stream();
    const snapshot = config({ clusters: [cluster('a'), cluster('b')], endpoints: [endpoints('a', 1), endpoints('b', 2)] });
    request(TYPE_URLS.endpoints, { resource_names_subscribe: ['a'] });
    states.respond(snapshot);
    expect(names(sent[0])).toEqual(['a']);
    ack(TYPE_URLS.endpoints);
    request(TYPE_URLS.endpoints, { resource_names_subscribe: ['b'] });
    states.respond(snapshot);
    expect(names(sent[1])).toEqual(['b']);
    ack(TYPE_URLS.endpoints);

    // Cluster a changed, its endpoints did not: they go again so the cluster leaves warming.
    states.respond(config({ clusters: [cluster('a', '9s'), cluster('b')], endpoints: [endpoints('a', 1), endpoints('b', 2)] }));
    expect(names(sent[2])).toEqual(['a']);
    ack(TYPE_URLS.endpoints);

    request(TYPE_URLS.endpoints, { resource_names_unsubscribe: ['b'] });
    states.respond(snapshot);
    // Back to the first clusters: a's version moves back; b is no longer subscribed to.
    expect(names(sent[3])).toEqual(['a']);
    ack(TYPE_URLS.endpoints);
    request(TYPE_URLS.endpoints, { resource_names_subscribe: ['b'] });
    states.respond(snapshot);
    expect(names(sent[4])).toEqual(['b']);
  });

  it('leaves out what the proxy already holds when it reconnects, answering its subscription all the same', () => {
    const first = stream();
    const snapshot = config({ clusters: [cluster('a'), cluster('b')] });
    first.request(TYPE_URLS.cluster);
    first.states.respond(snapshot);
    const [a, b] = first.sent[0]!.resources;

    const { states, sent, request } = stream();
    request(TYPE_URLS.cluster, { initial_resource_versions: new Map([a!, [b![0], 'old']]) });
    states.respond(snapshot);
    expect(sent[0]!.resources).toEqual([b]);

    const again = stream();
    again.request(TYPE_URLS.cluster, { initial_resource_versions: new Map([a!, b!]) });
    again.states.respond(snapshot);
    expect(again.sent).toEqual([{ typeUrl: TYPE_URLS.cluster, nonce: '1', resources: [], removed: [] }]);
  });

  it('counts a NACK, keeps the proxy at what it accepted, never sends the rejected version again, and sends the next change after the back-off', () => {
    const { states, sent, answered, request, ack, tick } = stream(5000);
    request(TYPE_URLS.cluster);
    states.respond(config({ clusters: [cluster('a')] }));
    ack(TYPE_URLS.cluster);
    const bad = config({ clusters: [cluster('a', '3s')] });
    states.respond(bad);
    request(TYPE_URLS.cluster, { response_nonce: sent[1]!.nonce, error_detail: { code: 3, message: 'no' } });
    expect(answered.at(-1)).toEqual({ typeUrl: TYPE_URLS.cluster, rejected: true });
    tick(10_000);
    states.respond(bad);
    expect(sent).toHaveLength(2);
    const fixed = config({ clusters: [cluster('a', '4s')] });
    tick(-9_000);
    states.respond(fixed);
    expect(sent).toHaveLength(2);
    tick(9_000);
    states.respond(fixed);
    expect(names(sent[2])).toEqual(['a']);
    expect(new Set(sent.map((response) => response.resources[0]![1])).size).toBe(3);
    states.close();
  });

  it('takes a subscription change with a stale nonce, and answers only the outstanding response', () => {
    const { states, sent, answered, request } = stream();
    const snapshot = config({ clusters: [cluster('a'), cluster('b')], endpoints: [endpoints('a', 1), endpoints('b', 2)] });
    request(TYPE_URLS.endpoints, { resource_names_subscribe: ['a'] });
    states.respond(snapshot);
    request(TYPE_URLS.endpoints, { response_nonce: '99', resource_names_subscribe: ['b'] });
    expect(answered).toEqual([]);
    states.respond(snapshot);
    expect(sent).toHaveLength(1);
    request(TYPE_URLS.endpoints, { response_nonce: '1' });
    states.respond(snapshot);
    expect(names(sent[1])).toEqual(['b']);
  });

  it('holds listeners back while the clusters they need wait for an answer', () => {
    const { states, sent, request, ack } = stream();
    request(TYPE_URLS.cluster);
    request(TYPE_URLS.listener);
    states.respond(config({ clusters: [cluster('a')] }));
    expect(sent.map((response) => response.typeUrl)).toEqual([TYPE_URLS.cluster, TYPE_URLS.listener]);
    ack(TYPE_URLS.listener);
    const latest = config({ clusters: [cluster('a'), cluster('b')], listeners: [listener('l')] });
    states.respond(latest);
    expect(sent).toHaveLength(2);
    ack(TYPE_URLS.cluster);
    states.respond(latest);
    expect(sent.slice(2).map((response) => [response.typeUrl, names(response)])).toEqual([
      [TYPE_URLS.cluster, ['b']],
      [TYPE_URLS.listener, ['l']],
    ]);
    expect(states.sent().get(TYPE_URLS.cluster)?.names).toEqual(['a', 'b']);
  });

  it("answers a subscription to a new cluster's endpoints while the clusters wait for their answer", () => {
    // Envoy answers clusters once they are warm, and a new cluster warms with its endpoints.
    const { states, sent, request, ack } = stream();
    request(TYPE_URLS.cluster);
    request(TYPE_URLS.endpoints, { resource_names_subscribe: ['a'] });
    const first = config({ clusters: [cluster('a')], endpoints: [endpoints('a', 1)] });
    states.respond(first);
    ack(TYPE_URLS.cluster);
    ack(TYPE_URLS.endpoints);
    const split = config({ clusters: [cluster('b')], endpoints: [endpoints('b', 2)] });
    states.respond(split);
    expect(sent.slice(2).map((response) => [response.typeUrl, names(response), response.removed])).toEqual([
      [TYPE_URLS.cluster, ['b'], ['a']],
      [TYPE_URLS.endpoints, [], ['a']],
    ]);
    ack(TYPE_URLS.endpoints);
    request(TYPE_URLS.endpoints, { resource_names_subscribe: ['b'], resource_names_unsubscribe: ['a'] });
    states.respond(split);
    expect(sent.slice(4).map((response) => [response.typeUrl, names(response)])).toEqual([[TYPE_URLS.endpoints, ['b']]]);
  });

  it('takes the proxy back to what it held when it rejects a response', () => {
    const { states, sent, request, ack } = stream();
    request(TYPE_URLS.cluster);
    states.respond(config({ clusters: [cluster('a')] }));
    ack(TYPE_URLS.cluster);
    states.respond(config({ clusters: [cluster('a'), cluster('b', '2s')] }));
    request(TYPE_URLS.cluster, { response_nonce: sent[1]!.nonce, error_detail: { message: 'no' } });
    expect(states.sent().get(TYPE_URLS.cluster)?.names).toEqual(['a']);
    // b changes again: its new version goes.
    states.respond(config({ clusters: [cluster('a'), cluster('b', '3s')] }));
    expect(names(sent[2])).toEqual(['b']);
  });
});

import { describe, expect, it } from 'vitest';
import type { ProxyConfig } from '@mesh/xds-renderer';
import { AdsTypeStates } from './ads-stream.js';
import { decodeMessage } from './envoy-protos.js';
import { type Snapshot, snapshotOf, TYPE_URLS } from './snapshot.js';
import { encodeDiscoveryResponse } from './wire.js';

const cluster = (name: string, timeout = '1s') => ({ '@type': TYPE_URLS.cluster, name, type: 'EDS', connectTimeout: timeout, edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } } });
const endpoints = (clusterName: string, port: number) => ({
  '@type': TYPE_URLS.endpoints,
  clusterName,
  endpoints: [{ lbEndpoints: [{ endpoint: { address: { socketAddress: { address: '10.0.0.1', portValue: port } } } }] }],
});
const config = (parts: Partial<ProxyConfig>): Snapshot =>
  snapshotOf({ listeners: [], clusters: [], endpoints: [], routes: [], secrets: [], ...parts });

interface Sent {
  typeUrl: string;
  version: string;
  nonce: string;
  names: string[];
}

/** The stream's states with what it writes decoded, a clock and the insight events recorded. */
function stream(nackBackoffMs = 0) {
  const sent: Sent[] = [];
  const answered: Array<{ typeUrl: string; rejected: boolean }> = [];
  let now = 1_000_000;
  const states = new AdsTypeStates(
    (written) => {
      const response = decodeMessage('envoy.service.discovery.v3.DiscoveryResponse', encodeDiscoveryResponse(written)) as {
        type_url: string;
        version_info?: string;
        nonce: string;
        resources: Array<{ value: Uint8Array; type_url: string }>;
      };
      const names = response.resources.map((any) => {
        const decoded = decodeMessage(any.type_url.replace('type.googleapis.com/', ''), any.value) as { name?: string; cluster_name?: string };
        return decoded.name ?? decoded.cluster_name ?? '';
      });
      sent.push({ typeUrl: response.type_url, version: response.version_info ?? '', nonce: response.nonce, names });
    },
    { responseSent: () => {}, responseAnswered: (typeUrl, rejected) => answered.push({ typeUrl, rejected }) },
    nackBackoffMs,
    () => new Date(now),
  );
  return { states, sent, answered, tick: (ms: number) => (now += ms) };
}

describe('one ADS stream', () => {
  it('answers the first request, then only changes, once the last response is answered', () => {
    const { states, sent, answered } = stream();
    const first = config({ clusters: [cluster('a')] });
    states.takeRequest({ type_url: TYPE_URLS.cluster });
    states.respond(first);
    expect(sent).toEqual([{ typeUrl: TYPE_URLS.cluster, version: first.types.get(TYPE_URLS.cluster)!.version, nonce: '1', names: ['a'] }]);

    // Not answered yet: a change waits for the ACK.
    const second = config({ clusters: [cluster('a', '2s')] });
    states.respond(second);
    expect(sent).toHaveLength(1);
    expect(states.takeRequest({ type_url: TYPE_URLS.cluster, version_info: sent[0]!.version, response_nonce: '1' })).toBe(true);
    states.respond(second);
    expect(sent.map((response) => response.nonce)).toEqual(['1', '2']);
    expect(answered).toEqual([{ typeUrl: TYPE_URLS.cluster, rejected: false }]);

    // ACKed and nothing new: nothing more.
    states.takeRequest({ type_url: TYPE_URLS.cluster, version_info: sent[1]!.version, response_nonce: '2' });
    states.respond(second);
    expect(sent).toHaveLength(2);
  });

  it('ignores a request answering a response that is not the last one sent', () => {
    const { states, sent, answered } = stream();
    states.takeRequest({ type_url: TYPE_URLS.cluster });
    states.respond(config({ clusters: [cluster('a')] }));
    expect(states.takeRequest({ type_url: TYPE_URLS.cluster, response_nonce: '99' })).toBe(false);
    states.respond(config({ clusters: [cluster('b')] }));
    expect(sent).toHaveLength(1);
    expect(answered).toEqual([]);
  });

  it('counts a NACK, never sends the rejected version again, and sends the next one after the back-off', () => {
    const { states, sent, answered, tick } = stream(5000);
    const good = config({ clusters: [cluster('a')] });
    states.takeRequest({ type_url: TYPE_URLS.cluster });
    states.respond(good);
    states.takeRequest({ type_url: TYPE_URLS.cluster, version_info: sent[0]!.version, response_nonce: '1' });
    const bad = config({ clusters: [cluster('a', '3s')] });
    states.respond(bad);
    states.takeRequest({ type_url: TYPE_URLS.cluster, version_info: sent[0]!.version, response_nonce: '2', error_detail: { code: 3, message: 'no' } });
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
    expect(sent.map((response) => response.version)).toEqual([good, bad, fixed].map((snapshot) => snapshot.types.get(TYPE_URLS.cluster)!.version));
    states.close();
  });

  it('sends endpoints only by name, again when other names are asked for, and with a new version when clusters change', () => {
    const { states, sent } = stream();
    const snapshot = config({ clusters: [cluster('a'), cluster('b')], endpoints: [endpoints('a', 1), endpoints('b', 2)] });
    states.takeRequest({ type_url: TYPE_URLS.endpoints });
    states.respond(snapshot);
    expect(sent[0]?.names).toEqual([]);
    states.takeRequest({ type_url: TYPE_URLS.endpoints, response_nonce: '1', resource_names: ['a'], version_info: sent[0]!.version });
    states.respond(snapshot);
    expect(sent[1]?.names).toEqual(['a']);
    states.takeRequest({ type_url: TYPE_URLS.endpoints, response_nonce: '2', resource_names: ['a', 'b'], version_info: sent[1]!.version });
    states.respond(snapshot);
    expect(sent[2]?.names).toEqual(['a', 'b']);
    // The same endpoints under changed clusters: a new endpoints version, so changed clusters leave warming.
    const clustersChanged = config({ clusters: [cluster('a', '9s'), cluster('b')], endpoints: [endpoints('a', 1), endpoints('b', 2)] });
    expect(clustersChanged.types.get(TYPE_URLS.endpoints)!.version).not.toBe(snapshot.types.get(TYPE_URLS.endpoints)!.version);
  });

  it('selects of a type snapshot shared by several proxies what each stream asks for', () => {
    const parts = { clusters: [cluster('a'), cluster('b')], endpoints: [endpoints('a', 1), endpoints('b', 2)] };
    const shared = config(parts);
    // The proxies of a class hold the very same type snapshots.
    expect(config(parts).types.get(TYPE_URLS.endpoints)).toBe(shared.types.get(TYPE_URLS.endpoints));
    const asks: Array<string[] | undefined> = [['a'], ['b'], ['a'], ['a', 'b'], [''], undefined];
    const answers = asks.map((names) => {
      const { states, sent } = stream();
      states.takeRequest({ type_url: TYPE_URLS.endpoints, ...(names ? { resource_names: names } : {}) });
      states.takeRequest({ type_url: TYPE_URLS.cluster, ...(names ? { resource_names: names } : {}) });
      states.respond(shared);
      return sent.map((response) => [response.typeUrl, response.names]);
    });
    expect(answers).toEqual([
      [[TYPE_URLS.cluster, ['a']], [TYPE_URLS.endpoints, ['a']]],
      [[TYPE_URLS.cluster, ['b']], [TYPE_URLS.endpoints, ['b']]],
      [[TYPE_URLS.cluster, ['a']], [TYPE_URLS.endpoints, ['a']]],
      [[TYPE_URLS.cluster, ['a', 'b']], [TYPE_URLS.endpoints, ['a', 'b']]],
      // One empty name selects nothing; no name at all is every cluster, and no endpoints.
      [[TYPE_URLS.cluster, []], [TYPE_URLS.endpoints, []]],
      [[TYPE_URLS.cluster, ['a', 'b']], [TYPE_URLS.endpoints, []]],
    ]);
  });

  it('answers waiting types in the order Envoy needs them: clusters, endpoints, listeners', () => {
    const { states, sent } = stream();
    states.takeRequest({ type_url: TYPE_URLS.listener });
    states.takeRequest({ type_url: TYPE_URLS.endpoints, resource_names: ['a'] });
    states.takeRequest({ type_url: TYPE_URLS.cluster });
    states.respond(config({ clusters: [cluster('a')], endpoints: [endpoints('a', 1)] }));
    expect(sent.map((response) => response.typeUrl)).toEqual([TYPE_URLS.cluster, TYPE_URLS.endpoints, TYPE_URLS.listener]);
  });

  it('holds listeners back while the clusters they need wait for the answer to the last clusters sent', () => {
    const { states, sent } = stream();
    const listener = { '@type': TYPE_URLS.listener, name: 'l', address: { socketAddress: { address: '127.0.0.1', portValue: 1 } } };
    states.takeRequest({ type_url: TYPE_URLS.cluster });
    states.takeRequest({ type_url: TYPE_URLS.listener });
    states.respond(config({ clusters: [cluster('a')] }));
    states.takeRequest({ type_url: TYPE_URLS.listener, response_nonce: '2', version_info: sent[1]!.version });
    // A cluster change is sent; before its answer comes a change adding a cluster and a listener that needs it.
    states.takeRequest({ type_url: TYPE_URLS.cluster, response_nonce: '1', version_info: sent[0]!.version });
    states.respond(config({ clusters: [cluster('a', '2s')] }));
    const latest = config({ clusters: [cluster('a', '2s'), cluster('b')], listeners: [listener] });
    states.respond(latest);
    expect(sent.map((response) => response.typeUrl)).toEqual([TYPE_URLS.cluster, TYPE_URLS.listener, TYPE_URLS.cluster]);
    // The clusters answered: cluster b goes, then the listener.
    states.takeRequest({ type_url: TYPE_URLS.cluster, response_nonce: '3', version_info: sent[2]!.version });
    states.respond(latest);
    expect(sent.slice(3).map((response) => [response.typeUrl, response.names])).toEqual([
      [TYPE_URLS.cluster, ['a', 'b']],
      [TYPE_URLS.listener, ['l']],
    ]);
  });

  it('answers nothing to plain ACKs of a stream that has everything, and answers names asked anew with the same nonce', () => {
    const { states, sent } = stream();
    const snapshot = config({ clusters: [cluster('a'), cluster('b')], endpoints: [endpoints('a', 1), endpoints('b', 2)] });
    states.takeRequest({ type_url: TYPE_URLS.cluster });
    states.takeRequest({ type_url: TYPE_URLS.endpoints, resource_names: ['a'] });
    states.respond(snapshot);
    expect(sent.map((response) => [response.typeUrl, response.names])).toEqual([
      [TYPE_URLS.cluster, ['a', 'b']],
      [TYPE_URLS.endpoints, ['a']],
    ]);
    states.takeRequest({ type_url: TYPE_URLS.cluster, response_nonce: '1', version_info: sent[0]!.version });
    states.respond(snapshot);
    states.takeRequest({ type_url: TYPE_URLS.endpoints, response_nonce: '2', version_info: sent[1]!.version, resource_names: ['a'] });
    states.respond(snapshot);
    expect(sent).toHaveLength(2);
    // The proxy now needs b's endpoints too, in a request that also answers the last response.
    states.takeRequest({ type_url: TYPE_URLS.endpoints, response_nonce: '2', version_info: sent[1]!.version, resource_names: ['a', 'b'] });
    states.respond(snapshot);
    expect(sent.slice(2).map((response) => [response.typeUrl, response.names])).toEqual([[TYPE_URLS.endpoints, ['a', 'b']]]);
  });
});

import { describe, expect, it } from 'vitest';
import type { ProxyConfig } from '@mesh/xds-renderer';
import { snapshotOf, TYPE_URLS } from './snapshot.js';

const cluster = (name: string, connectTimeout = '1s') => ({ '@type': TYPE_URLS.cluster, name, type: 'EDS', connectTimeout, edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } } });
const listener = (port: number) => ({
  '@type': TYPE_URLS.listener,
  name: `inbound:10.0.0.1:${port}`,
  address: { socketAddress: { address: '10.0.0.1', portValue: port } },
  trafficDirection: 'INBOUND',
});
const assignment = (clusterName: string) => ({
  '@type': TYPE_URLS.endpoints,
  clusterName,
  endpoints: [{ lbEndpoints: [{ endpoint: { address: { socketAddress: { address: '10.0.0.2', portValue: 8080 } } } }] }],
});
/** A configuration rendered afresh: new objects every time, as the renderer makes them. */
const rendered = (timeout: string) =>
  ({ listeners: [listener(8080)], clusters: [cluster('backend', timeout)], endpoints: [assignment('backend')], routes: [], secrets: [] }) as unknown as ProxyConfig;

describe('proxy snapshots', () => {
  it('keeps the versions and resources of what a new rendering leaves equal, and moves the endpoints with the clusters', () => {
    const first = snapshotOf(rendered('1s'));
    const same = snapshotOf(rendered('1s'), first);
    for (const typeUrl of Object.values(TYPE_URLS)) expect(same.types.get(typeUrl)).toBe(first.types.get(typeUrl));

    const changed = snapshotOf(rendered('2s'), same);
    const version = (snapshot: typeof first, typeUrl: string) => snapshot.types.get(typeUrl)!.version;
    expect(version(changed, TYPE_URLS.cluster)).not.toBe(version(first, TYPE_URLS.cluster));
    expect(version(changed, TYPE_URLS.endpoints)).not.toBe(version(first, TYPE_URLS.endpoints));
    expect(changed.types.get(TYPE_URLS.endpoints)!.resources).toBe(first.types.get(TYPE_URLS.endpoints)!.resources);
    expect(changed.types.get(TYPE_URLS.listener)).toBe(first.types.get(TYPE_URLS.listener));
    expect(changed.types.get(TYPE_URLS.cluster)!.resources.get('backend')).not.toBe(first.types.get(TYPE_URLS.cluster)!.resources.get('backend'));

    // Back to the first content: the first versions again, whatever came between.
    const back = snapshotOf(rendered('1s'), changed);
    for (const typeUrl of Object.values(TYPE_URLS)) expect(version(back, typeUrl)).toBe(version(first, typeUrl));
  });

  it('versions a configuration by its content alone, with or without a previous snapshot', () => {
    const fresh = snapshotOf(rendered('3s'));
    const following = snapshotOf(rendered('3s'), snapshotOf(rendered('1s')));
    for (const typeUrl of Object.values(TYPE_URLS)) expect(following.types.get(typeUrl)!.version).toBe(fresh.types.get(typeUrl)!.version);
  });

  it('hands proxies that hold the same clusters and endpoints the same type snapshots, and each its own listeners', () => {
    const first = snapshotOf(rendered('4s'));
    const second = snapshotOf(rendered('4s'));
    for (const typeUrl of [TYPE_URLS.cluster, TYPE_URLS.endpoints]) expect(second.types.get(typeUrl)).toBe(first.types.get(typeUrl));
    expect(second.types.get(TYPE_URLS.listener)).not.toBe(first.types.get(TYPE_URLS.listener));
    expect(second.types.get(TYPE_URLS.listener)!.version).toBe(first.types.get(TYPE_URLS.listener)!.version);
    const other = snapshotOf(rendered('5s'));
    expect(other.types.get(TYPE_URLS.cluster)).not.toBe(first.types.get(TYPE_URLS.cluster));
  });
});


// Resources shared between proxies through the mesh context (MeshContext.shared), and a proxy's
// own listeners kept from its last render (ownResource): a proxy gets exactly what it would get
// rendered alone, whatever was rendered before; proxies a targetRef policy selects get their own
// objects, which the policies edit.
import { describe, expect, it } from 'vitest';
import { prepareMeshContext } from './mesh-context.js';
import { renderProxyConfig } from './proxy.js';
import { dataplane, meshSpec, targetRefMatchOf, targetRefPolicy } from './test-fixtures.js';
import { fullTopology } from './testing/topologies.js';

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('resources shared between proxies', () => {
  const topologies = [
    ['without mTLS', fullTopology('off')],
    ['STRICT mTLS', fullTopology('STRICT')],
    ['PERMISSIVE mTLS through a zone egress', fullTopology('PERMISSIVE', { zoneEgress: true })],
  ] as const;

  for (const [label, topology] of topologies) {
    it(`renders every proxy as it renders alone, in any order (${label})`, () => {
      const { state } = topology.context;
      const alone = new Map(state.dataplanes.map((proxy) => [proxy.name, json(renderProxyConfig({ context: prepareMeshContext(state), dataplane: { ...proxy } }))]));
      for (const order of [state.dataplanes, [...state.dataplanes].reverse()]) {
        const context = prepareMeshContext(state);
        for (const proxy of order) expect(json(renderProxyConfig({ context, dataplane: proxy }))).toEqual(alone.get(proxy.name));
      }
    });
  }

  const { context, web1 } = fullTopology('off');
  const web2 = dataplane('web-2', { ...web1.spec.networking, address: '10.0.0.9' });

  const backend = (config: ReturnType<typeof renderProxyConfig>) => config.clusters.find((cluster) => cluster.name === 'backend-a10be8a87b9201bd');

  it('hands the consumers of a service the same cluster object, and each the listeners logging its own address', () => {
    const first = renderProxyConfig({ context, dataplane: web1 });
    const second = renderProxyConfig({ context, dataplane: web2 });
    expect(backend(first)).toBeDefined();
    expect(backend(second)).toBe(backend(first));
    expect(json(second)).toEqual(json(renderProxyConfig({ context: prepareMeshContext(context.state), dataplane: web2 })));
  });

  it('hands instances matched alike, with outbounds at the same addresses, one outbound rendering when nothing logs their address', () => {
    const { state } = context;
    const unlogged = prepareMeshContext({ ...state, snapshot: { ...state.snapshot, policies: { ...state.snapshot.policies, TrafficLog: [] } } });
    const outbound = (config: ReturnType<typeof renderProxyConfig>, port: number) => config.listeners.find((listener) => listener.name === `outbound:127.0.0.1:${port}`);
    const [first, second] = [web1, web2].map((proxy) => renderProxyConfig({ context: unlogged, dataplane: proxy }));
    expect(outbound(first!, 10001)).toBeDefined();
    expect(outbound(second!, 10001)).toBe(outbound(first!, 10001));
    const networking = web1.spec.networking!;
    const movedPort = dataplane('web-3', { ...networking, address: '10.0.0.10', outbound: networking.outbound!.map((entry, at) => (at === 0 ? { ...entry, port: 10011 } : entry)) });
    const otherTags = dataplane('web-4', { ...networking, address: '10.0.0.11', inbound: networking.inbound!.map((entry) => ({ ...entry, tags: { ...entry.tags, version: 'v9' } })) });
    for (const proxy of [web2, movedPort, otherTags]) {
      expect(json(renderProxyConfig({ context: unlogged, dataplane: proxy }))).toEqual(json(renderProxyConfig({ context: prepareMeshContext(unlogged.state), dataplane: { ...proxy } })));
    }
    expect(outbound(renderProxyConfig({ context: unlogged, dataplane: movedPort }), 10011)).toBeDefined();
  });

  it("keeps a proxy's own listeners while the mesh leaves them be, and renders them again once it moves them", () => {
    const { state } = context;
    const inbound = (config: ReturnType<typeof renderProxyConfig>) => config.listeners.find((listener) => listener.name.startsWith('inbound:'));
    const before = renderProxyConfig({ context: prepareMeshContext(state), dataplane: web1 });
    expect(inbound(renderProxyConfig({ context: prepareMeshContext(state), dataplane: web1 }))).toBe(inbound(before));
    const strict = prepareMeshContext({ ...state, snapshot: { ...state.snapshot, meshSpec: meshSpec({ mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } }) } });
    const moved = renderProxyConfig({ context: strict, dataplane: web1 });
    expect(inbound(moved)).not.toBe(inbound(before));
    expect(json(moved)).toEqual(json(renderProxyConfig({ context: strict, dataplane: { ...web1 } })));
  });

  it('renders its own resources for a proxy a targetRef policy selects', () => {
    const shared = renderProxyConfig({ context, dataplane: web1 });
    const timeout = targetRefPolicy('MeshTimeout', 'timeouts', { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '7s' } }] });
    const targetRef = targetRefMatchOf(context, web2, { MeshTimeout: [timeout] });
    const selected = renderProxyConfig({ context, dataplane: web2, targetRef });
    for (const cluster of selected.clusters) expect(shared.clusters).not.toContain(cluster);
    for (const listener of selected.listeners) expect(shared.listeners).not.toContain(listener);
    expect(backend(selected)?.connectTimeout).toBe('7s');
    expect(backend(renderProxyConfig({ context, dataplane: web1 }))?.connectTimeout).not.toBe('7s');
  });
});

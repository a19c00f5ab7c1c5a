// End to end: concurrency against the built zone binary. Many clients write the same resources at
// once: a write that loses a race is refused with 409 and the standard error body, never lost
// (every acknowledged write is one committed change, and what is stored is the value of one that
// nothing acknowledged later could have superseded). A client walking a list by following `next`
// while other items are created and deleted sees every item that existed throughout exactly once
// (docs/api.md, Lists).
import { join } from 'node:path';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlaneProcess, type Ports } from './testing/process.js';
import { sendRaw, standardErrorProblem } from './testing/raw-http.js';

type Started = ControlPlaneProcess & { ports: Ports };

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const json = { 'content-type': 'application/json' };
const route = (mesh: string, name: string, seq: string) => ({
  type: 'TrafficRoute',
  mesh,
  name,
  labels: { seq },
  sources: ALL,
  destinations: ALL,
  conf: { destination: { 'mesh.io/service': `svc-${seq}` } },
});

let cp: Started;

beforeAll(async () => {
  cp = await startControlPlane();
  for (const mesh of ['race', 'pages', 'pages-b']) {
    expect((await fetch(`${cp.url}/meshes/${mesh}`, { method: 'PUT', headers: json, body: JSON.stringify({ type: 'Mesh', name: mesh }) })).status).toBe(201);
  }
});

afterAll(async () => {
  await cp?.stop('SIGKILL');
});

describe('concurrent writes', () => {
  const CLIENTS = 16;
  const WRITES = 20;

  interface Write {
    path: string;
    seq: string;
    sentAt: number;
    answeredAt: number;
    status: number;
  }

  /**
   * Hot keys: routes, whose writes the server serialises, and meshes, whose creation waits for
   * keys to be generated, so that creations of one mesh really overlap.
   */
  const TARGETS = [
    { path: '/meshes/race/traffic-routes/hot-1', body: (seq: string) => route('race', 'hot-1', seq), type: 'TrafficRoute', mesh: 'race', name: 'hot-1' },
    { path: '/meshes/race/traffic-routes/hot-2', body: (seq: string) => route('race', 'hot-2', seq), type: 'TrafficRoute', mesh: 'race', name: 'hot-2' },
    { path: '/meshes/hot-mesh-1', body: (seq: string) => ({ type: 'Mesh', name: 'hot-mesh-1', labels: { seq } }), type: 'Mesh', mesh: '', name: 'hot-mesh-1' },
    { path: '/meshes/hot-mesh-2', body: (seq: string) => ({ type: 'Mesh', name: 'hot-mesh-2', labels: { seq } }), type: 'Mesh', mesh: '', name: 'hot-mesh-2' },
  ];

  it('refuses the writes that lose a race with 409 and loses none that it acknowledged', async () => {
    const writes: Write[] = [];
    let clock = 0;
    // The keys do not exist at first: the first writes race to create them.
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let i = 0; i < WRITES; i++) {
          const target = TARGETS[(client + i) % TARGETS.length]!;
          const seq = `${client}-${i}`;
          const sentAt = clock++;
          const reply = await sendRaw(cp.url, { method: 'PUT', path: target.path, headers: json, body: JSON.stringify(target.body(seq)) });
          if (reply.status === 409) expect(standardErrorProblem(reply), reply.text).toBeUndefined();
          else expect([200, 201], `${reply.status} ${reply.text}`).toContain(reply.status);
          writes.push({ path: target.path, seq, sentAt, answeredAt: clock++, status: reply.status });
        }
      }),
    );
    const refused = writes.filter((w) => w.status === 409).length;
    console.info(`concurrent writes: ${writes.length} sent, ${writes.length - refused} acknowledged, ${refused} refused with 409`);
    expect(refused).toBeGreaterThan(0);

    const stored = new Map<string, string>();
    for (const { path } of TARGETS) {
      const acked = writes.filter((w) => w.path === path && w.status !== 409);
      expect(acked.filter((w) => w.status === 201), path).toHaveLength(1);
      const read = (await (await fetch(`${cp.url}${path}`)).json()) as { labels: { seq: string } };
      const last = acked.find((w) => w.seq === read.labels.seq);
      expect(last, `${path} holds ${read.labels.seq}, which was never acknowledged`).toBeDefined();
      // Nothing acknowledged may have been sent after this one was acknowledged: it would be later in any order.
      expect(acked.filter((w) => w.sentAt > last!.answeredAt).map((w) => w.seq), path).toEqual([]);
      stored.set(path, read.labels.seq);
    }

    // Each acknowledged write is exactly one committed change: none merged away, none extra.
    await cp.stop('SIGKILL');
    const store = new SqliteResourceStore({ path: join(cp.workDir, 'mesh.db') });
    try {
      const log = await store.changesSince(0, Number.MAX_SAFE_INTEGER);
      if (log.resync) throw new Error('the change log was pruned');
      for (const { path, type, mesh, name } of TARGETS) {
        const changes = log.changes.filter((c) => c.type === type && c.mesh === mesh && c.name === name);
        const acked = writes.filter((w) => w.path === path && w.status !== 409);
        expect(changes.length, path).toBe(acked.length);
        const resource = await store.get({ type, mesh, name });
        expect([resource?.version, resource?.labels.seq], path).toEqual([acked.length, stored.get(path)]);
      }
    } finally {
      await store.close();
    }
    cp = await startControlPlane({ workDir: cp.workDir, ports: cp.ports, env: cp.env });
  });
});

describe('paging while items are written', () => {
  const KEPT = Array.from({ length: 120 }, (_, i) => `keep-${String(i).padStart(3, '0')}`);

  /** Follows `next` from `first` to the end, `size` items a page; every item as `mesh/name`. */
  async function walk(first: string): Promise<string[]> {
    const seen: string[] = [];
    for (let url: string | null = `${cp.url}${first}`; url !== null; ) {
      const page = (await (await fetch(url)).json()) as { items: Array<{ mesh: string; name: string }>; next: string | null };
      seen.push(...page.items.map((item) => `${item.mesh}/${item.name}`));
      url = page.next;
    }
    return seen;
  }

  beforeAll(async () => {
    for (const mesh of ['pages', 'pages-b']) {
      for (let i = 0; i < KEPT.length; i += 20) {
        await Promise.all(
          KEPT.slice(i, i + 20).map(async (name) => {
            const res = await fetch(`${cp.url}/meshes/${mesh}/traffic-routes/${name}`, { method: 'PUT', headers: json, body: JSON.stringify(route(mesh, name, 'kept')) });
            expect(res.status).toBe(201);
          }),
        );
      }
    }
  });

  it.each([
    ['a mesh list', '/meshes/pages/traffic-routes?size=7', ['pages']],
    ['the list across meshes', '/traffic-routes?size=9', ['pages', 'pages-b']],
    ['a filtered list', '/meshes/pages/traffic-routes?size=5&name=e', ['pages']],
  ])('returns every item that existed throughout exactly once, walking %s', async (_what, first, meshes) => {
    // Items that come and go before, between and after the kept ones, while the walks run.
    let writing = true;
    const churn = (async () => {
      for (let n = 0; writing; n++) {
        const mesh = meshes[n % meshes.length]!;
        const name = `${KEPT[(n * 7) % KEPT.length]}-churn-${n % 5}`;
        const early = `a-churn-${n % 3}`;
        await Promise.all([
          fetch(`${cp.url}/meshes/${mesh}/traffic-routes/${name}`, { method: 'PUT', headers: json, body: JSON.stringify(route(mesh, name, String(n))) }).then((r) => r.arrayBuffer()),
          fetch(`${cp.url}/meshes/${mesh}/traffic-routes/${early}`, n % 2 === 0 ? { method: 'PUT', headers: json, body: JSON.stringify(route(mesh, early, String(n))) } : { method: 'DELETE' }).then((r) => r.arrayBuffer()),
        ]);
        if (n % 3 === 2) await fetch(`${cp.url}/meshes/${mesh}/traffic-routes/${name}`, { method: 'DELETE' }).then((r) => r.arrayBuffer());
      }
    })();
    try {
      for (let round = 0; round < 5; round++) {
        const seen = await walk(first);
        const counts = new Map<string, number>();
        for (const item of seen) counts.set(item, (counts.get(item) ?? 0) + 1);
        expect([...counts].filter(([, n]) => n > 1), 'items seen twice').toEqual([]);
        const kept = meshes.flatMap((mesh) => KEPT.map((name) => `${mesh}/${name}`));
        expect(kept.filter((item) => !counts.has(item)), 'items missed').toEqual([]);
        const order = (item: string) => item.replace('/', '\u0000');
        expect(seen, 'in (mesh, name) order').toEqual([...seen].sort((a, b) => (order(a) < order(b) ? -1 : 1)));
      }
    } finally {
      writing = false;
      await churn;
    }
  });
});

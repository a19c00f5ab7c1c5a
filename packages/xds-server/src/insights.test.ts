import { getKind } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { registerSigningKeyHooks } from '@mesh/tokens';
import { afterEach, describe, expect, it } from 'vitest';
import { InsightWriter, Subscription, SubscriptionFinalizer } from './insights.js';
import { TYPE_URLS } from './snapshot.js';

let store: SqliteResourceStore | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function world() {
  let now = Date.parse('2030-01-01T00:00:00.000Z');
  const clock = () => new Date(now);
  store = new SqliteResourceStore({ path: ':memory:', now: clock });
  const manager = new ResourceManager({ store, mode: 'standalone' });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  await manager.ensureDefaultMesh();
  await manager.apply(getKind('Dataplane'), { mesh: 'default', name: 'web-1' }, {
    type: 'Dataplane',
    mesh: 'default',
    name: 'web-1',
    networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] },
  });
  const errors: unknown[] = [];
  const writer = new InsightWriter({ manager, store, subscriptionLimit: 2, now: clock, onError: (error) => errors.push(error) });
  const insight = async () => JSON.parse((await store!.get({ type: 'DataplaneInsight', mesh: 'default', name: 'web-1' }))?.spec ?? '{}') as { subscriptions?: Array<Record<string, any>> };
  return { manager, writer, insight, errors, clock, tick: (ms: number) => (now += ms) };
}

describe('proxy insights', () => {
  it("writes a stream's subscription with its counters, replacing it by id and closing the stream's predecessors", async () => {
    const { writer, insight, errors, clock, tick } = await world();
    const first = new Subscription('instance-a', clock);
    first.version = { meshDp: { version: '2.5.0' } };
    first.responseSent(TYPE_URLS.cluster);
    first.responseAnswered(TYPE_URLS.cluster, false);
    first.responseSent(TYPE_URLS.secret);
    await writer.write('Dataplane', 'default', 'web-1', first);
    expect((await insight()).subscriptions).toEqual([
      {
        id: first.id,
        controlPlaneInstanceId: 'instance-a',
        connectTime: '2030-01-01T00:00:00.000Z',
        status: {
          lastUpdateTime: '2030-01-01T00:00:00.000Z',
          total: { responsesSent: '2', responsesAcknowledged: '1' },
          cds: { responsesSent: '1', responsesAcknowledged: '1' },
          eds: {},
          lds: {},
          rds: {},
        },
        version: { meshDp: { version: '2.5.0' } },
      },
    ]);

    // The proxy comes back through another instance without the first stream having been closed.
    tick(60_000);
    const second = new Subscription('instance-b', clock);
    await writer.write('Dataplane', 'default', 'web-1', second);
    tick(1000);
    const third = new Subscription('instance-b', clock);
    third.responseAnswered(TYPE_URLS.listener, true);
    await writer.write('Dataplane', 'default', 'web-1', third);
    const subscriptions = (await insight()).subscriptions ?? [];
    expect(subscriptions.map((s) => s.id)).toEqual([second.id, third.id]);
    expect(subscriptions[0]?.disconnectTime).toBe('2030-01-01T00:01:01.000Z');
    expect(subscriptions[1]?.disconnectTime).toBeUndefined();
    expect(subscriptions[1]?.status).toMatchObject({ total: { responsesRejected: '1' }, lds: { responsesRejected: '1' } });
    expect(errors).toEqual([]);
  });

  it('closes the subscriptions whose generation stopped moving between two sweeps, and leaves live ones open', async () => {
    const { manager, writer, insight, clock, tick } = await world();
    const lost = new Subscription('instance-a', clock);
    await writer.write('Dataplane', 'default', 'web-1', lost);
    const finalizer = new SubscriptionFinalizer(manager, store!, clock);
    expect(await finalizer.sweep()).toBe(0);
    tick(300_000);
    expect(await finalizer.sweep()).toBe(1);
    expect((await insight()).subscriptions?.[0]?.disconnectTime).toBe('2030-01-01T00:05:00.000Z');

    const live = new Subscription('instance-b', clock);
    await writer.write('Dataplane', 'default', 'web-1', live);
    expect(await finalizer.sweep()).toBe(0);
    live.advanceGeneration();
    await writer.write('Dataplane', 'default', 'web-1', live);
    expect(await finalizer.sweep()).toBe(0);
    expect((await insight()).subscriptions?.at(-1)).toMatchObject({ id: live.id, generation: 1 });
    expect((await insight()).subscriptions?.at(-1)?.disconnectTime).toBeUndefined();
  });

  it('writes no insight for a proxy that is gone', async () => {
    const { manager, writer, clock } = await world();
    await manager.remove(getKind('Dataplane'), { mesh: 'default', name: 'web-1' });
    await writer.write('Dataplane', 'default', 'web-1', new Subscription('instance-a', clock));
    expect(await store!.get({ type: 'DataplaneInsight', mesh: 'default', name: 'web-1' })).toBeUndefined();
  });
});

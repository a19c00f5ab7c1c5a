// The targetRef policies over HTTP: their spec travels under `spec` (docs/policies.md).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectJson, invalid, startApi, stdError, type TestApi } from './testing.js';

const PROCESS = 'Could not process a resource';
const TIME = '2024-05-06T07:08:09.000Z';

let api: TestApi;
beforeEach(async () => {
  api = await startApi();
});
afterEach(async () => {
  await api.close();
});

const meshTimeout = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'MeshTimeout', mesh: 'default', name, ...extra, spec });
const TIMEOUTS = {
  targetRef: { kind: 'MeshService', name: 'web' },
  to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { idleTimeout: '1h', http: { requestTimeout: '1500ms' } } }],
};

describe('targetRef policies over HTTP', () => {
  it('are created, read, listed, updated and deleted with their spec under `spec`', async () => {
    expectJson(await api.put('/meshes/default/meshtimeouts/web-to-backend', meshTimeout('web-to-backend', TIMEOUTS)), 201, {});
    const stored = {
      type: 'MeshTimeout',
      mesh: 'default',
      name: 'web-to-backend',
      creationTime: TIME,
      modificationTime: TIME,
      spec: {
        targetRef: { kind: 'MeshService', name: 'web' },
        to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { idleTimeout: '1h0m0s', http: { requestTimeout: '1.5s' } } }],
      },
    };
    expectJson(await api.get('/meshes/default/meshtimeouts/web-to-backend'), 200, stored);
    expectJson(await api.get('/meshes/default/meshtimeouts'), 200, { total: 1, items: [stored], next: null });
    expectJson(await api.get('/meshtimeouts'), 200, { total: 1, items: [stored], next: null });

    api.advanceClock(1_000);
    const update = { targetRef: { kind: 'Mesh' }, from: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '2s' } }] };
    expectJson(await api.put('/meshes/default/meshtimeouts/web-to-backend', meshTimeout('web-to-backend', update, { labels: { team: 'core' } })), 200, {});
    expectJson(await api.get('/meshes/default/meshtimeouts/web-to-backend'), 200, {
      type: 'MeshTimeout',
      mesh: 'default',
      name: 'web-to-backend',
      creationTime: TIME,
      modificationTime: '2024-05-06T07:08:10.000Z',
      labels: { team: 'core' },
      spec: update,
    });
    expect((await api.get('/meshes/default/meshtimeouts/web-to-backend?format=k8s')).body).toMatchObject({ kind: 'MeshTimeout', spec: update });

    expectJson(await api.del('/meshes/default/meshtimeouts/web-to-backend'), 200, {});
    expect((await api.get('/meshes/default/meshtimeouts/web-to-backend')).status).toBe(404);
    expectJson(await api.get('/meshes/default/meshtimeouts'), 200, { total: 0, items: [], next: null });
  });

  it('are counted in the insight of their mesh', async () => {
    const permission = { targetRef: { kind: 'Mesh' }, from: [{ targetRef: { kind: 'Mesh' }, default: { action: 'Allow' } }] };
    await api.put('/meshes/default/meshtrafficpermissions/allow-all', { type: 'MeshTrafficPermission', mesh: 'default', name: 'allow-all', spec: permission });
    expect((await api.get('/mesh-insights/default')).body.policies).toMatchObject({ MeshTrafficPermission: { total: 1 } });
  });

  it('refuse a body that does not fit the schema with every mismatch, and only those', async () => {
    const body = meshTimeout('bad', { targetRef: { kind: 'MeshGatewayRoute' }, to: [{ default: { idleTimeout: 5 } }] });
    expectJson(
      await api.put('/meshes/default/meshtimeouts/bad', body),
      400,
      invalid(
        PROCESS,
        ['spec.targetRef.kind', 'in body should be one of [Mesh MeshSubset MeshGateway MeshService MeshServiceSubset MeshHTTPRoute]'],
        ['spec.to[0].targetRef', 'in body is required'],
        ['spec.to[0].default.idleTimeout', 'in body must be of type string: "number"'],
      ),
    );
  });

  it("refuse a body that breaks the kind's rules with every violation", async () => {
    const body = meshTimeout('bad', { targetRef: { kind: 'MeshService' }, to: [{ targetRef: { kind: 'MeshSubset' }, default: { connectionTimeout: '0s' } }] });
    expectJson(
      await api.put('/meshes/default/meshtimeouts/bad', body),
      400,
      invalid(
        PROCESS,
        ['spec.targetRef.name', 'must be set with kind MeshService'],
        ['spec.to[0].targetRef.kind', 'value is not supported'],
        ['spec.to[0].default.connectionTimeout', 'must be greater than zero when defined'],
      ),
    );
    expectJson(await api.put('/meshes/default/meshtimeouts/empty', { type: 'MeshTimeout', mesh: 'default', name: 'empty' }), 400, invalid(PROCESS, ['spec.targetRef', 'in body is required']));
  });

  it('refuse a value Go cannot decode as a bad request', async () => {
    const body = meshTimeout('bad', { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { idleTimeout: 'an hour' } }] });
    expectJson(await api.put('/meshes/default/meshtimeouts/bad', body), 400, stdError(400, 'Bad Request', `invalid MeshTimeout object: 'time: invalid duration "an hour"'`));
  });

  it('check names, meta and the mesh as every kind does', async () => {
    const body = { ...meshTimeout('other', TIMEOUTS), mesh: 'nowhere' };
    expectJson(
      await api.put('/meshes/default/meshtimeouts/web', body),
      400,
      invalid(PROCESS, ['name', 'name from the URL has to be the same as in body'], ['mesh', 'mesh from the URL has to be the same as in body']),
    );
    expect((await api.put('/meshes/nowhere/meshtimeouts/web', { ...meshTimeout('web', TIMEOUTS), mesh: 'nowhere' })).body.detail).toBe('Mesh is not found');
  });

  it('are refused on a zone, which receives them from its global', async () => {
    await api.close();
    api = await startApi({ mode: 'zone', zoneName: 'zone-1' });
    const put = await api.put('/meshes/default/meshhttproutes/r', { type: 'MeshHTTPRoute', mesh: 'default', name: 'r', spec: { targetRef: { kind: 'Mesh' } } });
    expect(put.status).toBe(405);
  });
});

// Behaviour of PUT / GET / DELETE on resources (docs/api.md, Errors, Resources and Meshes).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CLOCK_START,
  dataplane,
  emptyMesh,
  expectJson,
  externalService,
  generateCa,
  invalid,
  MESH_SCOPED_EXAMPLES,
  secret,
  startApi,
  stdError,
  trafficRoute,
  type TestApi,
} from './testing.js';

const PROCESS = 'Could not process a resource';
const NAME_CHARS =
  "invalid characters. A lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const MESH_CHARS = "invalid characters. Valid characters are numbers, lowercase latin letters and '-', '_', '.' symbols.";

let api: TestApi;
beforeEach(async () => {
  api = await startApi();
});
afterEach(async () => {
  await api.close();
});

describe('PUT creates and updates', () => {
  it('answers 201 with an empty JSON object when it creates', async () => {
    expectJson(await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1')), 201, {});
  });

  it('answers 200 with an empty JSON object when it updates', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    expectJson(await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1')), 200, {});
  });

  it('returns the resource flat: type, mesh, name, timestamps, then the spec fields', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    expectJson(await api.get('/meshes/default/traffic-routes/tr-1'), 200, {
      type: 'TrafficRoute',
      mesh: 'default',
      name: 'tr-1',
      creationTime: '2024-05-06T07:08:09.000Z',
      modificationTime: '2024-05-06T07:08:09.000Z',
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      conf: { destination: { 'mesh.io/service': '*' } },
    });
  });

  it('writes timestamps in UTC with milliseconds, also on a whole second', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    const { body } = await api.get('/meshes/default/traffic-routes/tr-1');
    expect(CLOCK_START.getUTCMilliseconds()).toBe(0);
    expect(body.creationTime).toBe('2024-05-06T07:08:09.000Z');
    expect(body.modificationTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('keeps creationTime and moves modificationTime on an update', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    api.advanceClock(1_234);
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1', 'default', { conf: { destination: { 'mesh.io/service': 'web' } } }));
    const { body } = await api.get('/meshes/default/traffic-routes/tr-1');
    expect([body.creationTime, body.modificationTime]).toEqual(['2024-05-06T07:08:09.000Z', '2024-05-06T07:08:10.234Z']);
  });

  it('moves modificationTime even when the update changes nothing', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    api.advanceClock(5);
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    expect((await api.get('/meshes/default/traffic-routes/tr-1')).body.modificationTime).toBe('2024-05-06T07:08:09.005Z');
  });

  it('ignores timestamps sent in the body', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1', 'default', { creationTime: '2000-01-01T00:00:00Z', modificationTime: '2000-01-01T00:00:00Z' }));
    const { body } = await api.get('/meshes/default/traffic-routes/tr-1');
    expect([body.creationTime, body.modificationTime]).toEqual(['2024-05-06T07:08:09.000Z', '2024-05-06T07:08:09.000Z']);
  });

  it('gives a deleted and re-created resource a new creationTime', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    await api.del('/meshes/default/traffic-routes/tr-1');
    api.advanceClock(60_000);
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    expect((await api.get('/meshes/default/traffic-routes/tr-1')).body.creationTime).toBe('2024-05-06T07:09:09.000Z');
  });

  it('returns durations in seconds whatever form they were written in', async () => {
    const timeout = {
      type: 'Timeout',
      mesh: 'default',
      name: 't-1',
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': 'backend' } }],
      conf: { connectTimeout: '250ms', tcp: { idleTimeout: '1h' } },
    };
    expect((await api.put('/meshes/default/timeouts/t-1', timeout)).status).toBe(201);
    expect((await api.get('/meshes/default/timeouts/t-1')).body.conf).toEqual({ connectTimeout: '0.250s', tcp: { idleTimeout: '3600s' } });
  });

  it('drops unknown fields instead of storing them', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1', 'default', { colour: 'blue', conf: { destination: { 'mesh.io/service': '*' }, extra: 1 } }));
    const { body } = await api.get('/meshes/default/traffic-routes/tr-1');
    expect(body).not.toHaveProperty('colour');
    expect(body.conf).toEqual({ destination: { 'mesh.io/service': '*' } });
  });

  it('treats a top-level `spec` object as an unknown field, so the spec stays empty', async () => {
    const body = { type: 'Mesh', name: 'wrapped', spec: { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } } };
    expectJson(await api.put('/meshes/wrapped', body), 201, {});
    expectJson(await api.get('/meshes/wrapped'), 200, {
      type: 'Mesh',
      name: 'wrapped',
      creationTime: '2024-05-06T07:08:09.000Z',
      modificationTime: '2024-05-06T07:08:09.000Z',
    });
  });

  it('replaces the whole spec on update instead of merging', async () => {
    const withHttp = trafficRoute('tr-1', 'default', {
      conf: { destination: { 'mesh.io/service': '*' }, loadBalancer: { roundRobin: {} } },
    });
    await api.put('/meshes/default/traffic-routes/tr-1', withHttp);
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    expect((await api.get('/meshes/default/traffic-routes/tr-1')).body.conf).toEqual({ destination: { 'mesh.io/service': '*' } });
  });

  it('ignores a `mesh` field on a kind that belongs to no mesh', async () => {
    expect((await api.put('/zones/zone-1', { type: 'Zone', name: 'zone-1', mesh: 'whatever' })).status).toBe(201);
    expect((await api.get('/zones/zone-1')).body).not.toHaveProperty('mesh');
  });
});

describe('labels', () => {
  const LABELS_PATH = '/meshes/default/traffic-routes/tr-1';

  it('round-trip: stored from the body, returned after the timestamps, replaced by the next PUT', async () => {
    expectJson(await api.put(LABELS_PATH, trafficRoute('tr-1', 'default', { labels: { team: 'payments', env: 'prod' } })), 201, {});
    const reply = await api.get(LABELS_PATH);
    expect(reply.body.labels).toEqual({ team: 'payments', env: 'prod' });
    expect(Object.keys(reply.body).slice(0, 6)).toEqual(['type', 'mesh', 'name', 'creationTime', 'modificationTime', 'labels']);
    expect((await api.get('/meshes/default/traffic-routes?format=k8s')).status).toBe(200);
    expect((await api.get(`${LABELS_PATH}?format=k8s`)).body.metadata.labels).toEqual({ team: 'payments', env: 'prod' });
    expectJson(await api.put(LABELS_PATH, trafficRoute('tr-1', 'default', { labels: { team: 'search' } })), 200, {});
    expect((await api.get(LABELS_PATH)).body.labels).toEqual({ team: 'search' });
    expectJson(await api.put(LABELS_PATH, trafficRoute('tr-1')), 200, {});
    expect((await api.get(LABELS_PATH)).body).not.toHaveProperty('labels');
  });

  it('are set by the control plane for origin and zone: values a user sends for them are dropped', async () => {
    await api.put(LABELS_PATH, trafficRoute('tr-1', 'default', { labels: { 'mesh.io/origin': 'global', 'mesh.io/zone': 'east', team: 'a' } }));
    expect((await api.get(LABELS_PATH)).body.labels).toEqual({ team: 'a' });
  });

  it('refuses keys and values that are not label syntax (400 with a cause per label), storing nothing', async () => {
    expectJson(
      await api.put(LABELS_PATH, trafficRoute('tr-1', 'default', { labels: { 'bad key': 'x' } })),
      400,
      invalid(PROCESS, ['labels["bad key"]', "label key name must be at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character"]),
    );
    const reply = await api.put(LABELS_PATH, trafficRoute('tr-1', 'default', { labels: ['a'] }));
    expect(reply.status).toBe(400);
    expect(reply.body.detail).toBe("invalid TrafficRoute object: 'labels: expected an object, got an array'");
    expect((await api.get(LABELS_PATH)).status).toBe(404);
  });
});

describe('PUT refuses a body it cannot decode', () => {
  const badRequestOf = (detail: RegExp) => ({ type: '/std-errors', status: 400, title: 'Bad Request', detail: expect.stringMatching(detail), details: expect.stringMatching(detail) });

  it('answers 400 Bad Request for a body that is not JSON', async () => {
    const reply = await api.request('PUT', '/meshes/default/traffic-routes/tr-1', { raw: '{"type": "TrafficRoute",}' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(badRequestOf(/^invalid TrafficRoute object: '.+'$/));
    expect(reply.body.details).toBe(reply.body.detail);
    expect(Object.keys(reply.body)).toEqual(['type', 'status', 'title', 'detail', 'details']);
  });

  it('answers 400 Bad Request for an empty body', async () => {
    const reply = await api.request('PUT', '/meshes/default/traffic-routes/tr-1', { raw: '' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(badRequestOf(/^invalid TrafficRoute object: '.+'$/));
  });

  it('answers 400 Bad Request for a spec field of the wrong JSON type', async () => {
    const reply = await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1', 'default', { sources: 'everyone' }));
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(badRequestOf(/^invalid TrafficRoute object: '.+'$/));
  });

  it('answers 400 Bad Request for a meta field of the wrong JSON type', async () => {
    const reply = await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1', 'default', { name: 5 }));
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(badRequestOf(/^invalid TrafficRoute object: '.+'$/));
  });

  it('names the kind of the URL in the detail', async () => {
    const reply = await api.request('PUT', '/meshes/default/external-services/es', { raw: 'nope' });
    expect(reply.body.detail).toMatch(/^invalid ExternalService object: '.+'$/);
  });
});

describe('PUT validates the spec before the metadata', () => {
  it('reports only the violations of the URL kind for a body of another kind', async () => {
    const meshTrafficPermission = {
      type: 'MeshTrafficPermission',
      mesh: 'default',
      name: 'x',
      spec: { targetRef: { kind: 'Mesh' }, from: [{ targetRef: { kind: 'Mesh' }, default: { action: 'Allow' } }] },
    };
    expectJson(
      await api.put('/meshes/default/traffic-routes/x', meshTrafficPermission),
      400,
      invalid(PROCESS, ['sources', 'must have at least one element'], ['destinations', 'must have at least one element'], ['conf', 'cannot be empty']),
    );
  });

  it('accumulates the metadata violations in the reference order', async () => {
    const body = trafficRoute('Tr_1', 'Other!', { type: 'Timeout' });
    expectJson(
      await api.put('/meshes/default/traffic-routes/tr-1', body),
      400,
      invalid(
        PROCESS,
        ['name', 'name from the URL has to be the same as in body'],
        ['type', 'type from the URL has to be the same as in body'],
        ['mesh', 'mesh from the URL has to be the same as in body'],
        ['name', NAME_CHARS],
        ['mesh', MESH_CHARS],
      ),
    );
  });

  it('refuses a new name that is not a lowercase RFC 1123 subdomain', async () => {
    expectJson(await api.put('/meshes/default/traffic-routes/tr_1', trafficRoute('tr_1')), 400, invalid(PROCESS, ['name', NAME_CHARS]));
  });

  it('lets an existing resource with a legacy name be updated', async () => {
    // Stored by an older version that accepted such names.
    const { type, mesh, name, ...spec } = trafficRoute('legacy_route');
    await api.store.create({ type, mesh, name, spec: JSON.stringify(spec) });
    expectJson(await api.put('/meshes/default/traffic-routes/legacy_route', trafficRoute('legacy_route')), 200, {});
  });

  it('refuses an empty name in the body', async () => {
    expectJson(
      await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('')),
      400,
      invalid(PROCESS, ['name', 'name from the URL has to be the same as in body'], ['name', 'cannot be empty']),
    );
  });

  it('refuses a name longer than 253 characters', async () => {
    const name = 'a'.repeat(254);
    expectJson(await api.put(`/meshes/default/traffic-routes/${name}`, trafficRoute(name)), 400, invalid(PROCESS, ['name', 'value length must less or equal 253']));
  });

  it('refuses a body without type or mesh', async () => {
    const { type: _type, mesh: _mesh, ...body } = trafficRoute('tr-1');
    expectJson(
      await api.put('/meshes/default/traffic-routes/tr-1', body),
      400,
      invalid(
        PROCESS,
        ['type', 'type from the URL has to be the same as in body'],
        ['mesh', 'mesh from the URL has to be the same as in body'],
        ['mesh', 'cannot be empty'],
      ),
    );
  });

  it('stores nothing when the metadata is refused', async () => {
    const before = await api.snapshot();
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-2'));
    expect(await api.snapshot()).toEqual(before);
  });
});

describe('global secrets', () => {
  it('accepts type Secret', async () => {
    expectJson(await api.put('/global-secrets/gs-1', { type: 'Secret', name: 'gs-1', data: 'c2VjcmV0' }), 201, {});
  });

  it('accepts type GlobalSecret', async () => {
    expectJson(await api.put('/global-secrets/gs-1', { type: 'GlobalSecret', name: 'gs-1', data: 'c2VjcmV0' }), 201, {});
  });

  it('returns them with type Secret and no mesh', async () => {
    await api.put('/global-secrets/gs-1', { type: 'GlobalSecret', name: 'gs-1', data: 'c2VjcmV0' });
    expectJson(await api.get('/global-secrets/gs-1'), 200, {
      type: 'Secret',
      name: 'gs-1',
      creationTime: '2024-05-06T07:08:09.000Z',
      modificationTime: '2024-05-06T07:08:09.000Z',
      data: 'c2VjcmV0',
    });
  });

  it('refuses any other type', async () => {
    expectJson(
      await api.put('/global-secrets/gs-1', { type: 'Mesh', name: 'gs-1', data: 'c2VjcmV0' }),
      400,
      invalid(PROCESS, ['type', 'type from the URL has to be the same as in body']),
    );
  });
});

describe('zones', () => {
  it('accepts a name that is one DNS label', async () => {
    expectJson(await api.put('/zones/zone-1', { type: 'Zone', name: 'zone-1' }), 201, {});
  });

  it('refuses a dotted name with a `name` violation', async () => {
    const reply = await api.put('/zones/east.zone', { type: 'Zone', name: 'east.zone' });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ title: PROCESS, detail: 'Resource is not valid', invalid_parameters: [{ field: 'name' }] });
    expect(reply.body.invalid_parameters).toHaveLength(1);
    expect((await api.get('/zones/east.zone')).status).toBe(404);
  });
});

describe('a mesh that does not exist', () => {
  it.each(MESH_SCOPED_EXAMPLES)('refuses to create a $type in it with 400 Mesh is not found', async ({ type, path, spec }) => {
    const before = await api.snapshot();
    expectJson(
      await api.put(`/meshes/nowhere/${path}/res-1`, { type, mesh: 'nowhere', name: 'res-1', ...spec }),
      400,
      stdError(400, 'Could not create a resource', 'Mesh is not found', [['mesh', 'mesh of name nowhere is not found']]),
    );
    expect(await api.snapshot()).toEqual(before);
  });

  it('has empty lists', async () => {
    expectJson(await api.get('/meshes/nowhere/traffic-routes'), 200, { total: 0, items: [], next: null });
  });
});

describe('refusals by the resource manager', () => {
  const provided = (secretPrefix: string) => ({
    enabledBackend: 'ca-1',
    backends: [{ name: 'ca-1', type: 'provided', conf: { cert: { secret: `${secretPrefix}-cert` }, key: { secret: `${secretPrefix}-key` } } }],
  });
  const missingSecret = (mesh: string, name: string) => `could not load data: Resource not found: type="Secret" name="${name}" mesh="${mesh}"`;

  it('titles a refused create "Could not create a resource"', async () => {
    expectJson(
      await api.put('/meshes/secure', emptyMesh('secure', { mtls: provided('ca') })),
      400,
      invalid(
        'Could not create a resource',
        ['mtls.backends[0].conf.cert', missingSecret('secure', 'ca-key')],
        ['mtls.backends[0].conf.key', missingSecret('secure', 'ca-key')],
      ),
    );
    expect((await api.get('/meshes/secure')).status).toBe(404);
  });

  it('titles a refused update "Could not update a resource"', async () => {
    await api.put('/meshes/secure', emptyMesh('secure'));
    const reply = await api.put('/meshes/secure', emptyMesh('secure', { mtls: provided('ca') }));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ title: 'Could not update a resource', detail: 'Resource is not valid' });
    expect(reply.body.invalid_parameters.map((p: { field: string }) => p.field)).toEqual(['mtls.backends[0].conf.cert', 'mtls.backends[0].conf.key']);
  });

  it('refuses a dataplane that breaks the constraints of its mesh with 400, not 500', async () => {
    const constraints = { dataplaneProxy: { requirements: [{ tags: { 'mesh.io/service': 'web' } }] } };
    await api.put('/meshes/strict', emptyMesh('strict', { constraints }));
    const reply = await api.put('/meshes/strict/dataplanes/dp-1', dataplane('dp-1', { mesh: 'strict', tags: { 'mesh.io/service': 'backend' } }));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ title: 'Could not create a resource', detail: 'Resource is not valid' });
    expect(reply.body.causes).toHaveLength(1);
    expect(reply.body.causes[0].message).toMatch(/^dataplane cannot be a member of mesh "strict" because its tags /);
  });
});

describe('concurrent writes', () => {
  it('create the resource once and answer the others with 200 or 409 Conflict, never 500', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, () => api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'))));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    for (const reply of replies.filter((r) => r.status === 409)) {
      expect(reply.body).toMatchObject({ type: '/std-errors', status: 409, title: 'Conflict' });
      expect(reply.body.detail).toMatch(/^resource (already exists|conflict): type="TrafficRoute" name="tr-1" mesh="default"$/);
    }
    expect(statuses.every((s) => s === 200 || s === 201 || s === 409)).toBe(true);
  });
});

describe('GET one', () => {
  it('answers 404 Not found for a missing resource', async () => {
    expectJson(await api.get('/meshes/default/traffic-routes/missing'), 404, stdError(404, 'Could not retrieve a resource', 'Not found'));
  });

  it('refuses an unknown format', async () => {
    expectJson(
      await api.get('/meshes/default/traffic-routes/route-all-default?format=xml'),
      400,
      stdError(400, 'invalid format', 'Resource is not valid', [['', '"format" must be one of ["k8s", "kubernetes", "universal"]']]),
    );
  });

  it('accepts the universal format', async () => {
    expect((await api.get('/meshes/default/traffic-routes/route-all-default?format=universal')).body.name).toBe('route-all-default');
  });
});

describe('DELETE', () => {
  it('answers 200 with an empty JSON object, and the resource is gone', async () => {
    await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'));
    expectJson(await api.del('/meshes/default/traffic-routes/tr-1'), 200, {});
    expect((await api.get('/meshes/default/traffic-routes/tr-1')).status).toBe(404);
  });

  it('answers 404 Not found for a missing resource', async () => {
    expectJson(await api.del('/meshes/default/traffic-routes/missing'), 404, stdError(404, 'Could not delete a resource', 'Not found'));
  });

  it('refuses to delete a mesh that still has dataplanes', async () => {
    await api.put('/meshes/default/dataplanes/dp-1', dataplane('dp-1'));
    expectJson(
      await api.del('/meshes/default'),
      400,
      invalid('Could not delete a resource', ['mesh', 'unable to delete mesh, there are still some dataplanes attached']),
    );
    expect((await api.get('/meshes/default')).status).toBe(200);
  });

  it('deletes what a mesh owns along with it, and nothing of other meshes', async () => {
    await api.put('/meshes/other', emptyMesh('other'));
    await api.put('/meshes/default/secrets/s-1', secret('s-1', 'hush'));
    await api.put('/meshes/default/external-services/es-1', externalService('es-1', { 'mesh.io/service': 'es-1' }));
    await api.put('/meshes/default/rate-limits/rl-1', {
      type: 'RateLimit',
      mesh: 'default',
      name: 'rl-1',
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': 'web' } }],
      conf: { http: { requests: 1, interval: '1s' } },
    });
    await api.put('/meshes/other/traffic-routes/tr-1', trafficRoute('tr-1', 'other'));

    expectJson(await api.del('/meshes/default'), 200, {});
    const left = await api.snapshot();
    expect(left.filter((line) => / default\//.test(line))).toEqual([]);
    expect(left.some((line) => line.startsWith('TrafficRoute other/tr-1 '))).toBe(true);
    for (const path of ['traffic-routes', 'secrets', 'external-services', 'rate-limits', 'traffic-permissions']) {
      expectJson(await api.get(`/meshes/default/${path}`), 200, { total: 0, items: [], next: null });
    }
  });

  it('refuses to delete a secret that a provided mTLS backend uses', async () => {
    const ca = await generateCa();
    await api.put('/meshes/secure', emptyMesh('secure'));
    await api.put('/meshes/secure/secrets/ca-cert', secret('ca-cert', ca.cert, 'secure'));
    await api.put('/meshes/secure/secrets/ca-key', secret('ca-key', ca.key, 'secure'));
    const mtls = {
      enabledBackend: 'ca-1',
      backends: [{ name: 'ca-1', type: 'provided', conf: { cert: { secret: 'ca-cert' }, key: { secret: 'ca-key' } } }],
    };
    expectJson(await api.put('/meshes/secure', emptyMesh('secure', { mtls })), 200, {});

    expectJson(
      await api.del('/meshes/secure/secrets/ca-key'),
      400,
      invalid('Could not delete a resource', [
        'name',
        'The secret "ca-key" that you are trying to remove is currently in use in Mesh "secure" in mTLS backend "ca-1". Please remove the reference from the "ca-1" backend before removing the secret.',
      ]),
    );
    expect((await api.get('/meshes/secure/secrets/ca-key')).status).toBe(200);
  });

  it('deletes a secret no mTLS backend uses', async () => {
    await api.put('/meshes/default/secrets/s-1', secret('s-1', 'hush'));
    expectJson(await api.del('/meshes/default/secrets/s-1'), 200, {});
  });
});

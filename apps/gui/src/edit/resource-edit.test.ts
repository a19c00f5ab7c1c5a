import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ApiError } from '../api/client.js';
import { apiProblems, externalServiceKind, locateProblems, meshKind, writeAccess, writeRequest, type EditableKind } from './resource-edit.js';
import { exampleYaml, parseSource, storedYaml } from './yaml-source.js';

const meshTimeouts: EditableKind = { name: 'MeshTimeout', path: 'meshtimeouts', singularDisplayName: 'Mesh Timeout', pluralDisplayName: 'Mesh Timeouts', meshScoped: true, readOnly: false };
const EXAMPLES = {
  '/meshes/{mesh}/meshtimeouts/{name}': { type: 'MeshTimeout', mesh: 'demo', name: 'backend-timeout', spec: { targetRef: { kind: 'Mesh' } } },
  '/meshes/{name}': { type: 'Mesh', name: 'demo', mtls: { enabledBackend: 'ca-1' } },
};

describe('what the editor starts from', () => {
  it('creates from the kind’s documented example, in the page’s mesh', () => {
    expect(parse(exampleYaml({ kind: meshTimeouts, mesh: 'shop' }, EXAMPLES))).toEqual({ type: 'MeshTimeout', mesh: 'shop', name: 'backend-timeout', spec: { targetRef: { kind: 'Mesh' } } });
    expect(exampleYaml({ kind: meshTimeouts, mesh: 'shop' }, EXAMPLES).split('\n').slice(0, 3)).toEqual(['type: MeshTimeout', 'mesh: shop', 'name: backend-timeout']);
    expect(parse(exampleYaml({ kind: meshKind('standalone') }, EXAMPLES))).toEqual(EXAMPLES['/meshes/{name}']);
    // A kind without an example starts from its type and an empty name.
    expect(parse(exampleYaml({ kind: externalServiceKind('standalone'), mesh: 'shop' }, EXAMPLES))).toEqual({ type: 'ExternalService', mesh: 'shop', name: '' });
  });

  it('changes the stored resource, without the times the control plane keeps', () => {
    const yaml = storedYaml({ type: 'Mesh', name: 'shop', creationTime: '2026-01-01T00:00:00Z', modificationTime: '2026-01-01T00:00:00Z', mtls: {} });
    expect(parse(yaml)).toEqual({ type: 'Mesh', name: 'shop', mtls: {} });
  });
});

describe('the request the YAML makes', () => {
  it('creates under the name the YAML gives, in the page’s mesh', () => {
    const body = { type: 'MeshTimeout', mesh: 'shop', name: 'new-one', spec: {} };
    expect(writeRequest({ kind: meshTimeouts, mesh: 'shop' }, body)).toEqual({ ok: true, request: { mesh: 'shop', name: 'new-one', body } });
    expect(writeRequest({ kind: meshKind('standalone') }, { type: 'Mesh', name: 'm' })).toEqual({ ok: true, request: { name: 'm', body: { type: 'Mesh', name: 'm' } } });
  });

  it('refuses another kind, another mesh, a missing name or a renamed resource, at those fields', () => {
    const result = writeRequest({ kind: meshTimeouts, mesh: 'shop', name: 'old' }, { type: 'MeshRetry', mesh: 'other', name: 'new' });
    expect(result.ok || result.problems.map((problem) => problem.field)).toEqual(['type', 'mesh', 'name']);
    const unnamed = writeRequest({ kind: meshTimeouts, mesh: 'shop' }, { type: 'MeshTimeout', mesh: 'shop' });
    expect(unnamed.ok || unnamed.problems).toEqual([{ field: 'name', message: 'must be the name of the resource' }]);
    const notAMapping = writeRequest({ kind: meshTimeouts, mesh: 'shop' }, ['a']);
    expect(notAMapping.ok || notAMapping.problems[0]?.line).toBe(1);
  });
});

describe('the API’s errors in the editor', () => {
  const error = new ApiError(400, {
    type: '/std-errors',
    status: 400,
    title: 'Could not process a resource',
    detail: 'Resource is not valid',
    details: 'Resource is not valid',
    causes: [
      { field: 'spec.to[0].default.http.requestTimeout', message: 'must not be negative when defined' },
      { field: 'name', message: 'invalid characters' },
    ],
  });

  it('are each violation at the line of its field, in line order', () => {
    const parsed = parseSource('type: MeshTimeout\nmesh: shop\nname: Bad_Name\nspec:\n  to:\n    - default:\n        http:\n          requestTimeout: -1s\n');
    if (!parsed.ok) throw new Error('parsed');
    expect(locateProblems(apiProblems(error), parsed.locate)).toEqual([
      { field: 'name', message: 'invalid characters', line: 3 },
      { field: 'spec.to[0].default.http.requestTimeout', message: 'must not be negative when defined', line: 8 },
    ]);
  });

  it('are the detail alone when the API names no field', () => {
    expect(apiProblems(new ApiError(405, { type: '/std-errors', status: 405, title: 'Method Not Allowed', detail: 'read-only', details: 'read-only' }))).toEqual([{ message: 'read-only' }]);
  });
});

describe('who may change what', () => {
  it('nobody on a read-only API, whatever the kind', () => {
    expect(writeAccess(meshTimeouts, true, 'standalone')).toEqual({ allowed: false, reason: expect.stringContaining('apiServer.readOnly') });
  });

  it('on a zone of a multizone deployment, not the kinds the global owns', () => {
    expect(writeAccess(meshKind('zone'), false, 'zone')).toEqual({ allowed: false, reason: expect.stringContaining('global control plane') });
    expect(writeAccess({ ...meshTimeouts, readOnly: true }, false, 'zone')).toEqual({ allowed: false, reason: 'Mesh Timeouts are changed on the global control plane, which sends them to this zone.' });
  });

  it('every caller elsewhere: the API lets anyone write these kinds', () => {
    for (const mode of ['standalone', 'global'] as const) {
      expect(writeAccess(meshKind(mode), false, mode)).toEqual({ allowed: true });
      expect(writeAccess(externalServiceKind(mode), false, mode)).toEqual({ allowed: true });
    }
  });
});

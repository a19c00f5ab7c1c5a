import { describe, expect, it } from 'vitest';
import { fieldSegments, parseSource } from './yaml-source.js';

const MESH_TIMEOUT = `type: MeshTimeout
mesh: shop
name: web-to-backend
spec:
  targetRef:
    kind: Mesh
  to:
    - targetRef:
        kind: MeshService
        name: backend
      default:
        connectionTimeout: 5s
        http:
          requestTimeout: -1s
`;

describe('the YAML of the editor', () => {
  it('is read as the resource it holds', () => {
    const parsed = parseSource(MESH_TIMEOUT);
    expect(parsed.ok && parsed.value).toEqual({
      type: 'MeshTimeout',
      mesh: 'shop',
      name: 'web-to-backend',
      spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { connectionTimeout: '5s', http: { requestTimeout: '-1s' } } }] },
    });
  });

  it('places a field path of the API on the line of that field', () => {
    const parsed = parseSource(MESH_TIMEOUT);
    if (!parsed.ok) throw new Error('parsed');
    expect(parsed.locate('spec.to[0].default.http.requestTimeout')).toBe(14);
    expect(parsed.locate('spec.to[0].targetRef.name')).toBe(10);
    expect(parsed.locate('spec.to[0]')).toBe(8);
    expect(parsed.locate('name')).toBe(3);
  });

  it('places a field the YAML leaves out on the deepest part of its path that is there', () => {
    const parsed = parseSource(MESH_TIMEOUT);
    if (!parsed.ok) throw new Error('parsed');
    expect(parsed.locate('spec.from')).toBe(4);
    expect(parsed.locate('spec.to[3].default')).toBe(7);
    expect(parsed.locate('labels')).toBe(1);
  });

  it('finds keys written in brackets, dots in them included', () => {
    const parsed = parseSource('type: ExternalService\ntags:\n  mesh.io/service: httpbin\n  "k": v\n');
    if (!parsed.ok) throw new Error('parsed');
    expect(parsed.locate('tags["mesh.io/service"]')).toBe(3);
    expect(fieldSegments('conf.split[0].weight')).toEqual(['conf', 'split', 0, 'weight']);
    expect(fieldSegments('networking.inbound[1].tags["mesh.io/service"]')).toEqual(['networking', 'inbound', 1, 'tags', 'mesh.io/service']);
  });

  it('reports syntax errors with their line', () => {
    const parsed = parseSource('type: Mesh\nname: a\nmtls:\n  - a\n  b: c\n');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((problem) => problem.line)).toEqual([5]);
    expect(parsed.problems.every((problem) => problem.message.length > 0)).toBe(true);
  });

  it('refuses a key written twice, at its line', () => {
    const parsed = parseSource('type: Mesh\nname: a\nname: b\n');
    expect(parsed.ok || parsed.problems).toEqual([expect.objectContaining({ line: 3 })]);
  });
});

import { defineKind, KINDS, type KindDescriptor } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { kindColumns, table } from './output.js';

const created = new Date(Date.now() - 30_000).toISOString();
const names = { displayName: 'Test Kinds', singularDisplayName: 'Test Kind', validate: () => [], affects: 'nothing' } as const;
/** Tables never decode: a kind of this test needs its spec type, not a schema. */
const schemaOf = <Spec>() => ({}) as KindDescriptor<Spec>['schema'];

describe('the table of a kind', () => {
  it("shows a kind's own columns from its descriptor, between its name and its age, read from the spec wherever it travels", () => {
    const nested = defineKind({
      ...names,
      name: 'TestNested',
      path: 'testnesteds',
      scope: 'mesh',
      specField: 'spec',
      schema: schemaOf<{ port: number }>(),
      cliColumns: [{ header: 'PORT', value: (spec) => String(spec.port) }],
    });
    const resource = { type: 'TestNested', mesh: 'default', name: 'one', creationTime: created, spec: { port: 8080 } };
    expect(table(kindColumns(nested), [resource])).toMatch(/^MESH {6}NAME {3}PORT {3}AGE\ndefault {3}one {4}8080 {3}\d+s\n$/);

    const flat = defineKind({ ...names, name: 'TestFlat', path: 'test-flats', scope: 'global', schema: schemaOf<{ zone: string }>(), cliColumns: [{ header: 'ZONE', value: (spec) => spec.zone }] });
    expect(table(kindColumns(flat), [{ type: 'TestFlat', name: 'two', creationTime: created, zone: 'east' }])).toMatch(/^NAME {3}ZONE {3}AGE\ntwo {4}east {3}\d+s\n$/);
  });

  it('shows its mesh, name and age for a kind without columns of its own', () => {
    const plain = defineKind({ ...names, name: 'TestPlain', path: 'test-plains', scope: 'mesh', schema: schemaOf<object>() });
    expect(kindColumns(plain).map((column) => column.header)).toEqual(['MESH', 'NAME', 'AGE']);
  });

  it("prints meshes and dataplanes with the registry's columns, as the reference CLI does", () => {
    const columns = (name: string) => kindColumns(KINDS.find((kind) => kind.name === name)!).map((column) => column.header);
    expect(columns('Mesh')).toEqual(['NAME', 'mTLS', 'METRICS', 'LOGGING', 'TRACING', 'AGE']);
    expect(columns('Dataplane')).toEqual(['MESH', 'NAME', 'TAGS', 'AGE']);
    expect(columns('MeshTimeout')).toEqual(['MESH', 'NAME', 'AGE']);
  });
});

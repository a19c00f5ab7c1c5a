import { defineKind, KINDS, type KindDescriptor } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { kindColumns, policiesText, table } from './output.js';

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

describe('the policies of a proxy as text', () => {
  it('lists a builtin gateway by listener, host, route and destination, each with its policy kinds and names', () => {
    const named = (name: string) => ({ type: 'ignored', name });
    const text = policiesText({
      kind: 'MeshGatewayDataplane',
      policies: { TrafficLog: named('edge-log') },
      listeners: [
        {
          protocol: 'HTTP',
          port: 8080,
          hosts: [
            {
              hostName: '*',
              routes: [
                {
                  route: 'to-shop',
                  destinations: [
                    { tags: { 'mesh.io/service': 'cart' }, policies: { Retry: named('cart-retries'), Timeout: named('short') } },
                    { tags: { 'mesh.io/service': 'shop' }, policies: { Timeout: named('short') } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(text).toBe(
      [
        'MESHGATEWAY:',
        '  TrafficLog',
        '    edge-log',
        '',
        'LISTENER (HTTP:8080):',
        '  *:',
        '    ROUTE to-shop:',
        '      SERVICE cart:',
        '        Retry',
        '          cart-retries',
        '        Timeout',
        '          short',
        '',
        '      SERVICE shop:',
        '        Timeout',
        '          short',
        '',
        '',
      ].join('\n'),
    );
  });

  it('lists every policy of a kind on its own line, and nothing for a proxy without policies', () => {
    const text = policiesText({ kind: 'SidecarDataplane', items: [{ type: 'service', name: 'backend', matchedPolicies: { FaultInjection: [{ name: 'slow' }, { name: 'broken' }] } }] });
    expect(text).toBe('SERVICE backend:\n  FaultInjection\n    slow\n    broken\n\n');
    expect(policiesText({ kind: 'SidecarDataplane', items: [] })).toBe('');
  });
});

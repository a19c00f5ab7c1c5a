import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshAccessLogKind } from './mesh-access-log.js';

const violations = (yaml: string) => specViolationsOf(meshAccessLogKind, parse(yaml));
/** A policy on service web whose inbound traffic from the whole mesh is logged to `backends`. */
const inbound = (backends: string) => `
targetRef: {kind: MeshService, name: web}
from:
  - targetRef: {kind: Mesh}
    default:
      backends: ${backends}
`;

describe('MeshAccessLog', () => {
  it('accepts TCP, file and OpenTelemetry backends, with or without a format', () => {
    const spec = parse(`
      targetRef: {kind: MeshService, name: web}
      from:
        - targetRef: {kind: Mesh}
          default:
            backends:
              - type: Tcp
                tcp:
                  format: {type: Json, json: [{key: start_time, value: "%START_TIME%"}]}
                  address: 127.0.0.1:5000
      to:
        - targetRef: {kind: MeshService, name: backend}
          default:
            backends:
              - type: File
                file: {format: {type: Plain, plain: '{"start": "%START_TIME%"}'}, path: /tmp/logs.txt}
              - type: File
                file: {path: /var/log/mesh.log}
              - type: OpenTelemetry
                openTelemetry: {endpoint: otel-collector:4317, body: {kvlistValue: {values: [{key: status}]}}}
    `);
    expect(specViolationsOf(meshAccessLogKind, spec)).toEqual([]);
    expect(storedSpec(meshAccessLogKind, spec)).toMatchObject({ to: [{ default: { backends: [{ type: 'File' }, { type: 'File' }, { openTelemetry: { body: { kvlistValue: {} } } }] } }] });
  });

  it('accepts an empty list of backends, which turns logging off', () => {
    expect(violations(inbound('[]'))).toEqual([]);
    expect(storedSpec(meshAccessLogKind, parse(inbound('[]')))).toMatchObject({ from: [{ default: { backends: [] } }] });
  });

  it('needs a from or a to entry, each with its backends', () => {
    expect(violations('targetRef: {kind: Mesh}')).toEqual([{ field: 'spec', message: "at least one of 'from', 'to' has to be defined" }]);
    expect(violations(`
      targetRef: {kind: Mesh}
      to: [{targetRef: {kind: Mesh}}]
      from: [{targetRef: {kind: Mesh}}]
    `)).toEqual([
      { field: 'spec.to[0].default.backends', message: 'must be defined' },
      { field: 'spec.from[0].default.backends', message: 'must be defined' },
    ]);
  });

  it('takes clients from the whole mesh, destinations from the mesh or a service', () => {
    expect(violations(`
      targetRef: {kind: MeshHTTPRoute, name: route}
      to: [{targetRef: {kind: MeshSubset}, default: {backends: []}}]
      from: [{targetRef: {kind: MeshService, name: web}, default: {backends: []}}]
    `)).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
      { field: 'spec.from[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('needs a valid file path and TCP address', () => {
    expect(violations(inbound(`
      - {type: File, file: {path: '#not_valid'}}
      - {type: File, file: {path: ''}}
      - {type: Tcp, tcp: {address: not_valid_url}}
    `))).toEqual([
      { field: 'spec.from[0].default.backends[0].file.path', message: 'file backend requires a valid path' },
      { field: 'spec.from[0].default.backends[1].file.path', message: 'file backend requires a valid path' },
      { field: 'spec.from[0].default.backends[2].tcp.address', message: 'tcp backend requires valid address' },
    ]);
  });

  it('needs the section its type names', () => {
    expect(violations(inbound('[{type: File}, {type: Tcp}, {type: OpenTelemetry}]'))).toEqual([
      { field: 'spec.from[0].default.backends[0].file', message: 'must be defined' },
      { field: 'spec.from[0].default.backends[1].tcp', message: 'must be defined' },
      { field: 'spec.from[0].default.backends[2].openTelemetry', message: 'must be defined' },
    ]);
  });

  it('needs the plain text or the JSON fields its format type names, not empty', () => {
    expect(violations(inbound(`
      - {type: File, file: {path: /tmp/a, format: {type: Plain}}}
      - {type: Tcp, tcp: {address: http://logs.com, format: {type: Json}}}
      - {type: File, file: {path: /tmp/a, format: {type: Plain, plain: ''}}}
      - {type: Tcp, tcp: {address: http://logs.com, format: {type: Json, json: []}}}
    `))).toEqual([
      { field: 'spec.from[0].default.backends[0].file.format.plain', message: 'must be defined' },
      { field: 'spec.from[0].default.backends[1].tcp.format.json', message: 'must be defined' },
      { field: 'spec.from[0].default.backends[2].file.format.plain', message: 'must not be empty' },
      { field: 'spec.from[0].default.backends[3].tcp.format.json', message: 'must not be empty' },
    ]);
  });

  it('needs each JSON field to have a key and a value that make a JSON object', () => {
    expect(violations(inbound(`
      - type: File
        file:
          path: /tmp/logs.txt
          format:
            type: Json
            json: [{value: "%START_TIME%"}, {key: start_time}, {key: '"', value: x}]
    `))).toEqual([
      { field: 'spec.from[0].default.backends[0].file.format.json[0].key', message: 'key cannot be empty' },
      { field: 'spec.from[0].default.backends[0].file.format.json[1].value', message: 'value cannot be empty' },
      { field: 'spec.from[0].default.backends[0].file.format.json[2]', message: 'is not a valid JSON object' },
    ]);
  });

  it('checks backend and format types and required fields against the schema first', () => {
    expect(violations(inbound(`
      - {type: Syslog}
      - {type: File, file: {format: {plain: x}}}
      - {type: OpenTelemetry, openTelemetry: {endpoint: ''}}
    `))).toEqual([
      { field: 'spec.from[0].default.backends[0].type', message: 'in body should be one of [Tcp File OpenTelemetry]' },
      { field: 'spec.from[0].default.backends[1].file.format.type', message: 'in body is required' },
      { field: 'spec.from[0].default.backends[1].file.path', message: 'in body is required' },
      { field: 'spec.from[0].default.backends[2].openTelemetry.endpoint', message: 'in body should be at least 1 chars long' },
    ]);
  });
});

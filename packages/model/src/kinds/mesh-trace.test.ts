import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshTraceKind } from './mesh-trace.js';

const violations = (yaml: string) => specViolationsOf(meshTraceKind, parse(yaml));
/** Tracing of service backend configured by `conf`. */
const traces = (conf: string) => `
targetRef: {kind: MeshService, name: backend}
default: ${conf}
`;
const datadog = (url: string) => traces(`{backends: [{type: Datadog, datadog: {url: "${url}"}}]}`);
const URL = 'spec.default.backends[0].datadog.url';

describe('MeshTrace', () => {
  it('accepts one backend of each type, sampling and tags', () => {
    const spec = parse(traces(`
      backends: [{type: Zipkin, zipkin: {url: "http://jaeger-collector.mesh-observability:9411/api/v2/spans", apiVersion: httpProto, traceId128bit: true}}]
      sampling: {overall: 80, client: "99.5", random: 10}
      tags:
        - {name: team, literal: core}
        - {name: env, header: {name: x-env, default: prod}}
    `));
    expect(specViolationsOf(meshTraceKind, spec)).toEqual([]);
    expect(storedSpec(meshTraceKind, spec)).toEqual(spec);
    expect(violations(datadog('http://intake.datadoghq.eu:443'))).toEqual([]);
    expect(violations(traces('{backends: [{type: OpenTelemetry, openTelemetry: {endpoint: "otel-collector:4317"}}]}'))).toEqual([]);
    expect(violations(traces('{backends: []}'))).toEqual([]);
  });

  it('needs its backends, zero or one of them', () => {
    expect(violations('targetRef: {kind: MeshService, name: backend}')).toEqual([{ field: 'spec.default.backends', message: 'must be defined' }]);
    expect(violations(traces('{backends: [{type: Zipkin, zipkin: {url: "http://a:9411"}}, {type: Zipkin, zipkin: {url: "http://b:9411"}}]}'))).toEqual([
      { field: 'spec.default.backends', message: 'must have zero or one backend defined' },
    ]);
    expect(storedSpec(meshTraceKind, parse('targetRef: {kind: Mesh}'))).toEqual({ targetRef: { kind: 'Mesh' }, default: {} });
  });

  it('needs the section its backend type names', () => {
    for (const [type, field] of [['Datadog', 'datadog'], ['Zipkin', 'zipkin'], ['OpenTelemetry', 'openTelemetry']]) {
      expect(violations(traces(`{backends: [{type: ${type}}]}`))).toEqual([{ field: `spec.default.backends[0].${field}`, message: 'must be defined' }]);
    }
  });

  it('needs a valid Zipkin URL', () => {
    expect(violations(traces('{backends: [{type: Zipkin, zipkin: {url: ""}}]}'))).toEqual([{ field: 'spec.default.backends[0].zipkin.url', message: 'must not be empty' }]);
    expect(violations(traces('{backends: [{type: Zipkin, zipkin: {url: not_valid_url}}]}'))).toEqual([{ field: 'spec.default.backends[0].zipkin.url', message: 'must be a valid url' }]);
  });

  it('needs a Datadog agent address: http, a port, nothing else', () => {
    expect(violations(datadog('not_valid_url'))).toEqual([{ field: URL, message: 'must be a valid url' }]);
    expect(violations(datadog('http://intake.datadoghq.eu'))).toEqual([{ field: URL, message: 'port must be defined' }]);
    expect(violations(datadog('http://intake.datadoghq.eu:999999'))).toEqual([{ field: URL, message: 'port must be a valid (1-65535)' }]);
    expect(violations(datadog('sql://intake.datadoghq.eu:8126'))).toEqual([{ field: URL, message: 'scheme must be http' }]);
    expect(violations(datadog('http://intake.datadoghq.eu:8126/some/path'))).toEqual([{ field: URL, message: 'path must not be defined' }]);
    expect(violations(datadog('http://user@intake.datadoghq.eu:8126/?q=1'))).toEqual([
      { field: URL, message: 'user must not be defined' },
      { field: URL, message: 'path must not be defined' },
      { field: URL, message: 'query must not be defined' },
    ]);
  });

  it('needs named tags with a literal or a header, one of them', () => {
    expect(violations(traces('{backends: [], tags: [{name: "", literal: example}, {name: example}, {name: both, literal: a, header: {name: b}}]}'))).toEqual([
      { field: 'spec.default.tags[0].name', message: 'must not be empty' },
      { field: 'spec.default.tags[1]', message: 'tag must have only one type defined: header, literal' },
      { field: 'spec.default.tags[2]', message: 'tag must have only one type defined: header, literal' },
    ]);
  });

  it('samples percentages between 0 and 100', () => {
    expect(violations(traces('{backends: [], sampling: {overall: 101}}'))).toEqual([{ field: 'spec.default.sampling.overall', message: 'must be between 0 and 100' }]);
    expect(violations(traces('{backends: [], sampling: {overall: xyz, client: xyz, random: xyz}}'))).toEqual(
      ['client', 'random', 'overall'].map((field) => ({ field: `spec.default.sampling.${field}`, message: 'string is not a number' })),
    );
  });

  it('checks backend types and required fields against the schema first', () => {
    expect(violations(traces('{backends: [{type: Jaeger}, {type: Zipkin, zipkin: {apiVersion: v3}}], tags: [{header: {default: x}}]}'))).toEqual([
      { field: 'spec.default.backends[0].type', message: 'in body should be one of [Zipkin Datadog OpenTelemetry]' },
      { field: 'spec.default.backends[1].zipkin.url', message: 'in body is required' },
      { field: 'spec.default.backends[1].zipkin.apiVersion', message: 'in body should be one of [httpJson httpProto]' },
      { field: 'spec.default.tags[0].name', message: 'in body is required' },
      { field: 'spec.default.tags[0].header.name', message: 'in body is required' },
    ]);
  });
});

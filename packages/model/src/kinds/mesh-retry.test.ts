import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshRetryKind } from './mesh-retry.js';

const violations = (yaml: string) => specViolationsOf(meshRetryKind, parse(yaml));
/** Retries of the whole mesh's outbound traffic. */
const retries = (conf: string) => `
targetRef: {kind: Mesh}
to:
  - targetRef: {kind: Mesh}
    default: ${conf}
`;
const AT = 'spec.to[0].default.conf';

describe('MeshRetry', () => {
  it('accepts TCP, HTTP and gRPC retries with every condition', () => {
    const spec = parse(`
      targetRef: {kind: Mesh}
      to:
        - targetRef: {kind: Mesh}
          default: {tcp: {maxConnectAttempt: 5}}
        - targetRef: {kind: MeshService, name: backend}
          default:
            tcp: {maxConnectAttempt: 5}
            http:
              numRetries: 10
              perTryTimeout: 20s
              backOff: {baseInterval: 15s, maxInterval: 20m}
              rateLimitedBackOff:
                resetHeaders: [{name: retry-after-http, format: Seconds}, {name: x-retry-after-http, format: UnixTimestamp}]
                maxInterval: 21m
              retryOn: [5xx, GatewayError, Reset, Retriable4xx, ConnectFailure, EnvoyRatelimited, RefusedStream, Http3PostConnectFailure,
                HttpMethodConnect, HttpMethodDelete, HttpMethodGet, HttpMethodHead, HttpMethodOptions, HttpMethodPatch, HttpMethodPost,
                HttpMethodPut, HttpMethodTrace, "500", "409", "503"]
              retriableRequestHeaders: [{type: Prefix, name: x-my-header-1, value: mesh-}, {type: RegularExpression, name: x-my-header-2, value: ".*"}]
              retriableResponseHeaders: [{type: Exact, name: x-my-header-3, value: exact-value}]
              hostSelection: [{predicate: OmitPreviousHosts}, {predicate: OmitHostsWithTags, tags: {version: v1}}, {predicate: OmitPreviousPriorities, updateFrequency: 2}]
              hostSelectionMaxAttempts: 3
            grpc:
              numRetries: 10
              perTryTimeout: 20s
              backOff: {baseInterval: 15s, maxInterval: 20m}
              rateLimitedBackOff: {resetHeaders: [{name: retry-after-grpc, format: Seconds}], maxInterval: 21m}
              retryOn: [Canceled, DeadlineExceeded, Internal, ResourceExhausted, Unavailable]
    `);
    expect(specViolationsOf(meshRetryKind, spec)).toEqual([]);
    expect(storedSpec(meshRetryKind, spec)).toMatchObject({ to: [{}, { default: { http: { backOff: { maxInterval: '20m0s' }, rateLimitedBackOff: { maxInterval: '21m0s' } } } }] });
  });

  it('accepts a single setting and empty lists', () => {
    for (const conf of ['{http: {numRetries: 5}}', '{http: {numRetries: 5, retryOn: [], retriableRequestHeaders: [], retriableResponseHeaders: []}}', '{grpc: {numRetries: 5, retryOn: []}}', '{http: {retryOn: ["500", "409"]}}']) {
      expect(violations(retries(conf)), conf).toEqual([]);
    }
  });

  it('needs destinations, only the whole mesh behind a gateway', () => {
    expect(violations('{targetRef: {kind: MeshService, name: backend}, to: []}')).toEqual([{ field: 'spec.to', message: 'needs at least one item' }]);
    expect(violations(`
      targetRef: {kind: Mesh}
      to:
        - {targetRef: {kind: MeshSubset, tags: {version: v1}}, default: {http: {numRetries: 1}}}
        - {targetRef: {kind: MeshServiceSubset, name: backend, tags: {mesh.io/zone: us-east}}, default: {grpc: {numRetries: 1}}}
    `)).toEqual([
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[1].targetRef.kind', message: 'value is not supported' },
    ]);
    expect(violations('{targetRef: {kind: MeshGateway, name: gateway-1}, to: [{targetRef: {kind: MeshService, name: web}, default: {tcp: {maxConnectAttempt: 5}}}]}')).toEqual([
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('needs a section, and something in each section given', () => {
    expect(violations(retries('{}'))).toEqual([{ field: AT, message: "at least one of the 'tcp', 'http', 'grpc' must be specified" }]);
    expect(violations(retries('{tcp: {}, http: {}, grpc: {}}'))).toEqual([
      { field: `${AT}.tcp`, message: 'must not be empty' },
      { field: `${AT}.http`, message: 'must not be empty' },
      { field: `${AT}.grpc`, message: 'must not be empty' },
    ]);
  });

  it('needs back-off intervals and reset headers', () => {
    for (const section of ['http', 'grpc']) {
      expect(violations(retries(`{${section}: {backOff: {}, rateLimitedBackOff: {maxInterval: 0s}}}`))).toEqual([
        { field: `${AT}.${section}.backOff`, message: 'must not be empty' },
        { field: `${AT}.${section}.rateLimitedBackOff.maxInterval`, message: 'must be defined and greater than zero' },
        { field: `${AT}.${section}.rateLimitedBackOff.resetHeaders`, message: 'must be defined' },
      ]);
    }
  });

  it('knows the retry conditions of each protocol, and HTTP statuses by number', () => {
    expect(violations(retries('{http: {retryOn: [WRONG_VALUE, 5XX, reset, DEADLINE_EXCEEDED, "123", "952", "503"]}}'))).toEqual(
      ['WRONG_VALUE', '5XX', 'reset', 'DEADLINE_EXCEEDED', '123', '952'].map((item, i) => ({ field: `${AT}.http.retryOn[${i}]`, message: `unknown item '${item}'` })),
    );
    expect(violations(retries('{grpc: {retryOn: ["500", reset, wrong]}}'))).toEqual(
      ['500', 'reset', 'wrong'].map((item, i) => ({ field: `${AT}.grpc.retryOn[${i}]`, message: `unknown item '${item}'` })),
    );
  });

  it('checks host selection predicates', () => {
    expect(violations(retries(`
      http:
        hostSelection:
          - predicate: OmitHostsWithTags
          - predicate: OmitPreviousPriorities
            updateFrequency: 3
          - predicate: OmitPreviousHosts
          - predicate: OmitPreviousPriorities
          - predicate: IncorrectPredicateType
    `))).toEqual([
      { field: `${AT}.http.hostSelection[0].tags`, message: 'must be defined' },
      { field: `${AT}.http.hostSelection[3].predicate`, message: 'OmitPreviousPriorities must only be specified once' },
      { field: `${AT}.http.hostSelection[3].updateFrequency`, message: 'must be defined and greater than zero' },
      { field: `${AT}.http.hostSelection[4].predicate`, message: "unknown predicate type 'IncorrectPredicateType'" },
    ]);
  });

  it('checks header matches and reset headers against the schema first', () => {
    expect(violations(retries('{http: {rateLimitedBackOff: {resetHeaders: [{name: "", format: Minutes}]}, retriableRequestHeaders: [{type: PREFIX, name: x}]}}'))).toEqual([
      { field: 'spec.to[0].default.http.rateLimitedBackOff.resetHeaders[0].name', message: 'in body should be at least 1 chars long' },
      { field: 'spec.to[0].default.http.rateLimitedBackOff.resetHeaders[0].name', message: "in body should match '^[a-z0-9!#$%&'*+\\-.^_\\x60|~]+$'" },
      { field: 'spec.to[0].default.http.rateLimitedBackOff.resetHeaders[0].format', message: 'in body should be one of [Seconds UnixTimestamp]' },
      { field: 'spec.to[0].default.http.retriableRequestHeaders[0].type', message: 'in body should be one of [Exact Present RegularExpression Absent Prefix]' },
    ]);
  });
});

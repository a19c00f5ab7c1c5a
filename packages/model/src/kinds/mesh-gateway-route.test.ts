import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { violationsOf, wireForm } from '../test-support.js';
import { meshGatewayRouteKind } from './mesh-gateway-route.js';

const validate = (body: unknown) => violationsOf(meshGatewayRouteKind, body);

const selectors = [{ match: { 'mesh.io/service': 'gateway' } }];
const backends = [{ weight: 5, destination: { 'mesh.io/service': 'target' } }];
const matches = [{ path: { value: '/' } }];
const withRules = (...rules: unknown[]) => validate({ selectors, conf: { http: { rules } } });
const R = 'conf.http.rules[0]';

describe('MeshGatewayRoute', () => {
  it('accepts the documented example', () => {
    expect(
      validate({
        selectors: [{ match: { 'mesh.io/service': 'edge-gateway' } }],
        conf: {
          http: {
            hostnames: ['foo.example.com'],
            rules: [
              {
                matches: [{ path: { match: 'PREFIX', value: '/api' } }],
                filters: [{ requestHeader: { set: [{ name: 'x-env', value: 'prod' }] } }],
                backends: [{ weight: 1, destination: { 'mesh.io/service': 'backend' } }],
              },
            ],
          },
        },
      }),
    ).toEqual([]);
  });

  it('accepts every kind of match and filter, written in snake_case', () => {
    expect(
      withRules({
        matches: [
          {
            method: 'GET',
            path: { match: 'EXACT', value: '/' },
            headers: [
              { match: 'ABSENT', name: 'x-baz' },
              { match: 'PRESENT', name: 'x-bar' },
              { match: 'EXACT', name: 'x-foo', value: 'my great foo' },
              { match: 'REGEX', name: 'x-count', value: '[0-9]+' },
            ],
            query_parameters: [{ match: 'EXACT', name: 'customer', value: 'kong' }],
          },
          { path: { match: 'PREFIX', value: '/api' } },
        ],
        filters: [
          { rewrite: { host_to_backend_hostname: true } },
          { rewrite: { replace_prefix_match: '/v2' } },
          {
            request_header: {
              set: [{ name: 'x-foo', value: 'foo' }],
              add: [{ name: 'x-added', value: 'added' }],
              remove: ['x-deleted'],
            },
          },
          { response_header: { remove: ['server'] } },
          { mirror: { percentage: 1.12, backend: { destination: { 'mesh.io/service': 'target' } } } },
        ],
        backends: [...backends, { weight: 5, destination: { 'mesh.io/service': 'target-2' } }],
      }),
    ).toEqual([]);
  });

  it('accepts redirects, without scheme or hostname too', () => {
    expect(withRules({ matches, filters: [{ redirect: { scheme: 'http', hostname: 'foo.example.com', port: 80, status_code: 307 } }] })).toEqual([]);
    expect(withRules({ matches, filters: [{ redirect: { hostname: 'example.com', statusCode: 301 } }] })).toEqual([]);
  });

  it('accepts TCP routes without further checks', () => {
    expect(validate({ selectors, conf: { tcp: {} } })).toEqual([]);
  });

  it('requires selectors with the service tag and a route', () => {
    expect(validate({ selectors: [{ match: { product: 'edge' } }] })).toEqual([
      { field: 'selectors[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'conf', message: 'cannot be empty' },
    ]);
    expect(validate({ conf: {} })).toEqual([
      { field: 'selectors', message: 'must have at least one element' },
      { field: 'conf', message: 'cannot be empty' },
    ]);
  });

  it('requires HTTP rules, and matches in each rule (skipping the rule without them)', () => {
    expect(validate({ selectors, conf: { http: { rules: [] } } })).toEqual([{ field: 'conf.http.rules', message: 'cannot be empty' }]);
    expect(withRules({ backends: [{ destination: {} }] }, { matches })).toEqual([
      { field: `${R}.matches`, message: 'cannot be empty' },
      { field: 'conf.http.rules[1].backends', message: 'cannot be empty' },
    ]);
  });

  it('checks matches', () => {
    expect(
      withRules({
        matches: [
          {},
          { path: { match: 'REGEX' } },
          { path: { value: 'some/path' } },
          { path: { match: 'PREFIX', value: 'prefix/' } },
          { headers: [{ value: 'value' }, { name: 'x' }, { name: 'y', value: 'foo', match: 'PRESENT' }, { name: 'z', match: 'ABSENT' }] },
          { query_parameters: [{ value: 'value' }, { name: 'value' }] },
        ],
        backends,
      }),
    ).toEqual([
      { field: `${R}.matches[0]`, message: 'cannot be empty' },
      { field: `${R}.matches[1].value`, message: 'cannot be empty' },
      { field: `${R}.matches[2].value`, message: 'must be an absolute path' },
      { field: `${R}.matches[3].value`, message: 'must be an absolute path' },
      { field: `${R}.matches[4].headers[0].name`, message: 'cannot be empty' },
      { field: `${R}.matches[4].headers[1].value`, message: 'cannot be empty' },
      { field: `${R}.matches[4].headers[2].value`, message: 'cannot be set' },
      { field: `${R}.matches[5].query_parameters[0].name`, message: 'cannot be empty' },
      { field: `${R}.matches[5].query_parameters[1].value`, message: 'cannot be empty' },
    ]);
  });

  it('checks request header filters', () => {
    expect(
      withRules({
        matches,
        filters: [
          { requestHeader: {} },
          { requestHeader: { set: [{ name: 'x-foo' }], add: [{ value: 'foo' }], remove: [''] } },
          { responseHeader: {} },
        ],
        backends,
      }),
    ).toEqual([
      { field: `${R}.filters[0].request_header`, message: 'cannot be empty' },
      { field: `${R}.filters[1].request_header.set[0].value`, message: 'cannot be empty' },
      { field: `${R}.filters[1].request_header.add[0].name`, message: 'cannot be empty' },
      { field: `${R}.filters[1].request_header.remove[0]`, message: 'cannot be empty' },
    ]);
  });

  it('refuses host header changes when the host is rewritten to the backend hostname', () => {
    // The rewrite filter itself is not numbered: the header filter is reported as filters[0].
    expect(
      withRules({
        matches,
        filters: [
          { rewrite: { hostToBackendHostname: true } },
          { requestHeader: { set: [{ name: 'host', value: 'foo' }], add: [{ name: ':authority', value: 'foo' }, { name: 'Host' }] } },
        ],
        backends,
      }),
    ).toEqual([
      { field: `${R}.filters[0].request_header.set[0]`, message: "cannot modify 'host' header, when route has set 'rewrite.host_to_backend_hostname' option" },
      { field: `${R}.filters[0].request_header.add[0]`, message: "cannot modify ':authority' header, when route has set 'rewrite.host_to_backend_hostname' option" },
      { field: `${R}.filters[0].request_header.add[1]`, message: "cannot modify 'Host' header, when route has set 'rewrite.host_to_backend_hostname' option" },
      { field: `${R}.filters[0].request_header.add[1].value`, message: 'cannot be empty' },
    ]);
  });

  it('checks mirror, redirect and rewrite filters', () => {
    expect(
      withRules({
        matches: [{ path: { value: '/exact_path' } }],
        filters: [
          { mirror: { percentage: 0 } },
          { mirror: { percentage: -1, backend: { destination: { 'mesh.io/service': 'target' } } } },
          { mirror: { backend: { destination: { phoney: 'x' } } } },
          { rewrite: { replacePrefixMatch: '/' } },
          { rewrite: { replaceFull: '/full' } },
        ],
        backends,
      }),
    ).toEqual([
      { field: `${R}.filters[0].mirror.backend`, message: 'cannot be empty' },
      { field: `${R}.filters[1].mirror.percentage`, message: 'has to be in [0.0 - 100.0] range' },
      { field: `${R}.filters[2].mirror.percentage`, message: 'cannot be empty' },
      { field: `${R}.filters[2].mirror.backend`, message: 'mandatory tag "mesh.io/service" is missing' },
      { field: `${R}.filters[3].rewrite.replacePrefixMatch`, message: 'cannot be used without a match on path prefix' },
    ]);
    expect(withRules({ matches, filters: [{ redirect: { scheme: 'https', hostname: 'example.com', port: 128555, status_code: 500 } }] })).toEqual([
      { field: `${R}.filters[0].redirect.port`, message: 'port must be in the range [1, 65535]' },
      { field: `${R}.filters[0].redirect.status_code`, message: 'must be in the range [300, 308]' },
    ]);
  });

  it('keeps redirects alone: no other filters, no backends', () => {
    const redirect = { redirect: { scheme: 'https', hostname: 'example.com', status_code: 300 } };
    expect(withRules({ matches, filters: [redirect], backends })).toEqual([
      { field: `${R}.backends`, message: 'must be empty when using redirect filters' },
    ]);
    // The backend checks are skipped once the filters are refused.
    expect(withRules({ matches, filters: [redirect, {}], backends: [{ destination: {} }] })).toEqual([
      { field: `${R}.filters`, message: 'redirects cannot be used with other filters' },
    ]);
  });

  it('checks backend destinations at the backend path', () => {
    expect(withRules({ matches, backends: [{ weight: 5, destination: { phoney: 'target-2' } }, { destination: {} }] })).toEqual([
      { field: `${R}.backends[0]`, message: 'mandatory tag "mesh.io/service" is missing' },
      { field: `${R}.backends[1]`, message: 'must have at least one tag' },
      { field: `${R}.backends[1]`, message: 'mandatory tag "mesh.io/service" is missing' },
    ]);
  });

  it('normalises the body: snake_case in, zero values dropped, one oneof member kept', () => {
    expect(
      wireForm(meshGatewayRouteKind, {
        selectors,
        conf: {
          tcp: { rules: [{ backends }] },
          http: {
            hostnames: [],
            rules: [
              {
                matches: [{ path: { match: 'EXACT', value: '/' }, method: 'NONE', query_parameters: [] }],
                // Several members of a oneof: the reference keeps the one declared last.
                filters: [{ request_header: { remove: ['a'] }, mirror: { percentage: 0 } }, { rewrite: { replace_full: '', replace_prefix_match: '/p' } }],
                backends: [{ weight: 0, destination: { 'mesh.io/service': 'target' } }],
              },
            ],
          },
        },
      }),
    ).toStrictEqual({
      selectors,
      conf: {
        http: {
          rules: [
            {
              matches: [{ path: { value: '/' } }],
              filters: [{ mirror: { percentage: 0 } }, { rewrite: { replacePrefixMatch: '/p' } }],
              backends: [{ destination: { 'mesh.io/service': 'target' } }],
            },
          ],
        },
      },
    });
  });

  it('refuses unknown enum names and fields of the wrong JSON type', () => {
    const withMatch = (match: unknown) => ({ selectors, conf: { http: { rules: [{ matches: [match] }] } } });
    expect(decodeSpec(meshGatewayRouteKind, withMatch({ path: { match: 'SUFFIX', value: '/' } }))).toMatchObject({ ok: false });
    expect(decodeSpec(meshGatewayRouteKind, withMatch({ method: 'FETCH' }))).toMatchObject({ ok: false });
    expect(decodeSpec(meshGatewayRouteKind, withMatch({ headers: { name: 'x' } }))).toMatchObject({ ok: false });
  });
});

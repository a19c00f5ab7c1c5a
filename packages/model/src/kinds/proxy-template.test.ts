import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { violationsOf, wireForm } from '../test-support.js';
import { proxyTemplateKind } from './proxy-template.js';

const validate = (body: unknown) => violationsOf(proxyTemplateKind, body);

const selectors = [{ match: { 'mesh.io/service': 'backend' } }];
const withConf = (conf: unknown) => validate({ selectors, conf });

const CLUSTER = `
'@type': type.googleapis.com/envoy.config.cluster.v3.Cluster
connection_pool_per_downstream_connection: true
connectTimeout: 5s
loadAssignment:
  clusterName: localhost:8443
  endpoints:
    - lbEndpoints:
        - endpoint:
            address:
              socketAddress:
                address: 127.0.0.1
                portValue: 8443
name: localhost:8443
type: STATIC
`;
const TCP_PROXY = `
name: envoy.filters.network.tcp_proxy
typedConfig:
  '@type': type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy
  cluster: backend
`;
const ROUTER = `
name: envoy.filters.http.router
typedConfig:
  '@type': type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
  dynamicStats: false
`;
const NOT_VALID = 'native Envoy resource is not valid: ';
const UNCLOSED_FLOW_MAP = `${NOT_VALID}Flow map must end with a } at line 1, column 2`;

describe('ProxyTemplate', () => {
  it('accepts a full example with a profile and a raw resource', () => {
    expect(withConf({ imports: ['default-proxy'], resources: [{ name: 'additional', version: 'v1', resource: CLUSTER }] })).toEqual([]);
  });

  it('accepts a template without conf and without selectors', () => {
    expect(validate({ selectors })).toEqual([]);
    expect(validate({})).toEqual([]);
  });

  it('accepts a raw resource written as JSON', () => {
    const resource = JSON.stringify({ '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'x' });
    expect(withConf({ resources: [{ name: 'x', version: 'v1', resource }] })).toEqual([]);
  });

  it('accepts every cluster and listener operation', () => {
    const modifications = ['cluster', 'listener'].flatMap((type) => [
      { [type]: { operation: 'add', value: 'name: xyz\nconnectTimeout: 5s\n' } },
      { [type]: { operation: 'patch', value: 'connectTimeout: 5s' } },
      { [type]: { operation: 'patch', match: { name: 'inbound:127.0.0.1:8080' }, value: 'connectTimeout: 5s' } },
      { [type]: { operation: 'patch', match: { origin: 'inbound' }, value: 'connectTimeout: 5s' } },
      { [type]: { operation: 'patch' } },
      { [type]: { operation: 'remove' } },
      { [type]: { operation: 'remove', match: { name: 'inbound:127.0.0.1:8080' } } },
    ]);
    expect(withConf({ modifications })).toEqual([]);
  });

  it('accepts every network and HTTP filter operation', () => {
    const filters = [
      ['networkFilter', TCP_PROXY],
      ['httpFilter', ROUTER],
    ] as const;
    const modifications = filters.flatMap(([type, value]) => [
      { [type]: { operation: 'addFirst', value } },
      { [type]: { operation: 'addLast', value } },
      { [type]: { operation: 'addBefore', match: { name: 'envoy.filters.network.direct_response' }, value } },
      { [type]: { operation: 'addAfter', match: { name: 'x', listenerName: 'inbound:127.0.0.0:8080' }, value } },
      { [type]: { operation: 'patch', match: { name: 'x', listenerName: 'inbound:127.0.0.0:8080' }, value } },
      { [type]: { operation: 'remove' } },
    ]);
    expect(withConf({ modifications })).toEqual([]);
  });

  it('accepts virtual host operations; add may match on the route configuration', () => {
    const modifications = [
      {
        virtualHost: {
          operation: 'add',
          match: { origin: 'outbound', routeConfigurationName: 'outbound:backend' },
          value: 'name: backend\ndomains: [backend.com]\nroutes: [{match: {prefix: /}, route: {cluster: backend}}]',
        },
      },
      { virtualHost: { operation: 'patch', value: 'retryPolicy: {retryOn: 5xx, numRetries: 3}' } },
      { virtualHost: { operation: 'patch', match: { routeConfigurationName: 'outbound:backend', name: 'backend' }, value: '{}' } },
      { virtualHost: { operation: 'remove', match: { name: 'backend' } } },
    ];
    expect(withConf({ modifications })).toEqual([]);
  });

  it('checks selectors: each needs a tag and the service', () => {
    expect(validate({ selectors: [{ match: {} }, { match: { '': 'asdf' } }, { match: { 'mesh.io/service': '' } }] })).toEqual([
      { field: 'selectors[0].match', message: 'must have at least one tag' },
      { field: 'selectors[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'selectors[1].match', message: 'tag name must be non-empty' },
      { field: 'selectors[1].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'selectors[2].match["mesh.io/service"]', message: 'tag value must be non-empty' },
    ]);
  });

  it('checks imported profiles', () => {
    expect(withConf({ imports: ['', 'unknown-profile', 'ingress-proxy'] })).toEqual([
      { field: 'conf.imports[0]', message: 'cannot be empty' },
      { field: 'conf.imports[1]', message: 'profile not found. Available profiles: default-proxy,egress-proxy,ingress-proxy' },
    ]);
  });

  it('checks raw resources', () => {
    expect(
      withConf({
        resources: [
          { name: '', version: '', resource: '' },
          { name: 'a', version: 'v1', resource: 'not-envoy-resource' },
          { name: 'a', version: 'v1', resource: '- a\n- b' },
          { name: 'a', version: 'v1', resource: 'name: x' },
          { name: 'a', version: 'v1', resource: '{' },
        ],
      }),
    ).toEqual([
      { field: 'conf.resources[0].name', message: 'cannot be empty' },
      { field: 'conf.resources[0].version', message: 'cannot be empty' },
      { field: 'conf.resources[0].resource', message: 'cannot be empty' },
      {
        field: 'conf.resources[1].resource',
        message: `${NOT_VALID}json: cannot unmarshal string into Go value of type map[string]json.RawMessage`,
      },
      {
        field: 'conf.resources[2].resource',
        message: `${NOT_VALID}json: cannot unmarshal array into Go value of type map[string]json.RawMessage`,
      },
      { field: 'conf.resources[3].resource', message: `${NOT_VALID}Any JSON doesn't have '@type'` },
      { field: 'conf.resources[4].resource', message: UNCLOSED_FLOW_MAP },
    ]);
  });

  it('checks cluster and listener modifications', () => {
    const modifications = ['cluster', 'listener'].flatMap((type) => [
      { [type]: { operation: 'addFirst' } },
      { [type]: { operation: 'add', value: '{' } },
      { [type]: { operation: 'patch', value: '{' } },
      { [type]: { operation: 'add', match: { name: 'inbound:127.0.0.1:80' }, value: 'name: xyz' } },
      { [type]: { operation: 'add', match: {}, value: 'name: xyz' } },
      { [type]: { operation: 'add' } },
      { [type]: {} },
      { [type]: { operation: 'patch', value: 'connectTimeout: *unknown' } },
    ]);
    expect(withConf({ modifications })).toEqual(
      (
        [
          ['cluster', 0],
          ['listener', 8],
        ] as const
      ).flatMap(([type, offset]) => {
        const at = (i: number, field: string) => `conf.modifications[${offset + i}].${type}.${field}`;
        const invalidOperation = 'invalid operation. Available operations: "add", "patch", "remove"';
        return [
          { field: at(0, 'operation'), message: invalidOperation },
          { field: at(1, 'value'), message: UNCLOSED_FLOW_MAP },
          { field: at(2, 'value'), message: UNCLOSED_FLOW_MAP },
          { field: at(3, 'match'), message: 'cannot be defined' },
          { field: at(4, 'match'), message: 'cannot be defined' },
          { field: at(5, 'value'), message: `${NOT_VALID}expected an object` },
          { field: at(6, 'operation'), message: invalidOperation },
          { field: at(7, 'value'), message: `${NOT_VALID}Unresolved alias (the anchor must be set before the alias): unknown` },
        ];
      }),
    );
  });

  it('checks network and HTTP filter modifications', () => {
    const modifications = ['networkFilter', 'httpFilter'].flatMap((type) => [
      { [type]: { operation: 'addFirst', value: '{' } },
      { [type]: { operation: 'addBefore', value: '{' } },
      { [type]: { operation: 'addAfter', value: '{' } },
      { [type]: { operation: 'patch', value: '{' } },
      { [type]: { operation: 'add', value: 'name: x' } },
    ]);
    expect(withConf({ modifications })).toEqual(
      (
        [
          ['networkFilter', 0],
          ['httpFilter', 5],
        ] as const
      ).flatMap(([type, offset]) => {
        const at = (i: number, field: string) => `conf.modifications[${offset + i}].${type}.${field}`;
        return [
          { field: at(0, 'value'), message: UNCLOSED_FLOW_MAP },
          { field: at(1, 'match.name'), message: 'cannot be empty. You need to pick a filter before which this one will be added' },
          { field: at(1, 'value'), message: UNCLOSED_FLOW_MAP },
          { field: at(2, 'match.name'), message: 'cannot be empty. You need to pick a filter after which this one will be added' },
          { field: at(2, 'value'), message: UNCLOSED_FLOW_MAP },
          { field: at(3, 'match.name'), message: 'cannot be empty' },
          { field: at(3, 'value'), message: UNCLOSED_FLOW_MAP },
          {
            field: at(4, 'operation'),
            message: 'invalid operation. Available operations: "addFirst", "addLast", "addBefore", "addAfter", "patch", "remove"',
          },
        ];
      }),
    );
  });

  it('checks virtual host modifications: add may not match on a name', () => {
    expect(
      withConf({
        modifications: [
          { virtualHost: { operation: 'add', match: { name: 'xyz' }, value: '{' } },
          { virtualHost: { operation: 'addFirst' } },
          { virtualHost: { operation: 'patch', value: '{' } },
        ],
      }),
    ).toEqual([
      { field: 'conf.modifications[0].virtualHost.match.name', message: 'cannot be defined' },
      { field: 'conf.modifications[0].virtualHost.value', message: UNCLOSED_FLOW_MAP },
      { field: 'conf.modifications[1].virtualHost.operation', message: 'invalid operation. Available operations: "add", "patch", "remove"' },
      { field: 'conf.modifications[2].virtualHost.value', message: UNCLOSED_FLOW_MAP },
    ]);
  });

  it('normalises the body: snake_case in, empty values dropped, one modification type kept', () => {
    const stored = wireForm(proxyTemplateKind, {
      selectors: [{ match: { 'mesh.io/service': 'backend' } }],
      conf: {
        imports: [],
        resources: [{ name: 'a', version: '', resource: 'x', extra: true }],
        modifications: [
          { network_filter: { operation: 'remove', match: { listener_name: 'l', listener_tags: {} } } },
          // Several types in one modification: the reference keeps the one declared last.
          { cluster: { operation: 'remove' }, virtual_host: { operation: 'remove' } },
        ],
      },
    });
    expect(stored).toStrictEqual({
      selectors: [{ match: { 'mesh.io/service': 'backend' } }],
      conf: {
        resources: [{ name: 'a', resource: 'x' }],
        modifications: [
          { networkFilter: { match: { listenerName: 'l' }, operation: 'remove' } },
          { virtualHost: { operation: 'remove' } },
        ],
      },
    });
  });

  it('refuses fields of the wrong JSON type', () => {
    expect(decodeSpec(proxyTemplateKind, { conf: { imports: 'default-proxy' } })).toMatchObject({ ok: false });
    expect(decodeSpec(proxyTemplateKind, { conf: { modifications: [{ cluster: { value: {} } }] } })).toMatchObject({ ok: false });
  });
});

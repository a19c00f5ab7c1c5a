import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { trafficRouteKind } from './traffic-route.js';

const validate = (body: unknown) => violationsOf(trafficRouteKind, body);

const selectors = {
  sources: [{ match: { 'mesh.io/service': 'web' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend' } }],
};
const withConf = (conf: unknown) => ({ ...selectors, conf });
const offers = { 'mesh.io/service': 'offers' };

describe('TrafficRoute', () => {
  it('accepts the default route and returns it unchanged, empty round robin included', () => {
    const body = {
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      conf: { destination: { 'mesh.io/service': '*' }, loadBalancer: { roundRobin: {} } },
    };
    expect(validate(body)).toEqual([]);
    expect(wireForm(trafficRouteKind, body)).toEqual(body);
  });

  it('accepts a split with a zero weight among others', () => {
    expect(
      validate(
        withConf({
          loadBalancer: { roundRobin: {} },
          split: [
            { weight: 100, destination: offers },
            { weight: 0, destination: { 'mesh.io/service': 'backend' } },
          ],
        }),
      ),
    ).toEqual([]);
  });

  it('accepts HTTP routes with matches, modifications and splits', () => {
    const conf = {
      load_balancer: { ring_hash: { hash_function: 'XX_HASH', min_ring_size: 1024, maxRingSize: '8388608' } },
      http: [
        {
          match: { path: { prefix: '/offers' }, method: { exact: 'GET' }, headers: { 'x-custom-header': { regex: '^xyz$' } } },
          modify: {
            path: { regex: { pattern: '^/service/([^/]+)(/.*)$', substitution: '\\2/instance/\\1' } },
            host: { fromPath: { pattern: '^/(.+)/.+$', substitution: '\\1' } },
            requestHeaders: { add: [{ name: 'x-custom-header', value: 'xyz', append: true }], remove: [{ name: 'x-something' }] },
            responseHeaders: { add: [{ name: 'x-custom-header', value: 'xyz', append: false }] },
          },
          split: [{ weight: 20, destination: offers }],
        },
        { match: { path: { prefix: '/api' } }, modify: { path: { rewritePrefix: '/v2' }, host: { value: 'xyz' } }, destination: offers },
      ],
      destination: { 'mesh.io/service': 'backend' },
    };
    expect(validate(withConf(conf))).toEqual([]);
  });

  it('normalises numbers: uint64 as strings, zero plain scalars dropped, wrapper weights kept', () => {
    const conf = {
      load_balancer: { ring_hash: { hash_function: 'XX_HASH', min_ring_size: 1024, maxRingSize: '0' } },
      split: [
        { weight: 0, destination: { 'mesh.io/service': 'backend' } },
        { weight: '100', destination: offers },
      ],
      http: [{ match: { path: { exact: '' } }, modify: { requestHeaders: { add: [{ name: 'x', value: 'y', append: false }] } }, destination: offers }],
    };
    expect(validate(withConf(conf))).toEqual([]);
    expect(wireForm(trafficRouteKind, withConf(conf))).toEqual(
      withConf({
        loadBalancer: { ringHash: { hashFunction: 'XX_HASH', minRingSize: '1024' } },
        split: [
          { weight: 0, destination: { 'mesh.io/service': 'backend' } },
          { weight: 100, destination: offers },
        ],
        http: [{ match: { path: { exact: '' } }, modify: { requestHeaders: { add: [{ name: 'x', value: 'y' }] } }, destination: offers }],
      }),
    );
  });

  it('keeps only the last declared member of a oneof sent with several', () => {
    const conf = {
      destination: offers,
      loadBalancer: { roundRobin: {}, leastRequest: { choiceCount: 3 } },
      http: [{ match: { path: { prefix: '/a', exact: '/b' } }, destination: offers }],
    };
    expect(wireForm(trafficRouteKind, withConf(conf))).toEqual(
      withConf({
        destination: offers,
        loadBalancer: { leastRequest: { choiceCount: 3 } },
        http: [{ match: { path: { exact: '/b' } }, destination: offers }],
      }),
    );
  });

  it('requires selectors and conf', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
      { field: 'conf', message: 'cannot be empty' },
    ]);
  });

  it('reports selectors and a split destination without tags', () => {
    expect(validate({ sources: [{ match: {} }], destinations: [{ match: {} }], conf: { split: [{ destination: {} }] } })).toEqual([
      { field: 'sources[0].match', message: 'must have at least one tag' },
      { field: 'sources[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'destinations[0].match', message: 'must consist of exactly one tag "mesh.io/service"' },
      { field: 'destinations[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'conf.split[0].weight', message: 'needs to be defined' },
      { field: 'conf.split[0].destination', message: 'must have at least one tag' },
      { field: 'conf.split[0].destination', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'conf.split', message: 'there must be at least one split entry with weight above 0' },
    ]);
  });

  it('reports empty tag values of a split destination', () => {
    expect(validate(withConf({ split: [{ weight: 1, destination: { 'mesh.io/service': '', region: '' } }] }))).toEqual([
      { field: 'conf.split[0].destination["mesh.io/service"]', message: 'tag value must be non-empty' },
      { field: 'conf.split[0].destination["region"]', message: 'tag value must be non-empty' },
    ]);
  });

  it('reports a conf destination without the service tag', () => {
    expect(validate(withConf({ destination: { region: '' } }))).toEqual([
      { field: 'conf.destination["region"]', message: 'tag value must be non-empty' },
      { field: 'conf.destination', message: 'mandatory tag "mesh.io/service" is missing' },
    ]);
  });

  it('tells an empty destination from an absent one', () => {
    expect(validate(withConf({ destination: {} }))).toEqual([
      { field: 'conf.destination', message: 'must have at least one tag' },
      { field: 'conf.destination', message: 'mandatory tag "mesh.io/service" is missing' },
    ]);
  });

  it('requires exactly one of split and destination; an empty split counts as absent', () => {
    expect(validate(withConf({}))).toEqual([{ field: 'conf', message: 'requires either "destination" or "split"' }]);
    expect(validate(withConf({ split: [] }))).toEqual([{ field: 'conf', message: 'requires either "destination" or "split"' }]);
    expect(validate(withConf({ split: [{ weight: 100, destination: offers }], destination: offers }))).toEqual([
      { field: 'conf', message: '"split" cannot be defined at the same time as "destination"' },
    ]);
  });

  it('applies the split and destination rules to each HTTP route', () => {
    expect(
      validate(
        withConf({
          http: [
            { match: { path: { prefix: '/offers' } }, split: [{ weight: 100, destination: offers }], destination: offers },
            { match: { path: { prefix: '/offers' } } },
          ],
          destination: offers,
        }),
      ),
    ).toEqual([
      { field: 'conf.http[0]', message: '"split" cannot be defined at the same time as "destination"' },
      { field: 'conf.http[1]', message: 'requires either "destination" or "split"' },
    ]);
  });

  it('requires a match on each HTTP route', () => {
    expect(validate(withConf({ http: [{ destination: offers }], destination: offers }))).toEqual([
      { field: 'conf.http[0].match', message: 'must be present and contain at least one of the elements: "method", "path" or "headers"' },
    ]);
  });

  it('reports empty matchers', () => {
    expect(
      validate(
        withConf({
          http: [
            { match: { method: {}, path: {}, headers: {} }, destination: offers },
            { match: { method: { regex: '' }, path: { prefix: '' }, headers: { '': {} } }, destination: offers },
          ],
          destination: offers,
        }),
      ),
    ).toEqual([
      { field: 'conf.http[0].match.method', message: 'cannot be empty. Available options: "exact", "split" or "regex"' },
      { field: 'conf.http[0].match.path', message: 'cannot be empty. Available options: "exact", "split" or "regex"' },
      { field: 'conf.http[0].match.headers', message: 'must contain at least one element' },
      { field: 'conf.http[1].match.method.regex', message: 'cannot be empty' },
      { field: 'conf.http[1].match.path.prefix', message: 'cannot be empty' },
      { field: 'conf.http[1].match.headers[""]', message: 'cannot be empty' },
      { field: 'conf.http[1].match.headers[""]', message: 'cannot be empty. Available options: "exact", "split" or "regex"' },
    ]);
  });

  it('reports split weights that sum to zero', () => {
    expect(validate(withConf({ split: [{ weight: 0, destination: offers }] }))).toEqual([
      { field: 'conf.split', message: 'there must be at least one split entry with weight above 0' },
    ]);
  });

  it('reports empty modifications', () => {
    const empty = { add: [{ name: '', value: '' }], remove: [{ name: '' }] };
    expect(
      validate(
        withConf({
          http: [
            {
              match: { path: { prefix: '/offers' } },
              modify: { path: { rewritePrefix: '' }, host: { value: '' }, requestHeaders: empty, responseHeaders: empty },
              destination: offers,
            },
            {
              match: { path: { prefix: '/offers1' } },
              modify: { path: { regex: { pattern: '', substitution: '' } }, host: { fromPath: {} } },
              destination: offers,
            },
            { match: { path: { prefix: '/offers1' } }, modify: { path: {}, host: {} }, destination: offers },
          ],
          destination: { 'mesh.io/service': 'backend' },
        }),
      ),
    ).toEqual([
      { field: 'conf.http[0].modify.path.rewritePrefix', message: 'cannot be empty' },
      { field: 'conf.http[0].modify.host.value', message: 'cannot be empty' },
      { field: 'conf.http[0].modify.requestHeaders.add[0].name', message: 'cannot be empty' },
      { field: 'conf.http[0].modify.requestHeaders.add[0].value', message: 'cannot be empty' },
      { field: 'conf.http[0].modify.requestHeaders.remove[0].name', message: 'cannot be empty' },
      { field: 'conf.http[0].modify.responseHeaders.add[0].name', message: 'cannot be empty' },
      { field: 'conf.http[0].modify.responseHeaders.add[0].value', message: 'cannot be empty' },
      { field: 'conf.http[0].modify.responseHeaders.remove[0].name', message: 'cannot be empty' },
      { field: 'conf.http[1].modify.path.regex.pattern', message: 'cannot be empty' },
      { field: 'conf.http[1].modify.path.regex.substitution', message: 'cannot be empty' },
      { field: 'conf.http[1].modify.host.fromPath.pattern', message: 'cannot be empty' },
      { field: 'conf.http[1].modify.host.fromPath.substitution', message: 'cannot be empty' },
      { field: 'conf.http[2].modify.path', message: 'either "rewritePrefix" or "regex" has to be set' },
      { field: 'conf.http[2].modify.host', message: 'either "value" or "fromPath" has to be set' },
    ]);
  });

  it('allows rewritePrefix only with a path prefix match', () => {
    expect(
      validate(
        withConf({
          http: [{ match: { path: { exact: '/offers' } }, modify: { path: { rewritePrefix: '/not-offers' } }, destination: offers }],
          destination: offers,
        }),
      ),
    ).toEqual([{ field: 'conf.http[0].modify.path.rewritePrefix', message: 'can only be set when .http.match.path.prefix is not empty' }]);
  });

  it('refuses modifying the host header and pseudo-headers', () => {
    const hostHeaders = {
      add: [
        { name: 'host', value: 'xyz' },
        { name: 'Host', value: 'xyz' },
        { name: ':path', value: 'xyz' },
      ],
      remove: [{ name: 'host' }],
    };
    const message = 'host header and HTTP/2 pseudo-headers are not allowed to be modified';
    expect(
      validate(
        withConf({
          http: [{ match: { path: { exact: '/offers' } }, modify: { requestHeaders: hostHeaders, responseHeaders: hostHeaders }, destination: offers }],
          destination: offers,
        }),
      ),
    ).toEqual([
      { field: 'conf.http[0].modify.requestHeaders.add[0].name', message },
      { field: 'conf.http[0].modify.requestHeaders.add[1].name', message },
      { field: 'conf.http[0].modify.requestHeaders.add[2].name', message },
      { field: 'conf.http[0].modify.requestHeaders.remove[0].name', message },
      { field: 'conf.http[0].modify.responseHeaders.add[0].name', message },
      { field: 'conf.http[0].modify.responseHeaders.add[1].name', message },
      { field: 'conf.http[0].modify.responseHeaders.add[2].name', message },
      { field: 'conf.http[0].modify.responseHeaders.remove[0].name', message },
    ]);
  });

  it('checks the load balancer settings', () => {
    expect(validate(withConf({ destination: offers, loadBalancer: { leastRequest: { choiceCount: 1 } } }))).toEqual([
      { field: 'conf.loadBalancer.leastRequest.choiceCount', message: 'value must be greater than or equal to 2' },
    ]);
    expect(validate(withConf({ destination: offers, loadBalancer: { ringHash: { hashFunction: 'INVALID_HASH_FUNCTION' } } }))).toEqual([
      { field: 'conf.loadBalancer.ringHash.hashFunction', message: 'must have a valid hash function' },
    ]);
    expect(validate(withConf({ destination: offers, loadBalancer: { ringHash: {} } }))).toEqual([
      { field: 'conf.loadBalancer.ringHash.hashFunction', message: 'must have a valid hash function' },
    ]);
  });

  it('refuses fields of the wrong JSON type', () => {
    expect(() => validate(withConf({ split: [{ weight: 'heavy', destination: offers }] }))).toThrow();
    expect(() => validate(withConf({ destination: offers, loadBalancer: { ringHash: { minRingSize: -1 } } }))).toThrow();
    expect(() => validate(withConf({ destination: { 'mesh.io/service': 1 } }))).toThrow();
  });
});

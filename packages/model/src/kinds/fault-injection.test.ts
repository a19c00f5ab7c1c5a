import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { faultInjectionKind } from './fault-injection.js';

const validate = (body: unknown) => violationsOf(faultInjectionKind, body);

const selectors = {
  sources: [{ match: { 'mesh.io/service': 'frontend', 'mesh.io/protocol': 'http' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', region: 'eu' } }],
};
const withConf = (conf: unknown) => ({ ...selectors, conf });

describe('FaultInjection', () => {
  it('accepts every fault and returns durations normalised, zero percentages kept', () => {
    const body = withConf({
      delay: { percentage: 50, value: '10ms' },
      abort: { percentage: 0, httpStatus: 500 },
      response_bandwidth: { percentage: 40.5, limit: '50kbps' },
    });
    expect(validate(body)).toEqual([]);
    expect(wireForm(faultInjectionKind, body)).toEqual(
      withConf({
        delay: { percentage: 50, value: '0.010s' },
        abort: { percentage: 0, httpStatus: 500 },
        responseBandwidth: { percentage: 40.5, limit: '50kbps' },
      }),
    );
  });

  it('accepts http2 and grpc destinations and wildcard tag values', () => {
    const delay = { delay: { percentage: 50, value: '10ms' } };
    for (const protocol of ['http2', 'grpc']) {
      expect(
        validate({
          sources: [{ match: { 'mesh.io/service': 'frontend' } }],
          destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': protocol, region: '*' } }],
          conf: delay,
        }),
      ).toEqual([]);
    }
  });

  it('requires selectors and at least one fault', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
      { field: 'conf', message: 'must have at least one of the faults configured' },
    ]);
  });

  it('counts empty faults as absent', () => {
    expect(validate(withConf({ delay: {}, abort: {}, responseBandwidth: {} }))).toEqual([
      { field: 'conf', message: 'must have at least one of the faults configured' },
    ]);
  });

  it('requires the percentage of each fault', () => {
    expect(validate(withConf({ delay: { value: '50ms' }, abort: { httpStatus: 500 }, responseBandwidth: { limit: '50kbps' } }))).toEqual([
      { field: 'conf.delay.percentage', message: 'cannot be empty' },
      { field: 'conf.abort.percentage', message: 'cannot be empty' },
      { field: 'conf.responseBandwidth.percentage', message: 'cannot be empty' },
    ]);
  });

  it('requires the main value of each fault', () => {
    expect(validate(withConf({ delay: { percentage: 30 }, abort: { percentage: 30 }, responseBandwidth: { percentage: 30 } }))).toEqual([
      { field: 'conf.delay.value', message: 'cannot be empty' },
      { field: 'conf.abort.httpStatus', message: 'cannot be empty' },
      { field: 'conf.responseBandwidth.limit', message: 'cannot be empty' },
    ]);
  });

  it('refuses unknown HTTP statuses, bad bandwidth units and percentages out of range', () => {
    expect(validate(withConf({ abort: { httpStatus: 600, percentage: 100 } }))).toEqual([
      { field: 'conf.abort.httpStatus', message: 'http status code is incorrect' },
    ]);
    expect(validate(withConf({ abort: { httpStatus: 306, percentage: -1 } }))).toEqual([
      { field: 'conf.abort.percentage', message: 'has to be in [0.0 - 100.0] range' },
      { field: 'conf.abort.httpStatus', message: 'http status code is incorrect' },
    ]);
    expect(validate(withConf({ responseBandwidth: { limit: '50mb', percentage: 101 } }))).toEqual([
      { field: 'conf.responseBandwidth.percentage', message: 'has to be in [0.0 - 100.0] range' },
      { field: 'conf.responseBandwidth.limit', message: 'has to be in kbps/mbps/gbps units' },
    ]);
  });

  it('requires an HTTP-like protocol on destinations', () => {
    const conf = { responseBandwidth: { limit: '50mbps', percentage: 100 } };
    const sources = [{ match: { 'mesh.io/service': 'frontend' } }];
    expect(validate({ sources, destinations: [{ match: { 'mesh.io/service': 'backend', region: 'eu' } }], conf })).toEqual([
      { field: 'destinations[0].match', message: 'protocol must be specified' },
    ]);
    expect(validate({ sources, destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'tcp' } }], conf })).toEqual([
      { field: 'destinations[0].match["mesh.io/protocol"]', message: 'must be one of the [http, http2, grpc]' },
    ]);
  });

  it('reports bad tag names and values on both sides', () => {
    expect(
      validate({
        sources: [{ match: { 'mesh.io/service': 'frontend', 'inv@lid#': 'value', tag: 'v@/u^e' } }],
        destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', tag: 'v@/u^e#!' } }],
        conf: { delay: { percentage: 50, value: '10ms' } },
      }),
    ).toEqual([
      { field: 'sources[0].match["inv@lid#"]', message: 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores' },
      {
        field: 'sources[0].match["tag"]',
        message: 'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
      },
      {
        field: 'destinations[0].match["tag"]',
        message: 'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
      },
    ]);
  });

  it('refuses fields of the wrong JSON type', () => {
    expect(() => validate(withConf({ delay: { percentage: true, value: '10ms' } }))).toThrow();
    expect(() => validate(withConf({ delay: { percentage: 50, value: 'soon' } }))).toThrow();
    expect(() => validate(withConf({ responseBandwidth: { percentage: 50, limit: 50 } }))).toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { timeoutKind } from './timeout.js';

const validate = (body: unknown) => violationsOf(timeoutKind, body);

const selectors = {
  sources: [{ match: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend' } }],
};
const withConf = (conf: unknown) => ({ ...selectors, conf });

describe('Timeout', () => {
  it('accepts the default timeout and returns it unchanged', () => {
    const body = {
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      conf: {
        connectTimeout: '5s',
        tcp: { idleTimeout: '3600s' },
        http: { requestTimeout: '15s', idleTimeout: '3600s', streamIdleTimeout: '1800s' },
      },
    };
    expect(validate(body)).toEqual([]);
    expect(wireForm(timeoutKind, body)).toEqual(body);
  });

  it('accepts every section in Go durations and normalises them', () => {
    const body = withConf({
      connect_timeout: '5s',
      tcp: { idle_timeout: '50s' },
      http: { requestTimeout: '15s', idleTimeout: '1h', streamIdleTimeout: '30m', maxStreamDuration: '0s' },
      grpc: { streamIdleTimeout: '40s', maxStreamDuration: '1h30m' },
    });
    expect(validate(body)).toEqual([]);
    expect(wireForm(timeoutKind, body)).toEqual(
      withConf({
        connectTimeout: '5s',
        tcp: { idleTimeout: '50s' },
        http: { requestTimeout: '15s', idleTimeout: '3600s', streamIdleTimeout: '1800s', maxStreamDuration: '0s' },
        grpc: { streamIdleTimeout: '40s', maxStreamDuration: '5400s' },
      }),
    );
  });

  it('requires selectors and conf', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
      { field: 'conf', message: 'has to be defined' },
    ]);
  });

  it('accepts a conf without sections', () => {
    expect(validate(withConf({}))).toEqual([]);
  });

  it('requires a timeout in each given section', () => {
    expect(validate(withConf({ connectTimeout: '5s', tcp: {}, http: { streamIdleTimeout: '1s' }, grpc: {} }))).toEqual([
      { field: 'conf.tcp', message: 'at least one timeout in section has to be defined' },
      { field: 'conf.http', message: 'at least one timeout in section has to be defined' },
      { field: 'conf.grpc', message: 'at least one timeout in section has to be defined' },
    ]);
  });

  it('refuses zero timeouts', () => {
    expect(
      validate(
        withConf({
          tcp: { idleTimeout: '0s' },
          http: { requestTimeout: '0', idleTimeout: '0ms' },
          grpc: { streamIdleTimeout: '0s', maxStreamDuration: '1s' },
        }),
      ),
    ).toEqual([
      { field: 'conf.tcp.idleTimeout', message: 'has to be greater than 0' },
      { field: 'conf.http.requestTimeout', message: 'has to be greater than 0 when defined' },
      { field: 'conf.http.idleTimeout', message: 'has to be greater than 0 when defined' },
      { field: 'conf.grpc.streamIdleTimeout', message: 'has to be greater than 0 when defined' },
    ]);
  });

  it('refuses malformed durations', () => {
    expect(() => validate(withConf({ connectTimeout: '5 seconds' }))).toThrow();
    expect(() => validate(withConf({ tcp: { idleTimeout: 60 } }))).toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { violationsOf, wireForm } from '../test-support.js';
import { evaluateVirtualOutboundHost, evaluateVirtualOutboundPort, virtualOutboundKind } from './virtual-outbound.js';

const validate = (body: unknown) => violationsOf(virtualOutboundKind, body);

const selectors = [{ match: { 'mesh.io/service': '*' } }];
const serviceParameter = { name: 'service', tagKey: 'mesh.io/service' };
/** A body whose conf is valid apart from the given fields. */
const withConf = (conf: Record<string, unknown>) =>
  validate({ selectors, conf: { host: 'foo.mesh', port: '80', parameters: [serviceParameter], ...conf } });
const preEvaluation = (error: string) => `template pre evaluation failed with error='${error}'`;

describe('VirtualOutbound', () => {
  it('accepts the documented example', () => {
    expect(
      validate({
        selectors,
        conf: {
          host: '{{.svc}}.{{.inst}}.mesh',
          port: '8080',
          parameters: [
            { name: 'svc', tagKey: 'mesh.io/service' },
            { name: 'inst', tagKey: 'mesh.io/instance' },
          ],
        },
      }),
    ).toEqual([]);
  });

  it('accepts templated ports and the syntax Go templates allow around a lookup', () => {
    expect(
      validate({
        selectors: [{ match: { region: 'eu', 'mesh.io/service': '*' } }],
        conf: {
          host: '{{- /* the service */ -}} {{ .service }}.{{.port}}-x.Mesh_.',
          port: '{{.port}}',
          parameters: [serviceParameter, { name: 'port', tagKey: 'mesh.io/port' }],
        },
      }),
    ).toEqual([]);
  });

  it('requires selectors and conf', () => {
    expect(validate({})).toEqual([
      { field: 'selectors', message: 'must have at least one element' },
      { field: 'conf', message: 'has to be defined' },
    ]);
  });

  it('checks selector tags', () => {
    expect(validate({ selectors: [{ match: { 'mesh.io/service': '', region: '' } }, { match: {} }], conf: { host: 'a', port: '1', parameters: [serviceParameter] } })).toEqual([
      { field: 'selectors[0].match["mesh.io/service"]', message: 'tag value must be non-empty' },
      { field: 'selectors[0].match["region"]', message: 'tag value must be non-empty' },
      { field: 'selectors[1].match', message: 'must have at least one tag' },
    ]);
  });

  it('requires host, port and a parameter for the service tag', () => {
    expect(validate({ selectors, conf: {} })).toEqual([
      { field: 'conf.parameters', message: 'must contain a parameter with mesh.io/service as a tagKey' },
      { field: 'conf.host', message: 'has to be defined' },
      { field: 'conf.port', message: 'has to be defined' },
    ]);
  });

  it('checks parameters', () => {
    expect(
      withConf({
        parameters: [
          { name: 'srv', tagKey: 'mesh.io/service' },
          { name: 'srv' },
          { name: 'port', tagKey: '***' },
          { name: 'mesh.io/port' },
          { name: 'a b' },
          { name: '_', tagKey: 'zone' },
          { tagKey: 'version' },
        ],
      }),
    ).toEqual([
      { field: 'conf.parameters[1].name', message: 'name is already used' },
      { field: 'conf.parameters[2].tagKey', message: 'must be a valid tag name' },
      { field: 'conf.parameters[3].name', message: 'must consist of alphanumeric characters to be used as a gotemplate key' },
      { field: 'conf.parameters[4].name', message: 'must be a valid tag name if you are not setting tagKey' },
      { field: 'conf.parameters[4].name', message: 'must consist of alphanumeric characters to be used as a gotemplate key' },
      { field: 'conf.parameters[5].name', message: 'must consist of alphanumeric characters to be used as a gotemplate key' },
      { field: 'conf.parameters[6].name', message: 'must consist of alphanumeric characters to be used as a gotemplate key' },
    ]);
  });

  it('reports templates that do not compile', () => {
    expect(withConf({ host: 'foo.{{mesh', port: '{{port' })).toEqual([
      { field: 'conf.host', message: preEvaluation(`failed compiling gotemplate error='template: :1: function "mesh" not defined'`) },
      { field: 'conf.port', message: preEvaluation(`failed compiling gotemplate error='template: :1: function "port" not defined'`) },
    ]);
    expect(withConf({ host: '{{.service', port: '{{}}' })).toEqual([
      { field: 'conf.host', message: preEvaluation(`failed compiling gotemplate error='template: :1: unclosed action'`) },
      { field: 'conf.port', message: preEvaluation(`failed compiling gotemplate error='template: :1: missing value for command'`) },
    ]);
    expect(withConf({ host: '{{if .service}}a{{end}}' })).toEqual([
      { field: 'conf.host', message: preEvaluation(`failed compiling gotemplate error='template: :1: unsupported action {{if .service}}'`) },
    ]);
  });

  it('renders with sample values: hosts must be DNS names, ports numbers in range', () => {
    const parameters = [serviceParameter, { name: 'port', tagKey: 'service' }];
    expect(withConf({ host: '{{.service}}()', port: '{{.port}}a', parameters })).toEqual([
      { field: 'conf.host', message: preEvaluation("evaluation of template with parameters didn't return a valid dns name result='dummy()'") },
      { field: 'conf.port', message: preEvaluation("evaluation of template with parameters didn't evaluate to a parsable number result='1a'") },
    ]);
    expect(withConf({ host: '{{.unknown}}.mesh', port: '{{.port}}00000', parameters })).toEqual([
      {
        field: 'conf.host',
        message: preEvaluation("evaluation of template with parameters didn't return a valid dns name result='<no value>.mesh'"),
      },
      { field: 'conf.port', message: preEvaluation("evaluation of template returned a port outside of the range [1..65535] result='100000'") },
    ]);
    expect(withConf({ host: '10.0.0.1', port: '-{{.port}}', parameters })).toEqual([
      { field: 'conf.host', message: preEvaluation("evaluation of template with parameters didn't return a valid dns name result='10.0.0.1'") },
      { field: 'conf.port', message: preEvaluation("evaluation of template returned a port outside of the range [1..65535] result='-1'") },
    ]);
  });

  it('evaluates host and port for a proxy from its tags', () => {
    const conf = {
      host: '{{.host}}.{{.instance}}',
      port: '{{.port}}{{.offset}}',
      parameters: [{ name: 'host', tagKey: 'mesh.io/service' }, { name: 'instance' }, { name: 'port' }, { name: 'offset' }],
    };
    const tags = { 'mesh.io/service': 'foo-bar', instance: '2', port: '80', offset: '81' };
    expect(evaluateVirtualOutboundHost(conf, tags)).toEqual({ ok: true, value: 'foo-bar.2' });
    expect(evaluateVirtualOutboundPort(conf, tags)).toEqual({ ok: true, value: 8081 });
    expect(evaluateVirtualOutboundHost(conf, { 'mesh.io/service': 'foo()bar', instance: '2' })).toEqual({
      ok: false,
      error: "evaluation of template with parameters didn't return a valid dns name result='foo()bar.2'",
    });
    expect(evaluateVirtualOutboundPort(conf, { port: 'hello' })).toEqual({
      ok: false,
      error: "evaluation of template with parameters didn't evaluate to a parsable number result='hello<no value>'",
    });
  });

  it('normalises the body: snake_case in, empty values dropped', () => {
    expect(
      wireForm(virtualOutboundKind, {
        selectors,
        conf: { host: 'a.mesh', port: '80', parameters: [{ name: 'service', tag_key: 'mesh.io/service', extra: 1 }, { name: 'x', tagKey: '' }] },
      }),
    ).toStrictEqual({
      selectors,
      conf: { host: 'a.mesh', port: '80', parameters: [{ name: 'service', tagKey: 'mesh.io/service' }, { name: 'x' }] },
    });
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(virtualOutboundKind, { conf: { port: 8080 } })).toMatchObject({ ok: false });
  });
});

import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { dataplanePrometheusSettings, type MeshSpec, meshKind } from './mesh.js';

const decode = (body: unknown): MeshSpec => {
  const decoded = decodeSpec(meshKind, body);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.spec as MeshSpec;
};
const validate = (body: unknown) => meshKind.validate(decode(body));
const withDefaults = (body: unknown) => meshKind.applyDefaults!(decode(body));

const prometheus = (conf?: Record<string, unknown>) => ({ metrics: { backends: [{ name: 'prom-1', type: 'prometheus', conf }] } });

describe('Mesh', () => {
  it('accepts every section filled in', () => {
    expect(
      validate({
        mtls: { enabledBackend: 'builtin-1', backends: [{ name: 'builtin-1', type: 'builtin', dpCert: { rotation: { expiration: '2y' } } }] },
        logging: {
          defaultBackend: 'tcp-1',
          backends: [
            { name: 'file-1', type: 'file', conf: { path: '/path/to/file' } },
            { name: 'file-2', type: 'file', format: '%START_TIME% %MESH_SOURCE_SERVICE% %REQ(X-REQUEST-ID?X-ID):10%', conf: { path: '/f2' } },
            { name: 'tcp-1', type: 'tcp', conf: { address: 'kibana:1234' } },
          ],
        },
        tracing: {
          defaultBackend: 'zipkin-us',
          backends: [
            { name: 'zipkin-us', type: 'zipkin', sampling: 80, conf: { url: 'http://zipkin.local:9411/v2/spans', traceId128bit: true, apiVersion: 'httpProto' } },
            { name: 'datadog', type: 'datadog', conf: { address: '127.0.0.1', port: 8126 } },
          ],
        },
        metrics: {
          enabledBackend: 'prom-1',
          backends: [
            {
              name: 'prom-1',
              type: 'prometheus',
              conf: {
                port: 5670,
                path: '/metrics',
                envoy: { filterRegex: '^server[0-9]+', usedOnly: true },
                aggregate: [{ name: 'application', port: 1234, path: '/stats' }],
                tls: { mode: 'providedTLS' },
              },
            },
          ],
        },
        constraints: {
          dataplaneProxy: {
            requirements: [{ tags: { 'k8s.mesh.io/namespace': 'ns-1', 'mesh.io/zone': 'east' } }],
            restrictions: [{ tags: { 'mesh.io/zone': '*' } }],
          },
        },
        routing: { zoneEgress: true },
      }),
    ).toEqual([]);
  });

  it('accepts an empty mesh', () => {
    expect(validate({})).toEqual([]);
  });

  it('allows one mTLS backend with a unique name, enabled among the declared ones', () => {
    expect(
      validate({ mtls: { enabledBackend: 'backend-2', backends: [{ name: 'backend-1', type: 'builtin' }, { name: 'backend-1', type: 'builtin' }] } }),
    ).toEqual([
      { field: 'mtls.backends', message: 'cannot have more than 1 backends' },
      { field: 'mtls.backends[1].name', message: '"backend-1" name is already used for another backend' },
      { field: 'mtls.enabledBackend', message: 'has to be set to one of the backends in the mesh' },
    ]);
  });

  it('checks the dataplane certificate expiration format at its literal path', () => {
    const mesh = (expiration?: string) => ({
      mtls: { enabledBackend: 'b', backends: [{ name: 'b', type: 'builtin', dpCert: { rotation: { expiration } } }] },
    });
    expect(validate(mesh('2e'))).toEqual([{ field: 'mtls.dpcert.rotation.expiration', message: 'has to be a valid format' }]);
    expect(validate(mesh())).toEqual([{ field: 'mtls.dpcert.rotation.expiration', message: 'has to be a valid format' }]);
    expect(validate(mesh('0'))).toEqual([]);
    expect(validate(mesh('36h'))).toEqual([]);
    expect(validate(mesh('500ms'))).toEqual([]);
  });

  it('reports every logging backend problem in order', () => {
    expect(
      validate({
        mtls: { enabledBackend: 'invalid-backend' },
        logging: {
          backends: [
            { type: 'file', conf: { path: '/path' } },
            { name: 'tcp-1', type: 'file', conf: { address: 'invalid-address' } },
            { name: 'tcp-1', type: 'tcp', path: { address: '' } },
            { name: 'tcp-2', type: 'tcp', conf: { address: 'wrong-format:234:234' } },
            { name: 'tcp-3', type: 'tcp', conf: { address: ':234' } },
            { name: 'syslog', type: 'syslog' },
          ],
          defaultBackend: 'invalid-backend',
        },
      }),
    ).toEqual([
      { field: 'mtls.enabledBackend', message: 'has to be set to one of the backends in the mesh' },
      { field: 'logging.backends[0].name', message: 'cannot be empty' },
      { field: 'logging.backends[1].config.path', message: 'cannot be empty' },
      { field: 'logging.backends[2].config.address', message: 'cannot be empty' },
      { field: 'logging.backends[2].name', message: '"tcp-1" name is already used for another backend' },
      { field: 'logging.backends[3].config.address', message: 'has to be in format of HOST:PORT' },
      { field: 'logging.backends[4].config.address', message: 'has to be in format of HOST:PORT' },
      { field: 'logging.backends[5].type', message: 'unknown backend type. Available backends: "tcp", "file"' },
      { field: 'logging.defaultBackend', message: 'has to be set to one of the logging backend in mesh' },
    ]);
  });

  it('parses access log formats', () => {
    const mesh = (format: string) => ({ logging: { backends: [{ name: 'f', type: 'file', format, conf: { path: '/var/logs' } }] } });
    expect(validate(mesh('%START_TIME% %sent_bytes%'))).toEqual([
      {
        field: 'logging.backends[0].format',
        message: 'format string is not valid: expected a command operator to start at position 14, instead got: "%sent_bytes%"',
      },
    ]);
    expect(validate(mesh('%REQ%'))).toEqual([
      {
        field: 'logging.backends[0].format',
        message:
          'format string is not valid: command "%REQ(X?Y):Z%" requires a header and optional alternative header names as its arguments, instead got "%REQ%"',
      },
    ]);
    expect(validate(mesh('%BYTES_SENT(x)%'))).toEqual([
      {
        field: 'logging.backends[0].format',
        message: 'format string is not valid: command "%BYTES_SENT%" doesn\'t support arguments or max length constraint, instead got "%BYTES_SENT(x)%"',
      },
    ]);
    expect(validate(mesh('[%START_TIME(%s)%] %DYNAMIC_METADATA(ns:key):5% %FILTER_STATE(k)% done'))).toEqual([]);
  });

  it('reports tracing backend problems', () => {
    expect(
      validate({
        tracing: {
          defaultBackend: 'non-existent',
          backends: [
            { type: 'zipkin', sampling: 100.1, conf: { url: '' } },
            { name: 'z', type: 'zipkin', sampling: -1, conf: { url: 'invalid-url', apiVersion: 'invalid' } },
            { name: 'z', type: 'zipkin', conf: { url: 'http://zipkin-us.local/v2/spans' } },
            { name: 'dd', type: 'datadog', conf: {} },
            { name: 'jaeger', type: 'jaeger' },
          ],
        },
      }),
    ).toEqual([
      { field: 'tracing.backends[0].name', message: 'cannot be empty' },
      { field: 'tracing.backends[0].sampling', message: 'has to be in [0.0 - 100.0] range' },
      { field: 'tracing.backends[0].config.url', message: 'cannot be empty' },
      { field: 'tracing.backends[1].sampling', message: 'has to be in [0.0 - 100.0] range' },
      { field: 'tracing.backends[1].config.apiVersion', message: 'has invalid value. Allowed values: httpJsonV1, httpJson, httpProto' },
      { field: 'tracing.backends[1].config.url', message: 'invalid URL' },
      { field: 'tracing.backends[2].config.url', message: 'port has to be explicitly specified' },
      { field: 'tracing.backends[2].name', message: '"z" name is already used for another backend' },
      { field: 'tracing.backends[3].config.address', message: 'cannot be empty' },
      { field: 'tracing.backends[3].config.port', message: 'port must be in the range [1, 65535]' },
      { field: 'tracing.backends[4].type', message: 'unknown backend type. Available backends: "zipkin", "datadog"' },
      { field: 'tracing.defaultBackend', message: 'has to be set to one of the tracing backend in mesh' },
    ]);
  });

  it('reports unknown backend types in section order: logging, tracing, metrics', () => {
    expect(
      validate({
        metrics: { backends: [{ name: 'backend-1', type: 'xxx' }] },
        logging: { backends: [{ name: 'backend-1', type: 'xxx' }] },
        tracing: { backends: [{ name: 'backend-1', type: 'xxx' }] },
      }),
    ).toEqual([
      { field: 'logging.backends[0].type', message: 'unknown backend type. Available backends: "tcp", "file"' },
      { field: 'tracing.backends[0].type', message: 'unknown backend type. Available backends: "zipkin", "datadog"' },
      { field: 'metrics.backends[0].type', message: 'unknown backend type. Available backends: "prometheus"' },
    ]);
  });

  it('reports metrics backend names, enabled backend and duplicate aggregates', () => {
    expect(
      validate({
        metrics: {
          enabledBackend: 'backend-2',
          backends: [
            {
              name: 'backend-1',
              type: 'prometheus',
              conf: { aggregate: [{ name: 'app', port: 123 }, { name: 'app', path: '/stats' }, { name: 'sidecar' }, { name: 'sidecar' }] },
            },
            { name: 'backend-1', type: 'prometheus' },
          ],
        },
      }),
    ).toEqual([
      { field: 'metrics.backends[0].conf.aggregate[1].name', message: 'duplicate entry: app, values have to be unique' },
      { field: 'metrics.backends[0].conf.aggregate[3].name', message: 'duplicate entry: sidecar, values have to be unique' },
      { field: 'metrics.backends[1].name', message: '"backend-1" name is already used for another backend' },
      { field: 'metrics.enabledBackend', message: 'has to be set to one of the backends in the mesh' },
    ]);
  });

  it('refuses skipMTLS contradicting tls.mode', () => {
    const conflict = [{ field: 'metrics.backends[0].conf', message: 'skipMTLS and tls configuration cannot be defined together' }];
    expect(validate(prometheus({ skipMTLS: true, tls: { mode: 'providedTLS' } }))).toEqual(conflict);
    expect(validate(prometheus({ skipMTLS: false, tls: { mode: 'providedTLS' } }))).toEqual(conflict);
    expect(validate(prometheus({ skipMTLS: false, tls: { mode: 'disabled' } }))).toEqual(conflict);
    expect(validate(prometheus({ skipMTLS: true, tls: { mode: 'activeMTLSBackend' } }))).toEqual(conflict);
    expect(validate(prometheus({ skipMTLS: true, tls: { mode: 'disabled' } }))).toEqual([]);
    expect(validate(prometheus({ skipMTLS: false, tls: {} }))).toEqual([]);
  });

  it('refuses a filter regex Go would not compile', () => {
    const [violation, ...rest] = validate(prometheus({ envoy: { filterRegex: '(unclosed' } }));
    expect(rest).toEqual([]);
    expect(violation?.field).toBe('metrics.backends[0].conf.envoy.filterRegex');
    expect(violation?.message).toMatch(/^provided regexp isn't correct: /);
    expect(validate(prometheus({ envoy: { filterRegex: 'a(?=b)' } }))).toHaveLength(1);
    expect(validate(prometheus({ envoy: { filterRegex: '(?i)^(?P<name>cluster)\\.' } }))).toEqual([]);
  });

  it('reports a conf that does not fit the backend type', () => {
    const [prom] = validate(prometheus({ port: 'abc' }));
    expect(prom?.field).toBe('metrics.backends[0].conf');
    expect(prom?.message).toMatch(/^could not parse config: port/);
    const [file] = validate({ logging: { backends: [{ name: 'f', type: 'file', conf: { path: 7 } }] } });
    expect(file?.field).toBe('logging.backends[0].config');
    expect(file?.message).toMatch(/^could not parse config: /);
  });

  it('checks dataplane proxy constraint tags like selectors with at least one tag', () => {
    const rules = [{}, { tags: { '': '' } }, { tags: { '!@#$': '!@#$' } }];
    expect(validate({ constraints: { dataplaneProxy: { requirements: rules, restrictions: rules } } })).toEqual(
      ['requirements', 'restrictions'].flatMap((list) => [
        { field: `constraints.dataplaneProxy.${list}[0].tags`, message: 'must have at least one tag' },
        { field: `constraints.dataplaneProxy.${list}[1].tags`, message: 'tag name must be non-empty' },
        { field: `constraints.dataplaneProxy.${list}[1].tags[""]`, message: 'tag value must be non-empty' },
        {
          field: `constraints.dataplaneProxy.${list}[2].tags["!@#$"]`,
          message: 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores',
        },
        {
          field: `constraints.dataplaneProxy.${list}[2].tags["!@#$"]`,
          message: 'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
        },
      ]),
    );
  });

  it('requires an enabled mTLS backend for zone egress routing', () => {
    const missing = [{ field: 'mtls', message: 'has to be set when zoneEgress enabled' }];
    expect(validate({ routing: { zoneEgress: true } })).toEqual(missing);
    expect(validate({ mtls: { backends: [{ name: 'b', type: 'builtin' }] }, routing: { zoneEgress: true } })).toEqual(missing);
  });

  it('normalises the wire form: snake_case in, zero scalars out, wrappers and durations kept', () => {
    expect(
      decode({
        mtls: {
          enabled_backend: 'ca-1',
          skip_validation: false,
          backends: [
            { name: 'ca-1', type: 'builtin', mode: 'STRICT', dp_cert: { rotation: { expiration: '1d' }, request_timeout: '1m' }, root_chain: { request_timeout: '250ms' } },
          ],
        },
        tracing: { backends: [{ name: 't', type: 'zipkin', sampling: 0, conf: { url: 'http://z:9411' } }] },
        networking: { outbound: { passthrough: false } },
        routing: { localityAwareLoadBalancing: false, zoneEgress: true },
        skip_creating_initial_policies: ['*'],
        unknown: { field: 1 },
      }),
    ).toEqual({
      mtls: {
        enabledBackend: 'ca-1',
        backends: [{ name: 'ca-1', type: 'builtin', dpCert: { rotation: { expiration: '1d' }, requestTimeout: '60s' }, rootChain: { requestTimeout: '0.250s' } }],
      },
      tracing: { backends: [{ name: 't', type: 'zipkin', sampling: 0, conf: { url: 'http://z:9411' } }] },
      networking: { outbound: { passthrough: false } },
      routing: { zoneEgress: true },
      skipCreatingInitialPolicies: ['*'],
    });
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(meshKind, { mtls: { backends: {} } })).toMatchObject({ ok: false });
    expect(decodeSpec(meshKind, { routing: { zoneEgress: 'yes' } })).toMatchObject({ ok: false });
    expect(decodeSpec(meshKind, { mtls: { backends: [{ mode: 'LOOSE' }] } })).toMatchObject({ ok: false });
  });

  describe('defaults', () => {
    it('fills in an empty prometheus backend', () => {
      expect(withDefaults(prometheus())).toEqual(
        prometheus({ port: 5670, path: '/metrics', tags: { 'mesh.io/service': 'dataplane-metrics' }, tls: {} }),
      );
    });

    it('keeps values that are set and reduces tls to its proto form', () => {
      const conf = { path: '/non-standard-path', port: 1234, tags: { 'mesh.io/service': 'custom' } };
      expect(withDefaults(prometheus({ ...conf, tls: { mode: 'activeMTLSBackend' } }))).toEqual(prometheus({ ...conf, tls: {} }));
      expect(withDefaults(prometheus({ ...conf, tls: { mode: 'providedTLS' } }))).toEqual(prometheus({ ...conf, tls: { mode: 'providedTLS' } }));
    });

    it('translates skipMTLS into a tls mode', () => {
      const conf = { path: '/metrics', port: 5670, tags: { 'mesh.io/service': 'dataplane-metrics' } };
      expect(withDefaults(prometheus({ skipMTLS: true }))).toEqual(prometheus({ ...conf, skipMTLS: true, tls: { mode: 'disabled' } }));
      expect(withDefaults(prometheus({ skipMTLS: false }))).toEqual(prometheus({ ...conf, skipMTLS: false, tls: {} }));
      expect(withDefaults(prometheus({ skipMTLS: true, tls: { mode: 'providedTLS' } }))).toEqual(prometheus({ ...conf, tls: { mode: 'providedTLS' } }));
    });

    it('drops unknown conf fields and normalises the typed ones', () => {
      expect(withDefaults(prometheus({ port: '9090', extra: true, aggregate: [{ name: 'app', port: '80', enabled: false }] }))).toEqual(
        prometheus({
          port: 9090,
          path: '/metrics',
          tags: { 'mesh.io/service': 'dataplane-metrics' },
          aggregate: [{ name: 'app', port: 80, enabled: false }],
          tls: {},
        }),
      );
    });

    it('leaves other backends, unreadable confs and meshes without metrics alone', () => {
      const other = { metrics: { backends: [{ name: 'x', type: 'xxx', conf: { a: 1 } }] } };
      expect(withDefaults(other)).toEqual(other);
      expect(withDefaults(prometheus({ port: 'abc' }))).toEqual(prometheus({ port: 'abc' }));
      expect(withDefaults({ routing: { zoneEgress: true } })).toEqual({ routing: { zoneEgress: true } });
      expect(withDefaults({ metrics: {} })).toEqual({ metrics: {} });
    });
  });

  describe('the prometheus settings of a dataplane', () => {
    const enabled = (conf: Record<string, unknown>) => decode({ metrics: { enabledBackend: 'prom-1', ...prometheus(conf).metrics } });

    it("lays the dataplane's own conf over the mesh's, an aggregate entry replacing the mesh's of the same name", () => {
      const mesh = enabled({ port: 5670, path: '/metrics', tags: { team: 'a' }, aggregate: [{ name: 'app', port: 8080, path: '/stats' }, { name: 'sidecar', port: 9000 }] });
      const own = { name: undefined, type: 'prometheus', conf: { port: 1234, tags: { zone: 'b' }, tls: { mode: 'providedTLS' }, aggregate: [{ name: 'app', port: 8081, enabled: false }] } };
      expect(dataplanePrometheusSettings(mesh, own)).toEqual({
        port: 1234,
        path: '/metrics',
        tags: { team: 'a', zone: 'b' },
        tls: { mode: 'providedTLS' },
        aggregate: [
          { name: 'app', port: 8081, enabled: false },
          { name: 'sidecar', port: 9000 },
        ],
      });
      expect(dataplanePrometheusSettings(mesh, undefined)).toMatchObject({ port: 5670, aggregate: [{ name: 'app', port: 8080, path: '/stats' }, { name: 'sidecar', port: 9000 }] });
    });

    it('is undefined unless the mesh enables a prometheus backend', () => {
      expect(dataplanePrometheusSettings(decode(prometheus({ port: 5670 })), { name: undefined, type: 'prometheus', conf: { port: 1 } })).toBeUndefined();
      expect(dataplanePrometheusSettings(decode({}), undefined)).toBeUndefined();
    });
  });
});

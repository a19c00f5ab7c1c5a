import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { accessLogFormatError } from '../validation/access-log-format.js';
import { parseRequestUri, splitHostPort } from '../validation/address.js';
import { validatePort } from '../validation/scalars.js';
import { SERVICE_TAG, validateSelector } from '../validation/tags.js';
import { fieldPath, indexPath, Violations } from '../validation/violations.js';
import { bool, boolValue, doubleValue, duration, enumOf, list, message, str, stringMap, struct, u32 } from '../wire.js';

/** A metrics backend; also a dataplane's own `metrics`. `conf` stays free-form until its type reads it. */
export const MetricsBackendSchema = message({ name: str(), type: str(), conf: struct() });
export type MetricsBackend = z.infer<typeof MetricsBackendSchema>;

const CertificateAuthorityBackendSchema = message({
  name: str(),
  type: str(),
  dpCert: message({
    rotation: message({ expiration: str() }).optional(),
    requestTimeout: duration(),
  }).optional(),
  conf: struct(),
  mode: enumOf(['STRICT', 'PERMISSIVE']),
  rootChain: message({ requestTimeout: duration() }).optional(),
});

const TracingBackendSchema = message({ name: str(), sampling: doubleValue(), type: str(), conf: struct() });
const LoggingBackendSchema = message({ name: str(), format: str(), type: str(), conf: struct() });
const DataplaneProxyRuleSchema = message({ tags: stringMap() });

export const MeshSpecSchema = message({
  mtls: message({ enabledBackend: str(), backends: list(CertificateAuthorityBackendSchema), skipValidation: bool() }).optional(),
  tracing: message({ defaultBackend: str(), backends: list(TracingBackendSchema) }).optional(),
  logging: message({ defaultBackend: str(), backends: list(LoggingBackendSchema) }).optional(),
  metrics: message({ enabledBackend: str(), backends: list(MetricsBackendSchema) }).optional(),
  networking: message({ outbound: message({ passthrough: boolValue() }).optional() }).optional(),
  routing: message({ localityAwareLoadBalancing: bool(), zoneEgress: bool() }).optional(),
  constraints: message({
    dataplaneProxy: message({ requirements: list(DataplaneProxyRuleSchema), restrictions: list(DataplaneProxyRuleSchema) }).optional(),
  }).optional(),
  skipCreatingInitialPolicies: list(z.string()),
});
export type MeshSpec = z.infer<typeof MeshSpecSchema>;
export type MeshConstraints = MeshSpec['constraints'];

// The typed messages the reference reads backend `conf` structs into.
const PrometheusConfigSchema = message({
  port: u32(),
  path: str(),
  tags: stringMap(),
  skipMTLS: boolValue(),
  aggregate: list(message({ name: str(), port: u32(), path: str(), enabled: boolValue(), address: str() })),
  envoy: message({ filterRegex: str(), usedOnly: boolValue() }).optional(),
  tls: message({ mode: enumOf(['activeMTLSBackend', 'providedTLS', 'disabled']) }).optional(),
});
type PrometheusConfig = z.infer<typeof PrometheusConfigSchema>;
const FileLoggingConfigSchema = message({ path: str() });
const TcpLoggingConfigSchema = message({ address: str() });
const ZipkinConfigSchema = message({ url: str(), traceId128bit: bool(), apiVersion: str(), sharedSpanContext: boolValue() });
const DatadogConfigSchema = message({ address: str(), port: u32(), splitService: bool() });

type ReadConf<T> = { ok: true; value: T } | { ok: false; error: string };

/** Reads a free-form `conf` as its typed message (absent reads as empty, like the reference). */
function readConf<S extends z.ZodType>(schema: S, conf: Record<string, unknown> | undefined): ReadConf<z.output<S>> {
  const parsed = schema.safeParse(conf ?? {});
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.map(String).join('.');
  return { ok: false, error: `could not parse config: ${where ? `${where}: ` : ''}${issue.message}` };
}

/** Reports each backend name used a second time, as the reference does for every backend list. */
function duplicateNames(v: Violations) {
  const seen = new Set<string>();
  return {
    check(path: string, name: string | undefined): void {
      const key = name ?? '';
      if (seen.has(key)) v.add(path, `${JSON.stringify(key)} name is already used for another backend`);
      seen.add(key);
    },
    has: (name: string): boolean => seen.has(name),
  };
}

const CERT_EXPIRATION = /^[0-9]+(y|w|d|h|m|s|ms)$/;

function validateMtls(v: Violations, mtls: MeshSpec['mtls']): void {
  if (!mtls) return;
  const backends = mtls.backends ?? [];
  if (backends.length > 1) v.add('mtls.backends', 'cannot have more than 1 backends');
  const names = duplicateNames(v);
  backends.forEach((backend, i) => names.check(fieldPath(indexPath('mtls.backends', i), 'name'), backend.name));
  if (mtls.enabledBackend && !names.has(mtls.enabledBackend)) {
    v.add('mtls.enabledBackend', 'has to be set to one of the backends in the mesh');
  }
  for (const backend of backends) {
    const expiration = backend.dpCert?.rotation?.expiration ?? '';
    // The reference reports this at an unindexed, lower-case path.
    if (backend.dpCert && expiration !== '0' && !CERT_EXPIRATION.test(expiration)) {
      v.add('mtls.dpcert.rotation.expiration', 'has to be a valid format');
    }
  }
}

function validateLogging(v: Violations, logging: MeshSpec['logging']): void {
  if (!logging) return;
  const names = duplicateNames(v);
  (logging.backends ?? []).forEach((backend, i) => {
    const path = indexPath('logging.backends', i);
    if (!backend.name) v.add(fieldPath(path, 'name'), 'cannot be empty');
    const formatError = accessLogFormatError(backend.format ?? '');
    if (formatError) v.add(fieldPath(path, 'format'), formatError);
    // The reference names the `conf` field `config` in these paths.
    const config = fieldPath(path, 'config');
    if (backend.type === 'file') {
      const read = readConf(FileLoggingConfigSchema, backend.conf);
      if (!read.ok) v.add(config, read.error);
      else if (!read.value.path) v.add(fieldPath(config, 'path'), 'cannot be empty');
    } else if (backend.type === 'tcp') {
      const read = readConf(TcpLoggingConfigSchema, backend.conf);
      if (!read.ok) v.add(config, read.error);
      else if (!read.value.address) v.add(fieldPath(config, 'address'), 'cannot be empty');
      else {
        const hostPort = splitHostPort(read.value.address);
        if (!hostPort?.host || !hostPort.port) v.add(fieldPath(config, 'address'), 'has to be in format of HOST:PORT');
      }
    } else {
      v.add(fieldPath(path, 'type'), 'unknown backend type. Available backends: "tcp", "file"');
    }
    names.check(fieldPath(path, 'name'), backend.name);
  });
  if (logging.defaultBackend && !names.has(logging.defaultBackend)) {
    v.add('logging.defaultBackend', 'has to be set to one of the logging backend in mesh');
  }
}

const ZIPKIN_API_VERSIONS = ['httpJsonV1', 'httpJson', 'httpProto'];

function validateZipkin(v: Violations, config: string, conf: Record<string, unknown> | undefined): void {
  const read = readConf(ZipkinConfigSchema, conf);
  if (!read.ok) {
    v.add(config, read.error);
    return;
  }
  const { apiVersion, url } = read.value;
  if (apiVersion && !ZIPKIN_API_VERSIONS.includes(apiVersion)) {
    v.add(fieldPath(config, 'apiVersion'), `has invalid value. Allowed values: ${ZIPKIN_API_VERSIONS.join(', ')}`);
  }
  if (!url) {
    v.add(fieldPath(config, 'url'), 'cannot be empty');
    return;
  }
  const uri = parseRequestUri(url);
  if (!uri) v.add(fieldPath(config, 'url'), 'invalid URL');
  else if (uri.port === '') v.add(fieldPath(config, 'url'), 'port has to be explicitly specified');
}

function validateDatadog(v: Violations, config: string, conf: Record<string, unknown> | undefined): void {
  const read = readConf(DatadogConfigSchema, conf);
  if (!read.ok) {
    v.add(config, read.error);
    return;
  }
  if (!read.value.address) v.add(fieldPath(config, 'address'), 'cannot be empty');
  validatePort(v, fieldPath(config, 'port'), read.value.port);
}

function validateTracing(v: Violations, tracing: MeshSpec['tracing']): void {
  if (!tracing) return;
  const names = duplicateNames(v);
  (tracing.backends ?? []).forEach((backend, i) => {
    const path = indexPath('tracing.backends', i);
    if (!backend.name) v.add(fieldPath(path, 'name'), 'cannot be empty');
    const sampling = backend.sampling ?? 0;
    if (sampling < 0 || sampling > 100) v.add(fieldPath(path, 'sampling'), 'has to be in [0.0 - 100.0] range');
    if (backend.type === 'zipkin') validateZipkin(v, fieldPath(path, 'config'), backend.conf);
    else if (backend.type === 'datadog') validateDatadog(v, fieldPath(path, 'config'), backend.conf);
    else v.add(fieldPath(path, 'type'), 'unknown backend type. Available backends: "zipkin", "datadog"');
    names.check(fieldPath(path, 'name'), backend.name);
  });
  if (tracing.defaultBackend && !names.has(tracing.defaultBackend)) {
    v.add('tracing.defaultBackend', 'has to be set to one of the tracing backend in mesh');
  }
}

/** skipMTLS and tls.mode may both be set only when they say the same thing. */
const tlsAgreesWithSkipMtls = (cfg: PrometheusConfig): boolean =>
  cfg.skipMTLS ? cfg.tls?.mode === 'disabled' : cfg.tls?.mode === undefined;

/**
 * Why Go's RE2 would refuse a pattern, or undefined. JS syntax is close; RE2-only forms
 * (named groups `(?P<n>`, inline flags) are translated and JS-only ones refused first.
 */
function regexpError(pattern: string): string | undefined {
  if (/\(\?<?[=!]/.test(pattern)) return 'error parsing regexp: invalid or unsupported Perl syntax';
  if (/\\[1-9]/.test(pattern)) return 'error parsing regexp: invalid escape sequence';
  const asJs = pattern.replaceAll('(?P<', '(?<').replace(/\(\?[imsU-]+\)/g, '').replace(/\(\?[imsU-]+:/g, '(?:');
  try {
    new RegExp(asJs);
    return undefined;
  } catch (error) {
    return `error parsing regexp: ${(error as Error).message}`;
  }
}

function validatePrometheusConf(v: Violations, path: string, conf: Record<string, unknown> | undefined): void {
  const read = readConf(PrometheusConfigSchema, conf);
  if (!read.ok) {
    v.add(path, read.error);
    return;
  }
  const cfg = read.value;
  if (cfg.skipMTLS !== undefined && cfg.tls !== undefined && !tlsAgreesWithSkipMtls(cfg)) {
    v.add(path, 'skipMTLS and tls configuration cannot be defined together');
    return;
  }
  const regexError = regexpError(cfg.envoy?.filterRegex ?? '');
  if (regexError) {
    v.add(fieldPath(path, 'envoy.filterRegex'), `provided regexp isn't correct: ${regexError}`);
    return;
  }
  const seen = new Set<string>();
  (cfg.aggregate ?? []).forEach((entry, i) => {
    const name = entry.name ?? '';
    if (seen.has(name)) v.add(fieldPath(indexPath(fieldPath(path, 'aggregate'), i), 'name'), `duplicate entry: ${name}, values have to be unique`);
    seen.add(name);
  });
}

/** A metrics backend's type and conf, at `<path>.type` / `<path>.conf` (mesh backends and dataplane `metrics`). */
export function validateMetricsBackend(v: Violations, path: string, backend: MetricsBackend): void {
  if (backend.type !== 'prometheus') v.add(fieldPath(path, 'type'), 'unknown backend type. Available backends: "prometheus"');
  else validatePrometheusConf(v, fieldPath(path, 'conf'), backend.conf);
}

function validateMetrics(v: Violations, metrics: MeshSpec['metrics']): void {
  if (!metrics) return;
  const names = duplicateNames(v);
  (metrics.backends ?? []).forEach((backend, i) => {
    const path = indexPath('metrics.backends', i);
    names.check(fieldPath(path, 'name'), backend.name);
    validateMetricsBackend(v, path, backend);
  });
  if (metrics.enabledBackend && !names.has(metrics.enabledBackend)) {
    v.add('metrics.enabledBackend', 'has to be set to one of the backends in the mesh');
  }
}

function validateConstraints(v: Violations, constraints: MeshConstraints): void {
  const proxy = constraints?.dataplaneProxy;
  for (const rules of ['requirements', 'restrictions'] as const) {
    (proxy?.[rules] ?? []).forEach((rule, i) => {
      validateSelector(v, fieldPath(indexPath(`constraints.dataplaneProxy.${rules}`, i), 'tags'), rule.tags, { requireAtLeastOneTag: true });
    });
  }
}

export function validateMesh(spec: MeshSpec) {
  const v = new Violations();
  validateMtls(v, spec.mtls);
  validateLogging(v, spec.logging);
  validateTracing(v, spec.tracing);
  validateMetrics(v, spec.metrics);
  validateConstraints(v, spec.constraints);
  if (spec.routing?.zoneEgress && !spec.mtls?.enabledBackend) v.add('mtls', 'has to be set when zoneEgress enabled');
  return v.list;
}

/** The reference rewrites a prometheus conf into its typed form with defaults filled in. */
function defaultPrometheusConf(conf: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const read = readConf(PrometheusConfigSchema, conf);
  // An unreadable conf is left for validation to report.
  if (!read.ok) return conf;
  const cfg = { ...read.value };
  if (cfg.tls === undefined) cfg.tls = { mode: cfg.skipMTLS ? 'disabled' : undefined };
  else if (cfg.skipMTLS !== undefined && cfg.tls.mode === 'providedTLS') cfg.skipMTLS = undefined;
  cfg.port ||= 5670;
  cfg.path ||= '/metrics';
  cfg.tags ??= { [SERVICE_TAG]: 'dataplane-metrics' };
  // A Struct holds plain JSON: drop the undefined fields of the typed form.
  return JSON.parse(JSON.stringify(cfg)) as Record<string, unknown>;
}

export type PrometheusSettings = PrometheusConfig;

/** Fields set in `over` replace those of `base`; nested messages and maps merge field by field (a proto merge). */
function mergeSet<T extends Record<string, unknown>>(base: T, over: T): T {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const current = merged[key];
    const bothObjects = [value, current].every((side) => side !== null && typeof side === 'object' && !Array.isArray(side));
    merged[key] = bothObjects ? mergeSet(current as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return merged as T;
}

/**
 * The prometheus settings a dataplane runs with: the mesh's enabled backend when it is a
 * prometheus one, with the dataplane's own prometheus `metrics` over it, where an `aggregate` entry
 * replaces the mesh's entry of the same name. Undefined when the mesh enables no prometheus
 * backend or its conf cannot be read (validation refuses such a mesh).
 */
export function dataplanePrometheusSettings(mesh: MeshSpec, dataplaneMetrics: MetricsBackend | undefined): PrometheusSettings | undefined {
  const metrics = mesh.metrics;
  const backend = metrics?.enabledBackend ? metrics.backends?.find((candidate) => (candidate.name ?? '') === metrics.enabledBackend) : undefined;
  if (backend?.type !== 'prometheus') return undefined;
  const meshConf = readConf(PrometheusConfigSchema, backend.conf);
  if (!meshConf.ok) return undefined;
  const own = dataplaneMetrics?.type === 'prometheus' ? readConf(PrometheusConfigSchema, dataplaneMetrics.conf) : undefined;
  if (!own?.ok) return meshConf.value;
  const aggregate = new Map((meshConf.value.aggregate ?? []).map((entry) => [entry.name ?? '', entry]));
  for (const entry of own.value.aggregate ?? []) aggregate.set(entry.name ?? '', entry);
  const merged = mergeSet({ ...meshConf.value, aggregate: undefined }, { ...own.value, aggregate: undefined });
  return aggregate.size > 0 ? { ...merged, aggregate: [...aggregate.values()] } : merged;
}

export function applyMeshDefaults(spec: MeshSpec): MeshSpec {
  const metrics = spec.metrics;
  if (!metrics?.backends) return spec;
  const backends = metrics.backends.map((backend) =>
    backend.type === 'prometheus' ? { ...backend, conf: defaultPrometheusConf(backend.conf) } : backend,
  );
  return { ...spec, metrics: { ...metrics, backends } };
}

export const meshKind = defineKind({
  name: 'Mesh',
  cliNames: { singular: 'mesh', plural: 'meshes' },
  path: 'meshes',
  scope: 'global',
  displayName: 'Meshes',
  singularDisplayName: 'Mesh',
  schema: MeshSpecSchema,
  validate: validateMesh,
  applyDefaults: applyMeshDefaults,
  affects: 'meshProxies',
  example: {
    name: demo.EXAMPLE_MESH,
    spec: {
      mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] },
      logging: { defaultBackend: 'file', backends: [{ name: 'file', type: 'file', conf: { path: '/tmp/access.log' } }] },
      tracing: { defaultBackend: 'zipkin', backends: [{ name: 'zipkin', type: 'zipkin', conf: { url: 'http://zipkin.local:9411/api/v2/spans' } }] },
    },
  },
  cliColumns: [
    { header: 'mTLS', value: ({ mtls }) => (mtls?.enabledBackend ? `${mtls.backends?.find((backend) => backend.name === mtls.enabledBackend)?.type ?? ''}/${mtls.enabledBackend}` : 'off') },
    { header: 'METRICS', value: ({ metrics }) => (metrics?.enabledBackend ? `prometheus/${metrics.enabledBackend}` : 'off') },
    { header: 'LOGGING', value: ({ logging }) => logging?.defaultBackend ?? 'off' },
    { header: 'TRACING', value: ({ tracing }) => tracing?.defaultBackend ?? 'off' },
  ],
});

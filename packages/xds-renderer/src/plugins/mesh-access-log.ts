// MeshAccessLog (docs/policies.md): access logs added to the HTTP connection managers and TCP
// proxies of the selected inbounds (`from`), the outbounds (`to`) and the transparent proxy's
// pass-through (as the service `pass_through`): to a file, to a TCP collector through the data
// plane agent's socket, or to an OpenTelemetry collector over gRPC (a cluster per collector).
import type { MeshAccessLogConf } from '@mesh/model';
import { PASS_THROUGH_SERVICE } from '@mesh/policy-matcher';
import { configureUpstreamHttp, staticCluster } from '../clusters.js';
import { type JsonObject, type JsonValue, type Listener, scalarText, TYPE, typedExtension } from '../envoy.js';
import { type AccessLogSubject, DEFAULT_HTTP_LOG_FORMAT, DEFAULT_NETWORK_LOG_FORMAT, interpolateLogFormat } from '../filters.js';
import { passThroughNames } from '../names.js';
import { ORIGIN } from '../resource-set.js';
import {
  confOf,
  filterChainsOf,
  gatewayListenerSites,
  inboundRulesAt,
  inboundSites,
  isObject,
  listOf,
  MESH_SUBSET,
  meshServiceSubset,
  outboundSites,
  type Plugin,
  type PluginInput,
  updateHttpConnectionManager,
  updateTcpProxy,
} from './common.js';

type Backend = NonNullable<MeshAccessLogConf['backends']>[number];
type Format = NonNullable<NonNullable<Backend['file']>['format']>;

const OPEN_TELEMETRY_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig';
const DEFAULT_OTLP_PORT = 4317;

/** The OpenTelemetry collectors the logs of a proxy go to, a cluster each, numbered as they are first used. */
class Collectors {
  private readonly indexes = new Map<string, { address: string; port: number; index: number }>();

  clusterName(endpoint: string): string {
    const [address = '', port] = endpoint.split(':');
    const portNumber = port === undefined ? DEFAULT_OTLP_PORT : Number.parseInt(port, 10) || 0;
    const key = `${address}:${portNumber}`;
    let collector = this.indexes.get(key);
    if (!collector) this.indexes.set(key, (collector = { address, port: portNumber, index: this.indexes.size }));
    return `meshaccesslog:opentelemetry:${collector.index}`;
  }

  addClusters(input: PluginInput): void {
    for (const { address, port, index } of this.indexes.values()) {
      const cluster = staticCluster(`meshaccesslog:opentelemetry:${index}`, address, port, input.state.ipv6);
      configureUpstreamHttp(cluster, 'http2');
      input.resources.addCluster(ORIGIN.meshAccessLog, cluster);
    }
  }
}

const fileLog = (path: string, logFormat: JsonObject): JsonObject =>
  typedExtension('envoy.access_loggers.file', { '@type': TYPE.fileAccessLog, logFormat, path });

const withOmitEmpty = (format: JsonObject, omit: boolean | undefined): JsonObject => (omit ? { ...format, omitEmptyValues: true } : format);

/** OTLP AnyValue in proto3 JSON: exactly one member of the right shape. */
function isAnyValue(value: unknown): value is JsonObject {
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  if (keys.length === 0) return true;
  if (keys.length !== 1) return false;
  const member = value[keys[0] as string];
  switch (keys[0]) {
    case 'stringValue':
    case 'bytesValue':
      return typeof member === 'string';
    case 'boolValue':
      return typeof member === 'boolean';
    case 'intValue':
      return (typeof member === 'number' && Number.isInteger(member)) || (typeof member === 'string' && /^-?\d+$/.test(member));
    case 'doubleValue':
      return typeof member === 'number';
    case 'arrayValue':
      return isObject(member) && Object.keys(member).every((key) => key === 'values') && (member.values === undefined || (Array.isArray(member.values) && member.values.every(isAnyValue)));
    case 'kvlistValue':
      return (
        isObject(member) &&
        Object.keys(member).every((key) => key === 'values') &&
        (member.values === undefined ||
          (Array.isArray(member.values) &&
            member.values.every((entry) => isObject(entry) && Object.keys(entry).every((key) => key === 'key' || key === 'value') && (entry.key === undefined || typeof entry.key === 'string') && (entry.value === undefined || isAnyValue(entry.value)))))
      );
    default:
      return false;
  }
}

/** The strings of an AnyValue (and the keys of its key-value lists) with the format variables filled in. */
function interpolateAnyValue(value: JsonObject, fill: (text: string) => string): JsonObject {
  if (typeof value.stringValue === 'string') return { stringValue: fill(value.stringValue) };
  if (isObject(value.arrayValue)) return { arrayValue: { values: ((value.arrayValue.values ?? []) as JsonObject[]).map((item) => interpolateAnyValue(item, fill)) } };
  if (isObject(value.kvlistValue)) {
    const entries = (value.kvlistValue.values ?? []) as JsonObject[];
    return {
      kvlistValue: {
        values: entries.map((entry) => ({ key: fill(scalarText(entry.key)), ...(isObject(entry.value) ? { value: interpolateAnyValue(entry.value, fill) } : {}) })),
      },
    };
  }
  return value;
}

interface LogSite {
  readonly subject: AccessLogSubject;
  readonly collectors: Collectors;
}

function textFormat(format: string, site: LogSite, omitEmpty: boolean | undefined): JsonObject {
  return withOmitEmpty({ textFormatSource: { inlineString: interpolateLogFormat(`${format}\n`, site.subject) } }, omitEmpty);
}

const jsonFields = (format: Format, site: LogSite): JsonObject =>
  Object.fromEntries((format.json ?? []).map((field) => [field.key ?? '', interpolateLogFormat(field.value ?? '', site.subject)]));

function fileBackend(backend: NonNullable<Backend['file']>, defaultFormat: string, site: LogSite): JsonObject {
  const format = backend.format;
  if (format?.plain !== undefined) return fileLog(backend.path, textFormat(format.plain, site, format.omitEmptyValues));
  if (format?.json !== undefined) return fileLog(backend.path, withOmitEmpty({ jsonFormat: jsonFields(format, site) }, format.omitEmptyValues));
  return fileLog(backend.path, textFormat(defaultFormat, site, false));
}

/** The agent forwards `{address, message}` records read from its socket to the collector. */
function tcpBackend(backend: NonNullable<Backend['tcp']>, defaultFormat: string, site: LogSite): JsonObject {
  const format = backend.format;
  let message: JsonValue;
  if (format?.json !== undefined) message = jsonFields(format, site);
  else message = interpolateLogFormat(`${format?.plain ?? defaultFormat}\n`, site.subject);
  return fileLog(site.subject.accessLogSocketPath, withOmitEmpty({ jsonFormat: { address: backend.address, message } }, format?.omitEmptyValues));
}

function openTelemetryBackend(backend: NonNullable<Backend['openTelemetry']>, defaultFormat: string, site: LogSite): JsonObject {
  const fill = (text: string) => interpolateLogFormat(text, site.subject);
  let body: JsonObject = { stringValue: fill(defaultFormat) };
  if (backend.body !== undefined) {
    // A body that is no OTLP value is logged as its text.
    body = isAnyValue(backend.body) ? interpolateAnyValue(backend.body, fill) : { stringValue: fill(JSON.stringify(backend.body)) };
  }
  const attributes = (backend.attributes ?? []).map((attribute) => ({ key: attribute.key ?? '', value: { stringValue: attribute.value ?? '' } }));
  return typedExtension('envoy.access_loggers.open_telemetry', {
    '@type': OPEN_TELEMETRY_LOG,
    commonConfig: { logName: 'MeshAccessLog', grpcService: { envoyGrpc: { clusterName: site.collectors.clusterName(backend.endpoint) } }, transportApiVersion: 'V3' },
    body,
    attributes: attributes.length > 0 ? { values: attributes } : {},
  });
}

function accessLogOf(backend: Backend, defaultFormat: string, site: LogSite): JsonObject | undefined {
  if (backend.tcp) return tcpBackend(backend.tcp, defaultFormat, site);
  if (backend.file) return fileBackend(backend.file, defaultFormat, site);
  if (backend.openTelemetry) return openTelemetryBackend(backend.openTelemetry, defaultFormat, site);
  return undefined;
}

function configureListener(listener: Listener, conf: MeshAccessLogConf | undefined, site: LogSite): void {
  for (const backend of conf?.backends ?? []) {
    for (const chain of filterChainsOf(listener)) {
      updateHttpConnectionManager(chain, (hcm) => {
        const log = accessLogOf(backend, DEFAULT_HTTP_LOG_FORMAT, site);
        if (log) listOf(hcm, 'accessLog').push(log);
      });
      updateTcpProxy(chain, (proxy) => {
        const log = accessLogOf(backend, DEFAULT_NETWORK_LOG_FORMAT, site);
        if (log) listOf(proxy, 'accessLog').push(log);
      });
    }
  }
}

export const applyMeshAccessLog: Plugin<'MeshAccessLog'> = (input, rules) => {
  const { state } = input;
  const collectors = new Collectors();
  const subject = (direction: AccessLogSubject['direction'], sourceService: string, destinationService: string): LogSite => ({
    subject: { mesh: state.context.name, direction, sourceService, destinationService, sourceAddress: state.address, accessLogSocketPath: state.accessLogSocketPath },
    collectors,
  });
  for (const { inbound, listener } of inboundSites(input)) {
    const inboundRules = inboundRulesAt(rules, inbound.interface.dataplaneIp, inbound.interface.dataplanePort);
    // A `from` entry can only name the whole mesh.
    configureListener(listener.resource, inboundRules && confOf(inboundRules, MESH_SUBSET), subject('INBOUND', 'unknown', state.identifyingService));
  }
  for (const { listener, service } of outboundSites(input)) {
    if (listener) configureListener(listener.resource, confOf(rules.to, meshServiceSubset(service)), subject('OUTBOUND', state.identifyingService, service));
  }
  for (const names of [passThroughNames.ipv4, passThroughNames.ipv6]) {
    const listener = input.resources.listeners.get(names.outbound);
    if (listener?.origin !== ORIGIN.transparent) continue;
    configureListener(listener.resource, confOf(rules.to, meshServiceSubset(PASS_THROUGH_SERVICE)), subject('OUTBOUND', state.identifyingService, 'external'));
  }
  // A builtin gateway's listeners log its traffic to every destination, by the conf for all of them.
  for (const { listener } of gatewayListenerSites(input)) configureListener(listener.resource, confOf(rules.to, MESH_SUBSET), subject('OUTBOUND', state.identifyingService, '*'));
  collectors.addClusters(input);
};

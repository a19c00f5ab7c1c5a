// MeshTrace (docs/policies.md): the tracing of every HTTP connection manager of the inbounds and
// outbounds, in place of a TrafficTrace's: the first backend (Zipkin, Datadog or OpenTelemetry)
// as provider, sampling and custom tags, and a cluster to the collector.
import type { MeshTraceConf } from '@mesh/model';
import { configureUpstreamHttp, staticCluster } from '../clusters.js';
import { type JsonObject, TYPE, type TypedObject, typedExtension } from '../envoy.js';
import { ORIGIN } from '../resource-set.js';
import { tlsTransportSocket, upstreamExternalTls } from '../tls.js';
import {
  decimalValue,
  filterChainsOf,
  gatewayListenerSites,
  inboundSites,
  outboundSites,
  type Plugin,
  type PluginInput,
  updateHttpConnectionManager,
} from './common.js';

type Backend = NonNullable<MeshTraceConf['backends']>[number];

const OPEN_TELEMETRY_TRACER = 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig';
const DEFAULT_OTLP_PORT = 4317;

const clusterNameOf = (provider: 'zipkin' | 'datadog' | 'opentelemetry'): string => `meshtrace:${provider}`;

interface CollectorUrl {
  readonly scheme: string;
  /** Host and port as written (a default port too). */
  readonly host: string;
  readonly hostname: string;
  readonly port: number;
  readonly path: string;
}

/** An absolute URL's parts as Go's parser gives them; undefined when it is not absolute. */
function parseUrl(text: string): CollectorUrl | undefined {
  const authority = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)/.exec(text);
  if (!authority) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(new URL(text).pathname);
  } catch {
    return undefined;
  }
  const host = (authority[2] ?? '').replace(/^.*@/, '');
  const hostPort = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(host);
  return {
    scheme: (authority[1] ?? '').toLowerCase(),
    host,
    hostname: (hostPort?.[1] ?? host).replace(/^\[(.*)\]$/, '$1'),
    port: Number.parseInt(hostPort?.[2] ?? '', 10) || 0,
    path,
  };
}

const percent = (value: number | string | undefined): JsonObject | undefined => (value === undefined ? undefined : { value: decimalValue(value) });

interface TraceSubject {
  readonly service: string;
  readonly direction: unknown;
  /** Outbound only: the service called. */
  readonly destination: string;
}

function provider(backend: Backend, subject: TraceSubject): JsonObject | undefined {
  if (backend.zipkin) {
    const url = parseUrl(backend.zipkin.url);
    if (!url) return undefined;
    const zipkin: TypedObject = {
      '@type': TYPE.zipkin,
      collectorCluster: clusterNameOf('zipkin'),
      collectorEndpoint: url.path,
      collectorEndpointVersion: backend.zipkin.apiVersion === 'httpProto' ? 'HTTP_PROTO' : 'HTTP_JSON',
      collectorHostname: url.host,
    };
    if (backend.zipkin.traceId128bit) zipkin.traceId128bit = true;
    if (backend.zipkin.sharedSpanContext !== undefined) zipkin.sharedSpanContext = backend.zipkin.sharedSpanContext;
    return typedExtension('envoy.tracers.zipkin', zipkin);
  }
  if (backend.datadog) {
    let serviceName = subject.service;
    // With splitService each direction (and destination) reports as a service of its own.
    if (backend.datadog.splitService) {
      if (subject.direction === 'INBOUND') serviceName = `${subject.service}_INBOUND`;
      else if (subject.direction === 'OUTBOUND') serviceName = `${subject.service}_OUTBOUND_${subject.destination}`;
    }
    return typedExtension('envoy.tracers.datadog', { '@type': TYPE.datadog, collectorCluster: clusterNameOf('datadog'), serviceName });
  }
  if (backend.openTelemetry) {
    return typedExtension('envoy.tracers.opentelemetry', {
      '@type': OPEN_TELEMETRY_TRACER,
      grpcService: { envoyGrpc: { clusterName: clusterNameOf('opentelemetry') } },
      serviceName: subject.service,
    });
  }
  return undefined;
}

function tracingOf(conf: MeshTraceConf, backend: Backend, subject: TraceSubject): JsonObject {
  const tracing: JsonObject = {};
  const overall = percent(conf.sampling?.overall);
  if (overall) tracing.overallSampling = overall;
  const client = percent(conf.sampling?.client);
  if (client) tracing.clientSampling = client;
  const random = percent(conf.sampling?.random);
  if (random) tracing.randomSampling = random;
  if (conf.tags?.length) {
    tracing.customTags = conf.tags.map((tag): JsonObject => {
      if (tag.header) {
        const header: JsonObject = { name: tag.header.name };
        if (tag.header.default) header.defaultValue = tag.header.default;
        return { tag: tag.name, requestHeader: header };
      }
      return { tag: tag.name, literal: tag.literal ? { value: tag.literal } : {} };
    });
  }
  const tracer = provider(backend, subject);
  if (tracer) tracing.provider = tracer;
  return tracing;
}

function configureListener(listener: JsonObject, conf: MeshTraceConf, backend: Backend, service: string, destination: string): void {
  for (const chain of filterChainsOf(listener)) {
    updateHttpConnectionManager(chain, (hcm) => {
      hcm.tracing = tracingOf(conf, backend, { service, direction: listener.trafficDirection, destination });
    });
  }
}

/** The collector's address: the URL's host and port, or for OpenTelemetry `host[:port]` (port 4317 by default). */
function addCollectorCluster(input: PluginInput, backend: Backend): void {
  let name: string;
  let host: string;
  let port: number;
  let tls = false;
  if (backend.zipkin || backend.datadog) {
    const url = parseUrl((backend.zipkin ?? backend.datadog)?.url ?? '');
    name = clusterNameOf(backend.zipkin ? 'zipkin' : 'datadog');
    host = url?.hostname ?? '';
    port = url?.port ?? 0;
    tls = backend.zipkin !== undefined && url?.scheme === 'https';
  } else if (backend.openTelemetry) {
    const [address = '', portText] = backend.openTelemetry.endpoint.split(':');
    name = clusterNameOf('opentelemetry');
    host = address;
    port = portText === undefined ? DEFAULT_OTLP_PORT : Number.parseInt(portText, 10) || 0;
  } else return;
  const cluster = staticCluster(name, host, port, input.state.ipv6);
  if (backend.openTelemetry) configureUpstreamHttp(cluster, 'http2');
  if (tls) {
    const settings = { enabled: true, allowRenegotiation: true, skipHostnameVerification: false, serverName: '' };
    cluster.transportSocketMatches = [{ name: host, match: {}, transportSocket: tlsTransportSocket(upstreamExternalTls(host, settings)) }];
  }
  input.resources.addCluster(ORIGIN.meshTrace, cluster);
}

export const applyMeshTrace: Plugin<'MeshTrace'> = (input, rules) => {
  const conf = rules.singleItem[0]?.conf;
  if (!conf) return;
  const backend = conf.backends?.[0];
  const service = input.state.identifyingService;
  if (!backend) return;
  for (const { listener } of inboundSites(input)) configureListener(listener.resource, conf, backend, service, '');
  for (const { listener, service: destination } of outboundSites(input)) {
    if (listener) configureListener(listener.resource, conf, backend, service, destination);
  }
  for (const { listener } of gatewayListenerSites(input)) configureListener(listener.resource, conf, backend, service, '');
  addCollectorCluster(input, backend);
};

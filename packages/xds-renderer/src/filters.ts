// Network and HTTP filters and what policies put into them (docs/xds.md, What a proxy receives): RBAC for TrafficPermission,
// fault and local rate limit filters, retry policies, access logs and tracing.
import { type FaultInjectionSpec, type RateLimitSpec, type RetrySpec, SERVICE_TAG, type TagMap } from '@mesh/model';
import type { PolicyOf } from '@mesh/policy-matcher';
import { FILTER, type JsonObject, sanitizeMetric, scalarText, TYPE, type TypedObject, typedExtension } from './envoy.js';
import type { LoggingBackend, TracingBackend } from './mesh-context.js';
import { joinHostPort, serviceSpiffeId, sortedTagKeys, sourcesRegex, TAGS_HEADER, tagIdentity, tracingClusterName } from './names.js';
import type { Protocol } from './protocol.js';
import { HTTP_STATUS_NAMES } from './http-status.js';

// --- HTTP connection manager and TCP proxy -------------------------------------------------

/** An HTTP connection manager under construction: filters in order, the router appended last. */
export interface HttpConnectionManager extends TypedObject {
  httpFilters: JsonObject[];
}

export function httpConnectionManager(statPrefix: string, forwardClientCertDetails: boolean): HttpConnectionManager {
  const hcm: HttpConnectionManager = { '@type': TYPE.httpConnectionManager, statPrefix: sanitizeMetric(statPrefix), httpFilters: [] };
  if (forwardClientCertDetails) {
    hcm.forwardClientCertDetails = 'SANITIZE_SET';
    hcm.setCurrentClientCertDetails = { uri: true };
  }
  return hcm;
}

/** The network filter of a finished HTTP connection manager: every chain ends in the router. */
export function httpConnectionManagerFilter(hcm: HttpConnectionManager): JsonObject {
  hcm.httpFilters.push(typedExtension(FILTER.router, { '@type': TYPE.router }));
  return typedExtension(FILTER.httpConnectionManager, hcm);
}

export interface WeightedCluster {
  readonly name: string;
  readonly weight: number;
}

/** One cluster, or several by weight. */
export function tcpProxy(statPrefix: string, clusters: readonly WeightedCluster[]): TypedObject {
  const proxy: TypedObject = { '@type': TYPE.tcpProxy, statPrefix: sanitizeMetric(statPrefix) };
  if (clusters.length === 1) proxy.cluster = clusters[0]?.name ?? '';
  else proxy.weightedClusters = { clusters: clusters.map(({ name, weight }) => ({ name, weight })) };
  return proxy;
}

export const kafkaBrokerFilter = (statPrefix: string): JsonObject =>
  typedExtension(FILTER.kafkaBroker, { '@type': TYPE.kafkaBroker, statPrefix: sanitizeMetric(statPrefix) });

export const grpcStatsFilter = (): JsonObject => typedExtension(FILTER.grpcStats, { '@type': TYPE.grpcStats, emitFilterState: true });

// --- TrafficPermission ---------------------------------------------------------------------

const exactIdentity = (principalName: string): JsonObject => ({ authenticated: { principalName: { exact: principalName } } });

/** A source selector as a principal: every non-wildcard tag (AND), the service through its SPIFFE id. */
function principalOf(selector: TagMap, mesh: string): JsonObject {
  const principals = sortedTagKeys(selector)
    .filter((key) => key !== SERVICE_TAG && selector[key] !== '*')
    .map((key) => exactIdentity(tagIdentity(key, selector[key] ?? '')));
  const service = selector[SERVICE_TAG];
  if (service && service !== '*') principals.push(exactIdentity(serviceSpiffeId(mesh, service)));
  if (principals.length === 0) return { any: true };
  return principals.length === 1 ? (principals[0] as JsonObject) : { andIds: { ids: principals } };
}

/** The listener's RBAC filter: the permission's sources may connect; without a permission nobody may. */
export function rbacFilter(listenerName: string, permission: PolicyOf<'TrafficPermission'> | undefined): JsonObject {
  const policies: JsonObject = {};
  if (permission) {
    policies[permission.name] = {
      permissions: [{ any: true }],
      principals: (permission.spec.sources ?? []).map((source) => principalOf(source.match ?? {}, permission.mesh)),
    };
  }
  const rules: JsonObject = Object.keys(policies).length > 0 ? { policies } : {};
  // The trailing dot separates the listener from the filter's own stat names.
  return typedExtension(FILTER.rbac, { '@type': TYPE.networkRbac, rules, statPrefix: `${sanitizeMetric(listenerName)}.` });
}

// --- FaultInjection and RateLimit ----------------------------------------------------------

/** Integer percentages out of a hundred, two decimals out of ten thousand, anything else out of a million. */
export function fractionalPercent(percentage: number | undefined): JsonObject {
  const value = percentage ?? 0;
  const [numerator, denominator] = Number.isInteger(value)
    ? [value, undefined]
    : Number.isInteger(value * 100)
      ? [value * 100, 'TEN_THOUSAND']
      : [Math.round(value * 10_000), 'MILLION'];
  const fraction: JsonObject = {};
  if (numerator !== 0) fraction.numerator = Math.trunc(numerator);
  if (denominator) fraction.denominator = denominator;
  return fraction;
}

export const tagsHeaderMatcher = (regex: string): JsonObject => ({ name: TAGS_HEADER, safeRegexMatch: { googleRe2: {}, regex } });

const sourceSelectors = (policy: { spec: { sources?: ReadonlyArray<{ match?: TagMap | undefined }> | undefined } }): TagMap[] =>
  (policy.spec.sources ?? []).map((source) => source.match ?? {});

const BANDWIDTH = /(\d*)\s?([gmk]?bps)/;
const KBPS_FACTOR: Record<string, number> = { kbps: 1, mbps: 1000, gbps: 1_000_000 };

/** `"10 mbps"` in kbps; undefined when the text holds no usable limit. */
function bandwidthKbps(limit: string | undefined): number | undefined {
  const match = BANDWIDTH.exec(limit ?? '');
  const factor = KBPS_FACTOR[match?.[2] ?? ''];
  if (!match?.[1] || factor === undefined) return undefined;
  return Number(match[1]) * factor;
}

/** One fault filter per FaultInjection, applied to requests from its sources. */
export function faultFilter(policy: PolicyOf<'FaultInjection'>): JsonObject {
  const conf: NonNullable<FaultInjectionSpec['conf']> = policy.spec.conf ?? {};
  const fault: TypedObject = { '@type': TYPE.fault };
  if (conf.delay) fault.delay = { fixedDelay: conf.delay.value, percentage: fractionalPercent(conf.delay.percentage) };
  if (conf.abort) fault.abort = { httpStatus: conf.abort.httpStatus ?? 0, percentage: fractionalPercent(conf.abort.percentage) };
  const kbps = conf.responseBandwidth ? bandwidthKbps(conf.responseBandwidth.limit) : undefined;
  if (conf.responseBandwidth && kbps !== undefined) {
    // uint64 fields are strings in proto3 JSON.
    fault.responseRateLimit = { fixedLimit: { limitKbps: String(kbps) }, percentage: fractionalPercent(conf.responseBandwidth.percentage) };
  }
  fault.headers = [tagsHeaderMatcher(sourcesRegex(sourceSelectors(policy)))];
  return typedExtension(FILTER.fault, fault);
}

/** The HCM-level local rate limit filter; the limits themselves are set per route. */
export const localRateLimitFilter = (): JsonObject => typedExtension(FILTER.localRateLimit, { '@type': TYPE.localRateLimit, statPrefix: 'rate_limit' });

const hundredPercent = (runtimeKey: string): JsonObject => ({ defaultValue: { numerator: 100 }, runtimeKey });

/** An HTTP status as Envoy's StatusCode enum (its number when the enum has no name for it). */
const statusCode = (status: number): string | number => HTTP_STATUS_NAMES[status] ?? status;

/** A route's token bucket: `requests` per `interval`; undefined for a RateLimit without HTTP limits. */
export function routeRateLimit(spec: RateLimitSpec): TypedObject | undefined {
  const http = spec.conf?.http;
  if (!http) return undefined;
  const limit: TypedObject = {
    '@type': TYPE.localRateLimit,
    statPrefix: 'rate_limit',
    tokenBucket: { maxTokens: http.requests ?? 0, tokensPerFill: http.requests ?? 0, fillInterval: http.interval ?? '0s' },
    filterEnabled: hundredPercent('local_rate_limit_enabled'),
    filterEnforced: hundredPercent('local_rate_limit_enforced'),
  };
  const onRateLimit = http.onRateLimit;
  if (onRateLimit?.status) limit.status = { code: statusCode(onRateLimit.status) };
  if (onRateLimit?.headers) {
    limit.responseHeadersToAdd = onRateLimit.headers.map((header) => ({
      header: { key: header.key ?? '', value: header.value ?? '' },
      append: header.append ?? false,
    }));
  }
  return limit;
}

export const rateLimitSourcesRegex = (policy: PolicyOf<'RateLimit'>): string => sourcesRegex(sourceSelectors(policy));

// --- Retry ---------------------------------------------------------------------------------

const HTTP_RETRY_ON_DEFAULT = 'gateway-error,connect-failure,refused-stream';
const GRPC_RETRY_ON_DEFAULT = 'cancelled,connect-failure,gateway-error,refused-stream,reset,resource-exhausted,unavailable';
const RETRIABLE_STATUS_CODES = 'retriable-status-codes';

type HttpRetry = NonNullable<NonNullable<RetrySpec['conf']>['http']>;
type GrpcRetry = NonNullable<NonNullable<RetrySpec['conf']>['grpc']>;

function retryAttempts(policy: JsonObject, conf: HttpRetry | GrpcRetry): void {
  if (conf.perTryTimeout !== undefined) policy.perTryTimeout = conf.perTryTimeout;
  if (conf.numRetries !== undefined) policy.numRetries = conf.numRetries;
  if (conf.backOff) {
    const backOff: JsonObject = { baseInterval: conf.backOff.baseInterval };
    if (conf.backOff.maxInterval !== undefined) backOff.maxInterval = conf.backOff.maxInterval;
    policy.retryBackOff = backOff;
  }
}

function httpRetryPolicy(conf: HttpRetry): JsonObject {
  // Enum names use `_` and cannot start with a digit; Envoy's conditions use `-` and `5xx`.
  const retryOn = conf.retryOn?.map((condition) => (condition === 'all_5xx' ? '5xx' : condition.replaceAll('_', '-')));
  const retryOnText = retryOn?.join(',') || HTTP_RETRY_ON_DEFAULT;
  const policy: JsonObject = { retryOn: retryOnText };
  retryAttempts(policy, conf);
  if (conf.retriableStatusCodes) {
    policy.retriableStatusCodes = conf.retriableStatusCodes;
    const conditions = retryOnText.split(',');
    if (!conditions.includes(RETRIABLE_STATUS_CODES)) policy.retryOn = [...conditions, RETRIABLE_STATUS_CODES].join(',');
  }
  const methods = (conf.retriableMethods ?? []).filter((method) => method !== 'NONE');
  if (methods.length > 0) policy.retriableRequestHeaders = methods.map((method) => ({ name: ':method', stringMatch: { exact: method } }));
  return policy;
}

function grpcRetryPolicy(conf: GrpcRetry): JsonObject {
  const retryOn = conf.retryOn?.map((condition) => condition.replaceAll('_', '-')).join(',');
  const policy: JsonObject = { retryOn: retryOn || GRPC_RETRY_ON_DEFAULT };
  retryAttempts(policy, conf);
  return policy;
}

/** The virtual host's retry policy: HTTP and gRPC only (HTTP/2 gets none, as in the reference). */
export function retryPolicy(retry: PolicyOf<'Retry'> | undefined, protocol: Protocol): JsonObject | undefined {
  const conf = retry?.spec.conf;
  if (protocol === 'http' && conf?.http) return httpRetryPolicy(conf.http);
  if (protocol === 'grpc' && conf?.grpc) return grpcRetryPolicy(conf.grpc);
  return undefined;
}

// --- TrafficLog ----------------------------------------------------------------------------

export const DEFAULT_HTTP_LOG_FORMAT =
  '[%START_TIME%] %MESH_MESH% "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-B3-TRACEID?X-DATADOG-TRACEID)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%MESH_SOURCE_SERVICE%" "%MESH_DESTINATION_SERVICE%" "%MESH_SOURCE_ADDRESS_WITHOUT_PORT%" "%UPSTREAM_HOST%"';
export const DEFAULT_NETWORK_LOG_FORMAT =
  '[%START_TIME%] %RESPONSE_FLAGS% %MESH_MESH% %MESH_SOURCE_ADDRESS_WITHOUT_PORT%(%MESH_SOURCE_SERVICE%)->%UPSTREAM_HOST%(%MESH_DESTINATION_SERVICE%) took %DURATION%ms, sent %BYTES_SENT% bytes, received: %BYTES_RECEIVED% bytes';

/** Who logs what: the values of the mesh's own format variables. */
export interface AccessLogSubject {
  readonly mesh: string;
  readonly direction: 'INBOUND' | 'OUTBOUND' | 'UNSPECIFIED';
  readonly sourceService: string;
  readonly destinationService: string;
  /** The proxy's address (advertised, else its own). */
  readonly sourceAddress: string;
  /** Where the mesh's data plane agent reads log lines for TCP backends. */
  readonly accessLogSocketPath: string;
}

// `%MESH_*%` variables, also spelled `%KUMA_*%` as in formats written for the reference.
const FORMAT_VARIABLE = /%(?:MESH|KUMA)_(MESH|SOURCE_ADDRESS_WITHOUT_PORT|SOURCE_ADDRESS|SOURCE_SERVICE|DESTINATION_SERVICE|TRAFFIC_DIRECTION)%/g;

/** A log format with the mesh's own variables filled in for the subject. */
export function interpolateLogFormat(format: string, subject: AccessLogSubject): string {
  const values: Record<string, string> = {
    MESH: subject.mesh,
    SOURCE_ADDRESS: joinHostPort(subject.sourceAddress, 0),
    SOURCE_ADDRESS_WITHOUT_PORT: subject.sourceAddress,
    SOURCE_SERVICE: subject.sourceService,
    DESTINATION_SERVICE: subject.destinationService,
    TRAFFIC_DIRECTION: subject.direction,
  };
  return format.replace(FORMAT_VARIABLE, (_, name: string) => values[name] ?? '');
}

/**
 * A file access log: a file backend writes to its path; a TCP backend writes `address;line` to
 * the agent's socket, which forwards it.
 */
export function accessLog(backend: LoggingBackend, subject: AccessLogSubject, kind: 'http' | 'network'): JsonObject | undefined {
  const format = interpolateLogFormat(`${backend.format || (kind === 'http' ? DEFAULT_HTTP_LOG_FORMAT : DEFAULT_NETWORK_LOG_FORMAT)}\n`, subject);
  const conf = backend.conf ?? {};
  let path: string;
  let line: string;
  if (backend.type === 'file') {
    path = scalarText(conf.path);
    line = format;
  } else if (backend.type === 'tcp') {
    path = subject.accessLogSocketPath;
    line = `${scalarText(conf.address)};${format}`;
  } else return undefined;
  return typedExtension('envoy.access_loggers.file', { '@type': TYPE.fileAccessLog, path, logFormat: { textFormatSource: { inlineString: line } } });
}

// --- TrafficTrace --------------------------------------------------------------------------

interface TraceSubject {
  readonly service: string;
  /** A builtin gateway's traffic has no direction of its own. */
  readonly direction: 'INBOUND' | 'OUTBOUND' | 'UNSPECIFIED';
  /** Outbound only: the service called. */
  readonly destination: string;
}

/** The HCM `tracing` block for the backend; undefined for a backend it cannot use. */
export function tracing(backend: TracingBackend, subject: TraceSubject): JsonObject | undefined {
  const conf = backend.conf ?? {};
  let provider: JsonObject;
  if (backend.type === 'zipkin') {
    let url: URL;
    try {
      url = new URL(scalarText(conf.url));
    } catch {
      return undefined;
    }
    const zipkin: TypedObject = {
      '@type': TYPE.zipkin,
      collectorCluster: tracingClusterName(backend.name),
      collectorEndpoint: url.pathname,
      collectorEndpointVersion: conf.apiVersion === 'httpProto' ? 'HTTP_PROTO' : 'HTTP_JSON',
      collectorHostname: url.host,
    };
    if (conf.traceId128bit === true) zipkin.traceId128bit = true;
    if (typeof conf.sharedSpanContext === 'boolean') zipkin.sharedSpanContext = conf.sharedSpanContext;
    provider = typedExtension('envoy.tracers.zipkin', zipkin);
  } else if (backend.type === 'datadog') {
    let serviceName = subject.service;
    // With splitService, each direction (and destination) reports as its own service.
    if (conf.splitService === true) {
      serviceName = [subject.service, subject.direction, ...(subject.direction === 'OUTBOUND' ? [subject.destination] : [])].join('_');
    }
    provider = typedExtension('envoy.tracers.datadog', { '@type': TYPE.datadog, collectorCluster: tracingClusterName(backend.name), serviceName });
  } else return undefined;
  const block: JsonObject = { provider };
  if (backend.sampling !== undefined) block.overallSampling = { value: backend.sampling };
  return block;
}

// Cluster building blocks: discovery type, timeouts, upstream HTTP options,
// load balancing, health checks, circuit breakers and outlier detection.
import { isIpAddress, type CircuitBreakerSpec, type HealthCheckSpec, type TimeoutSpec, type TrafficRouteSpec } from '@mesh/model';
import { adsConfigSource, type Cluster, HTTP_PROTOCOL_OPTIONS_KEY, type JsonObject, sanitizeMetric, TYPE, type TypedObject } from './envoy.js';
import { type Endpoint, inlineLoadAssignment } from './mesh-context.js';
import { isHttpLike, type Protocol } from './protocol.js';

export type TimeoutConf = NonNullable<TimeoutSpec['conf']>;
export type LoadBalancerConf = NonNullable<NonNullable<TrafficRouteSpec['conf']>['loadBalancer']>;
type HealthCheckConf = NonNullable<HealthCheckSpec['conf']>;
type CircuitBreakerConf = NonNullable<CircuitBreakerSpec['conf']>;

const DEFAULT_CONNECT_TIMEOUT = '10s';

/** Inbound timeouts are twice the default outbound ones, or disabled. */
export const DEFAULT_INBOUND_TIMEOUT: TimeoutConf = {
  connectTimeout: '10s',
  tcp: { idleTimeout: '7200s' },
  http: { requestTimeout: '0s', idleTimeout: '7200s', streamIdleTimeout: '3600s', maxStreamDuration: '0s' },
};

const isZeroDuration = (duration: string | undefined): boolean => duration === undefined || /^-?0(\.0*)?s$/.test(duration);

export const newCluster = (name: string): Cluster => ({ '@type': TYPE.cluster, name });

/** Stats of names with `:` or `.` go under a sanitized name. */
function setAltStatName(cluster: Cluster): void {
  const sanitized = sanitizeMetric(cluster.name);
  if (sanitized !== cluster.name) cluster.altStatName = sanitized;
}

export function configureEds(cluster: Cluster): void {
  cluster.type = 'EDS';
  cluster.edsClusterConfig = { edsConfig: adsConfigSource() };
  setAltStatName(cluster);
}

/** Endpoints given inline: STATIC for IP addresses, STRICT_DNS for host names. */
export function configureProvidedEndpoints(cluster: Cluster, endpoints: readonly Endpoint[], ipv6: boolean): void {
  const byName = endpoints.some((endpoint) => !isIpAddress(endpoint.address));
  cluster.type = byName ? 'STRICT_DNS' : 'STATIC';
  if (byName) cluster.dnsLookupFamily = ipv6 ? 'AUTO' : 'V4_ONLY';
  cluster.loadAssignment = inlineLoadAssignment(cluster.name, endpoints);
  setAltStatName(cluster);
}

/** A cluster of one address given inline (admin API, local application, tracing collector). */
export function staticCluster(name: string, address: string, port: number, ipv6 = false): Cluster {
  const cluster = newCluster(name);
  configureProvidedEndpoints(cluster, [{ address, port, tags: {}, weight: 0 }], ipv6);
  cluster.connectTimeout = DEFAULT_CONNECT_TIMEOUT;
  return cluster;
}

/** Edits the cluster's upstream HTTP options, creating them on first use. */
export function httpProtocolOptions(cluster: Cluster): JsonObject {
  const extensions = (cluster.typedExtensionProtocolOptions ??= {}) as Record<string, TypedObject>;
  return (extensions[HTTP_PROTOCOL_OPTIONS_KEY] ??= { '@type': TYPE.httpProtocolOptions });
}

/** The upstream speaks HTTP/1.1 or HTTP/2 (kept if already chosen). */
export function configureUpstreamHttp(cluster: Cluster, version: 'http1' | 'http2'): void {
  const options = httpProtocolOptions(cluster);
  options.explicitHttpConfig ??= version === 'http1' ? { httpProtocolOptions: {} } : { http2ProtocolOptions: {} };
}

/** Upstream HTTP version for a protocol: none for TCP and Kafka. */
export function configureUpstreamHttpFor(cluster: Cluster, protocol: Protocol): void {
  if (protocol === 'http') configureUpstreamHttp(cluster, 'http1');
  else if (protocol === 'http2' || protocol === 'grpc') configureUpstreamHttp(cluster, 'http2');
}

/** Connect timeout, and for HTTP-like protocols the idle timeout and max stream duration. */
export function configureClusterTimeouts(cluster: Cluster, conf: TimeoutConf | undefined, protocol: Protocol): void {
  cluster.connectTimeout = conf?.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT;
  if (!isHttpLike(protocol)) return;
  const common: JsonObject = { idleTimeout: conf?.http?.idleTimeout ?? '0s' };
  const maxStreamDuration = !isZeroDuration(conf?.http?.maxStreamDuration)
    ? conf?.http?.maxStreamDuration
    : protocol === 'grpc' && !isZeroDuration(conf?.grpc?.maxStreamDuration)
      ? conf?.grpc?.maxStreamDuration
      : undefined;
  if (maxStreamDuration !== undefined) common.maxStreamDuration = maxStreamDuration;
  httpProtocolOptions(cluster).commonHttpProtocolOptions = common;
}

/** The TrafficRoute's load balancer; round robin (the proto default, so absent) otherwise. */
export function configureLoadBalancer(cluster: Cluster, lb: LoadBalancerConf | undefined): void {
  if (lb?.leastRequest) {
    cluster.lbPolicy = 'LEAST_REQUEST';
    cluster.leastRequestLbConfig = { choiceCount: lb.leastRequest.choiceCount || 2 };
  } else if (lb?.ringHash) {
    cluster.lbPolicy = 'RING_HASH';
    const ringHash: JsonObject = { minimumRingSize: lb.ringHash.minRingSize ?? '0', maximumRingSize: lb.ringHash.maxRingSize ?? '0' };
    if (lb.ringHash.hashFunction && lb.ringHash.hashFunction !== 'XX_HASH') ringHash.hashFunction = lb.ringHash.hashFunction;
    cluster.ringHashLbConfig = ringHash;
  } else if (lb?.random) cluster.lbPolicy = 'RANDOM';
  else if (lb?.maglev) cluster.lbPolicy = 'MAGLEV';
}

const hexOfBase64 = (data: string): string => Buffer.from(data, 'base64').toString('hex');

function healthCheckBase(conf: HealthCheckConf): JsonObject {
  const check: JsonObject = {
    timeout: conf.timeout,
    interval: conf.interval,
    unhealthyThreshold: conf.unhealthyThreshold ?? 0,
    healthyThreshold: conf.healthyThreshold ?? 0,
    initialJitter: conf.initialJitter,
    intervalJitter: conf.intervalJitter,
    intervalJitterPercent: conf.intervalJitterPercent,
    reuseConnection: conf.reuseConnection,
    noTrafficInterval: conf.noTrafficInterval,
    eventLogPath: conf.eventLogPath,
    alwaysLogHealthCheckFailures: conf.alwaysLogHealthCheckFailures || undefined,
  };
  for (const key of Object.keys(check)) if (check[key] === undefined) delete check[key];
  return check;
}

/** Active health checks: TCP (optionally with payloads) and/or HTTP; a bare TCP check when neither is given. */
export function configureHealthCheck(cluster: Cluster, conf: HealthCheckConf | undefined, protocol: Protocol): void {
  if (!conf) return;
  if (conf.healthyPanicThreshold !== undefined || conf.failTrafficOnPanic !== undefined) {
    const commonLbConfig: JsonObject = {};
    // The reference holds the threshold as a float32.
    if (conf.healthyPanicThreshold !== undefined) commonLbConfig.healthyPanicThreshold = { value: Math.fround(conf.healthyPanicThreshold) };
    if (conf.failTrafficOnPanic !== undefined) commonLbConfig.zoneAwareLbConfig = conf.failTrafficOnPanic ? { failTrafficOnPanic: true } : {};
    cluster.commonLbConfig = commonLbConfig;
  }
  const checks: JsonObject[] = [];
  if (conf.tcp || !conf.http) {
    const tcp: JsonObject = {};
    if (conf.tcp?.send !== undefined) tcp.send = { text: hexOfBase64(conf.tcp.send) };
    if (conf.tcp?.receive) tcp.receive = conf.tcp.receive.map((data) => ({ text: hexOfBase64(data) }));
    checks.push({ ...healthCheckBase(conf), tcpHealthCheck: tcp });
  }
  if (conf.http) {
    const http: JsonObject = { path: conf.http.path ?? '' };
    if (conf.http.requestHeadersToAdd) {
      http.requestHeadersToAdd = conf.http.requestHeadersToAdd.map((option) => ({
        header: { key: option.header?.key ?? '', value: option.header?.value ?? '' },
        ...(option.append !== undefined ? { append: option.append } : {}),
      }));
    }
    if (conf.http.expectedStatuses) {
      // int64 fields are strings in proto3 JSON.
      http.expectedStatuses = conf.http.expectedStatuses.map((status) => ({ start: String(status), end: String(status + 1) }));
    }
    if (protocol === 'http2') http.codecClientType = 'HTTP2';
    checks.push({ ...healthCheckBase(conf), httpHealthCheck: http });
  }
  cluster.healthChecks = checks;
}

/** Connection limits, when the CircuitBreaker sets thresholds. */
export function configureCircuitBreakers(cluster: Cluster, conf: CircuitBreakerConf | undefined): void {
  const thresholds = conf?.thresholds;
  if (!thresholds) return;
  const limits: JsonObject = {};
  for (const key of ['maxConnections', 'maxPendingRequests', 'maxRequests', 'maxRetries'] as const) {
    if (thresholds[key] !== undefined) limits[key] = thresholds[key];
  }
  cluster.circuitBreakers = { thresholds: [limits] };
}

/** Passive health checking: each configured detector is enforced fully, the others not at all. */
export function configureOutlierDetection(cluster: Cluster, conf: CircuitBreakerConf | undefined): void {
  if (!conf) return;
  const detectors = conf.detectors;
  const outlier: JsonObject = {};
  if (conf.interval !== undefined) outlier.interval = conf.interval;
  if (conf.baseEjectionTime !== undefined) outlier.baseEjectionTime = conf.baseEjectionTime;
  if (conf.maxEjectionPercent !== undefined) outlier.maxEjectionPercent = conf.maxEjectionPercent;
  if (conf.splitExternalAndLocalErrors) outlier.splitExternalLocalOriginErrors = true;
  const total = detectors?.totalErrors;
  if (total?.consecutive !== undefined) outlier.consecutive5xx = total.consecutive;
  outlier.enforcingConsecutive5xx = total ? 100 : 0;
  const gateway = detectors?.gatewayErrors;
  if (gateway?.consecutive !== undefined) outlier.consecutiveGatewayFailure = gateway.consecutive;
  outlier.enforcingConsecutiveGatewayFailure = gateway ? 100 : 0;
  const local = detectors?.localErrors;
  if (local?.consecutive !== undefined) outlier.consecutiveLocalOriginFailure = local.consecutive;
  outlier.enforcingConsecutiveLocalOriginFailure = local ? 100 : 0;
  const deviation = detectors?.standardDeviation;
  if (deviation) {
    if (deviation.requestVolume !== undefined) outlier.successRateRequestVolume = deviation.requestVolume;
    if (deviation.minimumHosts !== undefined) outlier.successRateMinimumHosts = deviation.minimumHosts;
    if (deviation.factor !== undefined) outlier.successRateStdevFactor = Math.trunc(deviation.factor * 1000);
    outlier.enforcingSuccessRate = 100;
    // Takes effect only when local origin errors are split.
    outlier.enforcingLocalOriginSuccessRate = 100;
  } else outlier.enforcingSuccessRate = 0;
  const failure = detectors?.failure;
  if (failure) {
    if (failure.requestVolume !== undefined) outlier.failurePercentageRequestVolume = failure.requestVolume;
    if (failure.minimumHosts !== undefined) outlier.failurePercentageMinimumHosts = failure.minimumHosts;
    if (failure.threshold !== undefined) outlier.failurePercentageThreshold = failure.threshold;
    outlier.enforcingFailurePercentage = 100;
    outlier.enforcingFailurePercentageLocalOrigin = 100;
  } else outlier.enforcingFailurePercentage = 0;
  cluster.outlierDetection = outlier;
}

/** Connections leave from a fixed source address (transparent proxying's inbound pass-through). */
export const configureUpstreamBind = (cluster: Cluster, address: string): void => {
  cluster.upstreamBindConfig = { sourceAddress: { address, portValue: 0 } };
};

/** A cluster that forwards to the connection's original destination. */
export function passThroughCluster(name: string): Cluster {
  const cluster = newCluster(name);
  cluster.type = 'ORIGINAL_DST';
  cluster.lbPolicy = 'CLUSTER_PROVIDED';
  setAltStatName(cluster);
  cluster.connectTimeout = DEFAULT_CONNECT_TIMEOUT;
  return cluster;
}

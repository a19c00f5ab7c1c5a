// MeshHealthCheck (docs/policies.md): an active health check, by the protocol of the service (HTTP,
// gRPC or TCP), added to the clusters of the outbounds' services beside a HealthCheck's.
import type { MeshHealthCheckConf } from '@mesh/model';
import type { Cluster, JsonObject } from '../envoy.js';
import { serializeTagsHeader, TAGS_HEADER } from '../names.js';
import type { Protocol } from '../protocol.js';
import {
  clustersOfOutboundServices,
  confOf,
  decimalValue,
  gatewayClusters,
  isObject,
  listOf,
  meshServiceSubset,
  type Plugin,
  protoDuration,
  serviceProtocol,
} from './common.js';

const DEFAULT = { interval: '60s', timeout: '15s', unhealthyThreshold: 5, healthyThreshold: 1, httpPath: '/' } as const;

type Checker = 'tcp' | 'http' | 'grpc';

/** Which check a protocol gets: its own when enabled, TCP when its own is disabled and TCP is not; none otherwise. */
function checkerOf(protocol: Protocol, conf: MeshHealthCheckConf): Checker | undefined {
  const { tcp, http, grpc } = conf;
  const httpLike = protocol === 'http' || protocol === 'http2';
  if (httpLike && http && !http.disabled) return 'http';
  if (protocol === 'grpc' && grpc && !grpc.disabled) return 'grpc';
  if (protocol === 'tcp' && tcp && !tcp.disabled) return 'tcp';
  if (httpLike && http?.disabled && tcp && !tcp.disabled) return 'tcp';
  if (protocol === 'grpc' && grpc?.disabled && tcp && !tcp.disabled) return 'tcp';
  return undefined;
}

const hexOfText = (text: string): string => Buffer.from(text, 'utf8').toString('hex');

function tcpHealthCheck(conf: NonNullable<MeshHealthCheckConf['tcp']> | undefined): JsonObject {
  const check: JsonObject = {};
  if (conf?.send !== undefined) check.send = { text: hexOfText(conf.send) };
  if (conf?.receive) check.receive = conf.receive.map((payload) => ({ text: hexOfText(payload) }));
  return check;
}

/** HTTP checks carry the proxy's tags header, then the headers to add (appended) and to set. */
function httpHealthCheck(conf: NonNullable<MeshHealthCheckConf['http']>, protocol: Protocol, tagsHeader: string): JsonObject {
  const headers: JsonObject[] = [];
  if (tagsHeader !== '') headers.push({ header: { key: TAGS_HEADER, value: tagsHeader } });
  for (const header of conf.requestHeadersToAdd?.add ?? []) {
    for (const value of header.value.split(',')) headers.push({ header: { key: header.name, value }, append: true });
  }
  for (const header of conf.requestHeadersToAdd?.set ?? []) {
    for (const value of header.value.split(',')) headers.push({ header: { key: header.name, value }, append: false });
  }
  const check: JsonObject = { path: conf.path ?? DEFAULT.httpPath };
  if (headers.length > 0) check.requestHeadersToAdd = headers;
  // int64 fields are strings in proto3 JSON.
  if (conf.expectedStatuses?.length) check.expectedStatuses = conf.expectedStatuses.map((status) => ({ start: String(status), end: String(status + 1) }));
  if (protocol === 'http2') check.codecClientType = 'HTTP2';
  return check;
}

function grpcHealthCheck(conf: NonNullable<MeshHealthCheckConf['grpc']>): JsonObject {
  const check: JsonObject = {};
  if (conf.serviceName) check.serviceName = conf.serviceName;
  if (conf.authority) check.authority = conf.authority;
  return check;
}

function healthCheck(conf: MeshHealthCheckConf): JsonObject {
  const check: JsonObject = {
    timeout: conf.timeout === undefined ? DEFAULT.timeout : protoDuration(conf.timeout),
    interval: conf.interval === undefined ? DEFAULT.interval : protoDuration(conf.interval),
    unhealthyThreshold: conf.unhealthyThreshold ?? DEFAULT.unhealthyThreshold,
    healthyThreshold: conf.healthyThreshold ?? DEFAULT.healthyThreshold,
  };
  if (conf.initialJitter !== undefined) check.initialJitter = protoDuration(conf.initialJitter);
  if (conf.intervalJitter !== undefined) check.intervalJitter = protoDuration(conf.intervalJitter);
  if (conf.intervalJitterPercent) check.intervalJitterPercent = conf.intervalJitterPercent;
  if (conf.eventLogPath !== undefined) {
    check.eventLogger = [
      {
        name: 'envoy.health_check.event_sinks.file',
        typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.health_check.event_sinks.file.v3.HealthCheckEventFileSink', eventLogPath: conf.eventLogPath },
      },
    ];
  }
  if (conf.alwaysLogHealthCheckFailures) check.alwaysLogHealthCheckFailures = true;
  if (conf.noTrafficInterval !== undefined) check.noTrafficInterval = protoDuration(conf.noTrafficInterval);
  if (conf.reuseConnection !== undefined) check.reuseConnection = conf.reuseConnection;
  return check;
}

function commonLbConfigOf(cluster: Cluster): JsonObject {
  if (!isObject(cluster.commonLbConfig)) cluster.commonLbConfig = {};
  return cluster.commonLbConfig;
}

function configureCluster(cluster: Cluster, conf: MeshHealthCheckConf, protocol: Protocol, tagsHeader: string): void {
  if (conf.healthyPanicThreshold !== undefined) commonLbConfigOf(cluster).healthyPanicThreshold = { value: decimalValue(conf.healthyPanicThreshold) };
  if (conf.failTrafficOnPanic !== undefined) {
    const common = commonLbConfigOf(cluster);
    // Locality weighted load balancing cannot fail traffic on panic: the setting is ignored then.
    if (common.localityWeightedLbConfig === undefined) {
      const zoneAware: JsonObject = isObject(common.zoneAwareLbConfig) ? common.zoneAwareLbConfig : {};
      if (conf.failTrafficOnPanic) zoneAware.failTrafficOnPanic = true;
      else delete zoneAware.failTrafficOnPanic;
      common.zoneAwareLbConfig = zoneAware;
    }
  }
  const checker = checkerOf(protocol, conf);
  if (checker === undefined) return;
  const check = healthCheck(conf);
  if (checker === 'http' && conf.http) check.httpHealthCheck = httpHealthCheck(conf.http, protocol, tagsHeader);
  else if (checker === 'grpc' && conf.grpc) check.grpcHealthCheck = grpcHealthCheck(conf.grpc);
  else check.tcpHealthCheck = tcpHealthCheck(conf.tcp);
  listOf(cluster, 'healthChecks').push(check);
}

export const applyMeshHealthCheck: Plugin<'MeshHealthCheck'> = (input, rules) => {
  const tagsHeader = serializeTagsHeader(input.state.tagSets);
  const clusters = [...clustersOfOutboundServices(input).map((site) => ({ ...site, protocol: serviceProtocol(input.state, site.service) })), ...gatewayClusters(input)];
  for (const { cluster, service, protocol } of clusters) {
    const conf = confOf(rules.to, meshServiceSubset(service));
    if (conf) configureCluster(cluster, conf, protocol, tagsHeader);
  }
};

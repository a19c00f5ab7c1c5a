// MeshRetry (docs/policies.md): a retry policy on every route of an HTTP or gRPC outbound, or the
// connect attempts of a TCP one. Routes' policies win over the virtual host's a Retry set.
import { isKnownHttpStatus, type MeshRetryConf, SERVICE_TAG } from '@mesh/model';
import type { JsonObject } from '../envoy.js';
import { tagsWithout } from '../names.js';
import type { Protocol } from '../protocol.js';
import {
  confOf,
  filterChainsOf,
  gatewayListenerSites,
  isObject,
  MESH_SUBSET,
  meshServiceSubset,
  outboundSites,
  type Plugin,
  protoDuration,
  routesOfRouteConfig,
  serviceProtocol,
  updateHttpConnectionManager,
  updateTcpProxy,
} from './common.js';
import { headerMatcher } from './header-match.js';

type HttpConf = NonNullable<MeshRetryConf['http']>;
type GrpcConf = NonNullable<MeshRetryConf['grpc']>;

const HTTP_RETRY_ON_DEFAULT = 'gateway-error,connect-failure,refused-stream';
const GRPC_RETRY_ON_DEFAULT = 'cancelled,connect-failure,gateway-error,refused-stream,reset,resource-exhausted,unavailable';
const RETRIABLE_STATUS_CODES = 'retriable-status-codes';
const HTTP_METHOD_PREFIX = 'HttpMethod';

const HTTP_RETRY_ON: Readonly<Record<string, string>> = {
  '5xx': '5xx',
  GatewayError: 'gateway-error',
  Reset: 'reset',
  Retriable4xx: 'retriable-4xx',
  ConnectFailure: 'connect-failure',
  EnvoyRatelimited: 'envoy-ratelimited',
  RefusedStream: 'refused-stream',
  Http3PostConnectFailure: 'http3-post-connect-failure',
};

const GRPC_RETRY_ON: Readonly<Record<string, string>> = {
  Canceled: 'canceled',
  DeadlineExceeded: 'deadline-exceeded',
  Internal: 'internal',
  ResourceExhausted: 'resource-exhausted',
  Unavailable: 'unavailable',
};

const RESET_HEADER_FORMAT: Readonly<Record<string, string>> = { Seconds: 'SECONDS', UnixTimestamp: 'UNIX_TIMESTAMP' };

function backOffs(policy: JsonObject, conf: HttpConf | GrpcConf): void {
  if (conf.backOff) {
    const backOff: JsonObject = {};
    if (conf.backOff.baseInterval !== undefined) backOff.baseInterval = protoDuration(conf.backOff.baseInterval);
    if (conf.backOff.maxInterval !== undefined) backOff.maxInterval = protoDuration(conf.backOff.maxInterval);
    policy.retryBackOff = backOff;
  }
  const rateLimited = conf.rateLimitedBackOff;
  if (rateLimited) {
    const backOff: JsonObject = { resetHeaders: (rateLimited.resetHeaders ?? []).map((header) => ({ name: header.name, format: RESET_HEADER_FORMAT[header.format] ?? header.format })) };
    if (rateLimited.maxInterval !== undefined) backOff.maxInterval = protoDuration(rateLimited.maxInterval);
    policy.rateLimitedRetryBackOff = backOff;
  }
}

function attempts(policy: JsonObject, conf: HttpConf | GrpcConf): void {
  if (conf.perTryTimeout !== undefined) policy.perTryTimeout = protoDuration(conf.perTryTimeout);
  if (conf.numRetries !== undefined) policy.numRetries = conf.numRetries;
}

/** A status code HTTP knows by name, written in decimal digits. */
function statusCodeOf(condition: string): number | undefined {
  if (!/^\d+$/.test(condition)) return undefined;
  const code = Number(condition);
  return isKnownHttpStatus(code) ? code : undefined;
}

function hostSelection(policy: JsonObject, conf: HttpConf): void {
  const predicates: JsonObject[] = [];
  for (const selection of conf.hostSelection ?? []) {
    if (selection.predicate === 'OmitPreviousHosts') {
      predicates.push({
        name: 'envoy.retry_host_predicates.previous_hosts',
        typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' },
      });
    } else if (selection.predicate === 'OmitHostsWithTags') {
      // The service is in the cluster's name, not in its endpoints' metadata.
      const tags = tagsWithout(selection.tags ?? {}, SERVICE_TAG);
      const config: JsonObject = { '@type': 'type.googleapis.com/envoy.extensions.retry.host.omit_host_metadata.v3.OmitHostMetadataConfig' };
      if (Object.keys(tags).length > 0) config.metadataMatch = { filterMetadata: { 'envoy.lb': { ...tags } } };
      predicates.push({ name: 'envoy.retry_host_predicates.omit_host_metadata', typedConfig: config });
    } else if (selection.predicate === 'OmitPreviousPriorities') {
      const config: JsonObject = { '@type': 'type.googleapis.com/envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig' };
      if (selection.updateFrequency !== undefined) config.updateFrequency = selection.updateFrequency;
      policy.retryPriority = { name: 'envoy.retry_priorities.previous_priorities', typedConfig: config };
    }
  }
  if (predicates.length > 0) policy.retryHostPredicate = predicates;
}

function httpRetryPolicy(conf: HttpConf): JsonObject {
  const policy: JsonObject = { retryOn: HTTP_RETRY_ON_DEFAULT };
  attempts(policy, conf);
  backOffs(policy, conf);
  const retryOn: string[] = [];
  const statusCodes: number[] = [];
  const methods: string[] = [];
  for (const condition of conf.retryOn ?? []) {
    const status = statusCodeOf(condition);
    if (status !== undefined) statusCodes.push(status);
    else if (condition.startsWith(HTTP_METHOD_PREFIX)) methods.push(condition.slice(HTTP_METHOD_PREFIX.length).toUpperCase());
    else retryOn.push(HTTP_RETRY_ON[condition] ?? '');
  }
  const retryOnText = retryOn.length > 0 ? retryOn.join(',') : HTTP_RETRY_ON_DEFAULT;
  policy.retryOn = retryOnText;
  if (statusCodes.length > 0) {
    policy.retriableStatusCodes = statusCodes;
    const conditions = retryOnText.split(',');
    if (!conditions.includes(RETRIABLE_STATUS_CODES)) policy.retryOn = [...conditions, RETRIABLE_STATUS_CODES].join(',');
  }
  const requestHeaders = [
    ...methods.map((method) => ({ name: ':method', stringMatch: { exact: method } })),
    ...(conf.retriableRequestHeaders ?? []).map((header) => headerMatcher(header)),
  ];
  if (requestHeaders.length > 0) policy.retriableRequestHeaders = requestHeaders;
  if (conf.retriableResponseHeaders?.length) policy.retriableHeaders = conf.retriableResponseHeaders.map((header) => headerMatcher(header));
  if (conf.hostSelection) hostSelection(policy, conf);
  // int64 fields are strings in proto3 JSON.
  if (conf.hostSelectionMaxAttempts !== undefined && conf.hostSelectionMaxAttempts !== 0) policy.hostSelectionRetryMaxAttempts = String(conf.hostSelectionMaxAttempts);
  return policy;
}

function grpcRetryPolicy(conf: GrpcConf): JsonObject {
  const policy: JsonObject = { retryOn: GRPC_RETRY_ON_DEFAULT };
  attempts(policy, conf);
  const retryOn = (conf.retryOn ?? []).map((condition) => GRPC_RETRY_ON[condition] ?? '').join(',');
  if (retryOn !== '') policy.retryOn = retryOn;
  backOffs(policy, conf);
  return policy;
}

/** The route retry policy of a protocol: HTTP and gRPC only; undefined clears the routes' own. */
function routeRetryPolicy(conf: MeshRetryConf, protocol: Protocol): JsonObject | undefined | 'none' {
  if (protocol === 'http') return conf.http ? httpRetryPolicy(conf.http) : undefined;
  if (protocol === 'grpc') return conf.grpc ? grpcRetryPolicy(conf.grpc) : undefined;
  return 'none';
}

/** The first chain's TCP connect attempts, or the retry policy of the given routes (HTTP and gRPC). */
function configureRetry(chain: JsonObject | undefined, routes: readonly JsonObject[], conf: MeshRetryConf, protocol: Protocol): void {
  const maxConnectAttempt = conf.tcp?.maxConnectAttempt;
  if (protocol === 'tcp' && maxConnectAttempt !== undefined) {
    if (chain) {
      updateTcpProxy(chain, (proxy) => {
        proxy.maxConnectAttempts = maxConnectAttempt;
      });
    }
    return;
  }
  const policy = routeRetryPolicy(conf, protocol);
  if (policy === 'none') return;
  for (const route of routes) {
    if (!isObject(route.route)) continue;
    if (policy === undefined) delete route.route.retryPolicy;
    else route.route.retryPolicy = structuredClone(policy);
  }
}

export const applyMeshRetry: Plugin<'MeshRetry'> = (input, rules) => {
  for (const { listener, service } of outboundSites(input)) {
    const conf = confOf(rules.to, meshServiceSubset(service));
    if (!listener || !conf) continue;
    const protocol = serviceProtocol(input.state, service);
    // The first filter chain only, as the reference configures it.
    const [chain] = filterChainsOf(listener.resource);
    if (!chain) continue;
    const routes: JsonObject[] = [];
    updateHttpConnectionManager(chain, (hcm) => routes.push(...routesOfRouteConfig(hcm.routeConfig)));
    configureRetry(chain, routes, conf, protocol);
  }
  // A builtin gateway: the conf for all destinations, on each listener and its routes.
  const gatewayConf = confOf(rules.to, MESH_SUBSET);
  if (!gatewayConf) return;
  for (const { listener, protocol, routeConfig } of gatewayListenerSites(input)) {
    configureRetry(filterChainsOf(listener.resource)[0], routesOfRouteConfig(routeConfig), gatewayConf, protocol);
  }
};

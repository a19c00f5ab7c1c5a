// Envoy's v3 message definitions: the .proto files `@grpc/grpc-js-xds` ships under `deps/`, loaded
// once with protobufjs. The xDS server writes and reads the wire form with them; the renderer's
// tests check rendered resources against them.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);
const depsDir = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
const INCLUDE_DIRS = [
  ...['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((dir) => join(depsDir, dir)),
  // descriptor.proto and the other well-known types.
  dirname(require.resolve('protobufjs/package.json')),
];

/** Every message the renderer emits, directly or inside an `Any`; the discovery services' own; the admin config dump. */
const ENTRY_FILES = [
  'envoy/service/discovery/v3/discovery.proto',
  'envoy/service/health/v3/hds.proto',
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
  'envoy/extensions/transport_sockets/tls/v3/secret.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/filters/network/rbac/v3/rbac.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/fault/v3/fault.proto',
  'envoy/extensions/filters/http/local_ratelimit/v3/local_rate_limit.proto',
  'envoy/extensions/filters/http/grpc_stats/v3/config.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/filters/udp/dns_filter/v3/dns_filter.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/extensions/access_loggers/file/v3/file.proto',
  'envoy/config/trace/v3/zipkin.proto',
  'envoy/config/trace/v3/datadog.proto',
  // What the targetRef policies add (docs/policies.md).
  'envoy/config/trace/v3/opentelemetry.proto',
  'envoy/extensions/filters/network/local_ratelimit/v3/local_rate_limit.proto',
  'envoy/extensions/access_loggers/open_telemetry/v3/logs_service.proto',
  'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
  'envoy/extensions/retry/host/omit_host_metadata/v3/omit_host_metadata_config.proto',
  'envoy/extensions/retry/priority/previous_priorities/v3/previous_priorities_config.proto',
  'envoy/extensions/health_check/event_sinks/file/v3/file.proto',
  // What builtin gateways add (docs/xds.md, Builtin gateways).
  'envoy/extensions/filters/http/compressor/v3/compressor.proto',
  'envoy/extensions/compression/gzip/compressor/v3/gzip.proto',
  'envoy/admin/v3/config_dump.proto',
];

// The Kafka broker filter is a contrib extension, absent from the envoy-api tree: the part of
// contrib/envoy/extensions/filters/network/kafka_broker/v3/kafka_broker.proto the renderer uses.
const KAFKA_BROKER_PROTO = `
syntax = "proto3";
package envoy.extensions.filters.network.kafka_broker.v3;
message KafkaBroker {
  string stat_prefix = 1 [(validate.rules).string = {min_len: 1}];
}`;

// OpenTelemetry's common messages, which the OpenTelemetry access logger imports and the envoy-api
// tree does not ship: the messages of opentelemetry/proto/common/v1/common.proto the logger uses.
const OTLP_COMMON_FILE = 'opentelemetry/proto/common/v1/common.proto';
const OTLP_COMMON_PROTO = `
syntax = "proto3";
package opentelemetry.proto.common.v1;
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue {
  string key = 1;
  AnyValue value = 2;
}`;

let loadedRoot: protobuf.Root | undefined;

/** Envoy's messages, loaded on first use (about a second). */
export function envoyRoot(): protobuf.Root {
  if (loadedRoot) return loadedRoot;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of INCLUDE_DIRS) {
      const candidate = join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return target;
  };
  // Given inline, the file counts as loaded when an entry file imports it.
  protobuf.parse(OTLP_COMMON_PROTO, root, { keepCase: true });
  root.files.push(OTLP_COMMON_FILE);
  root.loadSync(ENTRY_FILES, { keepCase: true });
  protobuf.parse(KAFKA_BROKER_PROTO, root, { keepCase: true });
  root.resolveAll();
  loadedRoot = root;
  return root;
}

/** The wrapper messages (`google.protobuf.BoolValue` ...), written in JSON as the bare value they wrap. */
export const WRAPPER_TYPES: ReadonlySet<string> = new Set(
  ['Bool', 'String', 'Bytes', 'Double', 'Float', 'Int32', 'UInt32', 'Int64', 'UInt64'].map((name) => `.google.protobuf.${name}Value`),
);

export { protobuf };

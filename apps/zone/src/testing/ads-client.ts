// ADS clients over grpc-js (state of the world and incremental), for end-to-end tests of the data
// plane server: they send the requests a proxy sends and decode the responses with Envoy's own
// .proto files.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { credentials as grpcCredentials, type ClientDuplexStream, loadPackageDefinition, Metadata } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';

const require = createRequire(import.meta.url);
const depsDir = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
const INCLUDE_DIRS = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((dir) => join(depsDir, dir));

export const TYPE = {
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoints: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  secret: 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret',
} as const;

let definitions: PackageDefinition | undefined;

function protos(): PackageDefinition {
  definitions ??= loadSync(
    [
      'envoy/service/discovery/v3/ads.proto',
      'envoy/config/listener/v3/listener.proto',
      'envoy/config/cluster/v3/cluster.proto',
      'envoy/config/endpoint/v3/endpoint.proto',
      'envoy/extensions/transport_sockets/tls/v3/secret.proto',
    ],
    { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true, includeDirs: INCLUDE_DIRS },
  );
  return definitions;
}

export interface DiscoveryResponse {
  version_info: string;
  type_url: string;
  nonce: string;
  /** Decoded resources, each with its proto field names. */
  resources: Array<Record<string, unknown>>;
}

export interface AdsClientOptions {
  address: string;
  nodeId: string;
  metadata?: Record<string, unknown>;
  /** The `authorization` metadata value (a dataplane or zone token). */
  token?: string;
  userAgent?: string;
}

type Call = ClientDuplexStream<object, Record<string, unknown>>;
type ServiceClient = {
  StreamAggregatedResources(metadata: Metadata): Call;
  DeltaAggregatedResources(metadata: Metadata): Call;
  close(): void;
};

/** A proto3 Struct from JSON, as protobufjs's fromObject reads it (its own well-known types use camel case). */
function struct(value: Record<string, unknown>): Record<string, unknown> {
  const toValue = (item: unknown): Record<string, unknown> => {
    if (item === null || item === undefined) return { nullValue: 'NULL_VALUE' };
    if (typeof item === 'string') return { stringValue: item };
    if (typeof item === 'number') return { numberValue: item };
    if (typeof item === 'boolean') return { boolValue: item };
    if (Array.isArray(item)) return { listValue: { values: item.map(toValue) } };
    return { structValue: struct(item as Record<string, unknown>) };
  };
  return { fields: Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toValue(item)])) };
}

/** One ADS stream of a test proxy: the responses as they come, and how the stream ended. */
abstract class StreamClient<Response extends { type_url: string }> {
  readonly responses: Response[] = [];
  /** Set when the server ends the stream. */
  status: { code: number; details: string } | undefined;
  protected readonly call: Call;
  private readonly client: { close(): void };
  private first = true;

  constructor(
    protected readonly options: AdsClientOptions,
    open: (client: ServiceClient, metadata: Metadata) => Call,
    decode: (response: Record<string, unknown>) => Response,
  ) {
    const loaded = loadPackageDefinition(protos()) as unknown as {
      envoy: { service: { discovery: { v3: { AggregatedDiscoveryService: new (address: string, creds: ReturnType<typeof grpcCredentials.createInsecure>) => ServiceClient } } } };
    };
    const Service = loaded.envoy.service.discovery.v3.AggregatedDiscoveryService;
    const client = new Service(options.address, grpcCredentials.createInsecure());
    this.client = client;
    const metadata = new Metadata();
    if (options.token !== undefined) metadata.set('authorization', options.token);
    this.call = open(client, metadata);
    this.call.on('data', (response: Record<string, unknown>) => this.responses.push(decode(response)));
    this.call.on('error', (error: { code: number; details: string }) => {
      this.status = { code: error.code, details: error.details };
    });
    this.call.on('end', () => {
      this.status ??= { code: 0, details: 'OK' };
    });
  }

  /**
   * The node for a request: with the first one only (Envoy with `set_node_on_first_message_only`),
   * and with a later one given `nodeId` (Envoy's default repeats it).
   */
  protected nodeFor(nodeId: string | undefined): Record<string, unknown> | undefined {
    if (!this.first && nodeId === undefined) return undefined;
    this.first = false;
    return {
      id: nodeId ?? this.options.nodeId,
      cluster: 'test',
      metadata: struct(this.options.metadata ?? {}),
      user_agent_name: this.options.userAgent ?? 'envoy',
    };
  }

  /** The responses of a type received so far. */
  of(typeUrl: string): Response[] {
    return this.responses.filter((response) => response.type_url === typeUrl);
  }

  /** Waits for the `count`-th response of a type (1 = the first). */
  async next(typeUrl: string, count: number, timeoutMs = 10_000): Promise<Response> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.of(typeUrl);
      if (found.length >= count) return found[count - 1]!;
      if (this.status) throw new Error(`stream ended (${this.status.code}: ${this.status.details}) before response ${count} of ${typeUrl}`);
      if (Date.now() > deadline) throw new Error(`no response ${count} of ${typeUrl} within ${timeoutMs} ms (got ${found.length})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits until the server ends the stream. */
  async ended(timeoutMs = 10_000): Promise<{ code: number; details: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.status) {
      if (Date.now() > deadline) throw new Error(`the stream is still open after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.status;
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

/** A state-of-the-world stream. */
export class AdsClient extends StreamClient<DiscoveryResponse> {
  constructor(options: AdsClientOptions) {
    super(options, (client, metadata) => client.StreamAggregatedResources(metadata), decodeResponse);
  }

  /** Sends a request (the node as `nodeFor` says). */
  request(request: { typeUrl: string; versionInfo?: string; nonce?: string; resourceNames?: string[]; error?: string; nodeId?: string }): void {
    const message: Record<string, unknown> = {
      type_url: request.typeUrl,
      version_info: request.versionInfo ?? '',
      response_nonce: request.nonce ?? '',
      resource_names: request.resourceNames ?? [],
    };
    if (request.error !== undefined) message.error_detail = { code: 3, message: request.error };
    const node = this.nodeFor(request.nodeId);
    if (node) message.node = node;
    this.call.write(message);
  }

  /** ACKs (or NACKs, with an error) a response. */
  answer(response: DiscoveryResponse, options: { error?: string; resourceNames?: string[]; acceptedVersion?: string } = {}): void {
    this.request({
      typeUrl: response.type_url,
      versionInfo: options.error === undefined ? response.version_info : (options.acceptedVersion ?? ''),
      nonce: response.nonce,
      ...(options.resourceNames ? { resourceNames: options.resourceNames } : {}),
      ...(options.error !== undefined ? { error: options.error } : {}),
    });
  }
}

export interface DeltaDiscoveryResponse {
  system_version_info: string;
  type_url: string;
  nonce: string;
  /** Each resource's name, version and decoded message. */
  resources: Array<{ name: string; version: string; resource: Record<string, unknown> }>;
  removed_resources: string[];
}

/** An incremental stream. */
export class DeltaAdsClient extends StreamClient<DeltaDiscoveryResponse> {
  constructor(options: AdsClientOptions) {
    super(options, (client, metadata) => client.DeltaAggregatedResources(metadata), decodeDeltaResponse);
  }

  /** Sends a request: subscription changes, versions held at the start, the answer to a response. */
  request(request: { typeUrl: string; subscribe?: string[]; unsubscribe?: string[]; initialVersions?: Record<string, string>; nonce?: string; error?: string }): void {
    const message: Record<string, unknown> = {
      type_url: request.typeUrl,
      resource_names_subscribe: request.subscribe ?? [],
      resource_names_unsubscribe: request.unsubscribe ?? [],
      initial_resource_versions: request.initialVersions ?? {},
      response_nonce: request.nonce ?? '',
    };
    if (request.error !== undefined) message.error_detail = { code: 3, message: request.error };
    const node = this.nodeFor(undefined);
    if (node) message.node = node;
    this.call.write(message);
  }

  /** ACKs (or NACKs, with an error) a response. */
  answer(response: DeltaDiscoveryResponse, error?: string): void {
    this.request({ typeUrl: response.type_url, nonce: response.nonce, ...(error !== undefined ? { error } : {}) });
  }
}

/** An Any decoded with the message its type URL names. */
function decodeAny(any: { type_url: string; value: Buffer }): Record<string, unknown> {
  const definition = protos()[any.type_url.replace('type.googleapis.com/', '')] as { deserialize?: (bytes: Buffer) => Record<string, unknown> } | undefined;
  if (!definition?.deserialize) throw new Error(`cannot decode ${any.type_url}`);
  return definition.deserialize(any.value);
}

/** A response as the proto loader decodes it (`defaults: false`: a field left at its default is absent). */
interface RawDiscoveryResponse {
  version_info?: string;
  type_url?: string;
  nonce?: string;
  resources?: Array<{ type_url: string; value: Buffer }>;
}

function decodeResponse(response: Record<string, unknown>): DiscoveryResponse {
  const raw = response as RawDiscoveryResponse;
  return {
    version_info: raw.version_info ?? '',
    type_url: raw.type_url ?? '',
    nonce: raw.nonce ?? '',
    resources: (raw.resources ?? []).map(decodeAny),
  };
}

/** A delta response as the proto loader decodes it. */
interface RawDeltaDiscoveryResponse {
  system_version_info?: string;
  type_url?: string;
  nonce?: string;
  resources?: Array<{ name: string; version: string; resource: { type_url: string; value: Buffer } }>;
  removed_resources?: string[];
}

function decodeDeltaResponse(response: Record<string, unknown>): DeltaDiscoveryResponse {
  const raw = response as RawDeltaDiscoveryResponse;
  return {
    system_version_info: raw.system_version_info ?? '',
    type_url: raw.type_url ?? '',
    nonce: raw.nonce ?? '',
    resources: (raw.resources ?? []).map((entry) => ({ name: entry.name, version: entry.version, resource: decodeAny(entry.resource) })),
    removed_resources: raw.removed_resources ?? [],
  };
}

const stringField = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The names of a response's resources (listeners, clusters, secrets by `name`; endpoints by `cluster_name`). */
export const resourceNames = (response: DiscoveryResponse): string[] => response.resources.map((resource) => stringField(resource.name) ?? stringField(resource.cluster_name) ?? '');


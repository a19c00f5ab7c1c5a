// Discovery responses assembled from resources encoded once: a response is a few header fields
// around the resources' `Any` bytes, so a resource shared by many proxies (a cluster's endpoints)
// is encoded once and copied into each response.
import { hash } from 'node:crypto';
import { sameJson } from '@mesh/policy-matcher';
import { ENVOY_TYPE_URLS } from '@mesh/xds-renderer';
import { decodeMessage, encodeMessage } from './envoy-protos.js';

export const TYPE_URLS = {
  listener: ENVOY_TYPE_URLS.listener,
  cluster: ENVOY_TYPE_URLS.cluster,
  endpoints: ENVOY_TYPE_URLS.clusterLoadAssignment,
  secret: ENVOY_TYPE_URLS.secret,
  route: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
} as const;

/**
 * The served type URLs by themselves: a request's type URL is replaced by the server's own string,
 * so the lookups every ACK makes by it (type states, counters) compare one string, not two equal ones.
 */
const SERVED_TYPE_URLS = new Map<string, string>(Object.values(TYPE_URLS).map((url) => [url, url]));

/** One resource as it travels: its name, its `Any` bytes, and a digest of the message they wrap. */
export interface EncodedResource {
  readonly name: string;
  readonly any: Buffer;
  readonly digest: string;
}

const encodedByObject = new WeakMap<object, EncodedResource>();

/**
 * Encodings by content, while something uses them. Proxies of one service render equal outbound
 * listeners, and the consumers of a service equal clusters; a new mesh state renders its shared
 * resources again, mostly equal to the last ones: each distinct resource in use is encoded once,
 * not once per proxy or state. An entry lasts as long as its encoding is held (by a proxy's
 * snapshot, or as a rendered object's encoding above): the cache follows the configurations being
 * served, not their history, so a long run of changes does not fill it (docs/xds.md, Pushing changes).
 */
const byContent = new Map<string, WeakRef<EncodedResource>>();
let cachedBytes = 0;
const released = new FinalizationRegistry<{ content: string; bytes: number }>(({ content, bytes }) => {
  cachedBytes -= bytes;
  // The same content may have been encoded again since: that entry stays.
  if (byContent.get(content)?.deref() === undefined) byContent.delete(content);
});

function rememberByContent(content: string, encoded: EncodedResource): void {
  const bytes = encoded.any.length + content.length;
  byContent.set(content, new WeakRef(encoded));
  cachedBytes += bytes;
  released.register(encoded, { content, bytes });
}

/** Bytes of the encodings kept by content (with their keys), as of the last garbage collection. */
export const encodingCacheBytes = (): number => cachedBytes;

const encodedWithContent = (content: string): EncodedResource | undefined => byContent.get(content)?.deref();

/**
 * google.protobuf.Any: type_url (1), value (2). In a buffer of its own: encodings live as long as
 * the configurations using them, and a small buffer from Node's shared pool would keep its whole
 * 8 KB slab alive.
 */
function anyOf(typeUrl: string, message: Uint8Array): Buffer {
  const typeBytes = Buffer.byteLength(typeUrl);
  const any = Buffer.allocUnsafeSlow(2 + varintLength(typeBytes) + typeBytes + varintLength(message.length) + message.length);
  let offset = 0;
  any[offset++] = (1 << 3) | 2;
  offset = writeVarint(any, offset, typeBytes);
  offset += any.write(typeUrl, offset, 'utf8');
  any[offset++] = (2 << 3) | 2;
  offset = writeVarint(any, offset, message.length);
  any.set(message, offset);
  return any;
}

/**
 * A rendered resource as an `Any` (type URL and message bytes). Resources are read-only and often
 * shared, so the encoding is kept with the object, and with its content. `before` is the resource
 * this one replaces in the proxy's configuration: when they are equal its encoding is this one's
 * too, found without writing out and digesting the content (most of a proxy's own resources, its
 * inbound side, stay the same through a change of policies).
 */
export function encodeResource(name: string, resource: Record<string, unknown>, before?: object): EncodedResource {
  const known = encodedByObject.get(resource);
  if (known && known.name === name) return known;
  const prior = before === undefined ? undefined : encodedByObject.get(before);
  if (prior && prior.name === name && sameJson(before, resource)) {
    encodedByObject.set(resource, prior);
    return prior;
  }
  // Equal resources encode to equal bytes: the message is written out and keyed by its digest
  // (the bytes themselves would hold kilobytes per entry), cheaper than writing out the JSON.
  const typeUrl = String(resource['@type']);
  const message = encodeMessage(name, resource);
  const digest = hash('sha256', message, 'base64url');
  const content = `${typeUrl}\u0000${name}\u0000${digest}`;
  let encoded = encodedWithContent(content);
  if (!encoded) {
    encoded = { name, any: anyOf(typeUrl, message), digest: digest.slice(0, 16) };
    rememberByContent(content, encoded);
  }
  encodedByObject.set(resource, encoded);
  return encoded;
}

/** The version of no resources (most proxies have no secrets and no routes): the digest of nothing. */
const NO_RESOURCES_VERSION = hash('sha256', '', 'base64url').slice(0, 22);

/**
 * The version of a set of resources: a digest of their names and contents, so equal
 * configurations have equal versions on every instance of the control plane.
 */
export function versionOf(resources: readonly EncodedResource[]): string {
  if (resources.length === 0) return NO_RESOURCES_VERSION;
  // One digest of the joined text: the same bytes as digesting them piece by piece, at a fraction of the calls.
  let text = '';
  for (const resource of resources) text += `${resource.name}\u0000${resource.digest}\u0000`;
  return hash('sha256', text, 'base64url').slice(0, 22);
}

/** Bytes of a varint. */
const varintLength = (value: number): number => {
  let length = 1;
  for (let rest = value; rest > 0x7f; rest = Math.floor(rest / 128)) length++;
  return length;
};

/** Writes a varint at `offset`; returns the offset after it. */
function writeVarint(into: Buffer, offset: number, value: number): number {
  let at = offset;
  let rest = value;
  while (rest > 0x7f) {
    into[at++] = (rest & 0x7f) | 0x80;
    rest = Math.floor(rest / 128);
  }
  into[at++] = rest;
  return at;
}

/** A discovery response to send: its fields, encoded when gRPC frames it. */
export interface DiscoveryResponse {
  readonly versionInfo: string;
  readonly resources: readonly EncodedResource[];
  readonly typeUrl: string;
  readonly nonce: string;
}

/**
 * envoy.service.discovery.v3.DiscoveryResponse: version_info (1), resources (2), type_url (4),
 * nonce (5), written at the start of `into` (when it is large enough); returns the bytes it takes.
 */
export function writeDiscoveryResponse(response: DiscoveryResponse, into: Buffer | undefined): number {
  const { versionInfo, resources, typeUrl, nonce } = response;
  const versionBytes = Buffer.byteLength(versionInfo);
  const typeUrlBytes = Buffer.byteLength(typeUrl);
  const nonceBytes = Buffer.byteLength(nonce);
  // Field numbers under 16: a tag is one byte. Empty strings are left out, as proto3 does.
  let size = textFieldSize(versionBytes) + textFieldSize(typeUrlBytes) + textFieldSize(nonceBytes);
  for (const resource of resources) size += 1 + varintLength(resource.any.length) + resource.any.length;
  if (!into || into.length < size) return size;
  let offset = writeText(into, 0, 1, versionInfo, versionBytes);
  for (const resource of resources) {
    into[offset++] = (2 << 3) | 2;
    offset = writeVarint(into, offset, resource.any.length);
    offset += resource.any.copy(into, offset);
  }
  offset = writeText(into, offset, 4, typeUrl, typeUrlBytes);
  writeText(into, offset, 5, nonce, nonceBytes);
  return size;
}

/** The version and encoding of one resource in an incremental response. */
export interface VersionedResource {
  readonly version: string;
  readonly resource: EncodedResource;
}

/** An incremental (delta) discovery response to send: what changed of a type, and what is gone. */
export interface DeltaDiscoveryResponse {
  readonly systemVersionInfo: string;
  readonly resources: readonly VersionedResource[];
  readonly removed: readonly string[];
  readonly typeUrl: string;
  readonly nonce: string;
}

/** Bytes of a string field (tag, length, UTF-8); none for an empty string. */
function textFieldSize(bytes: number): number {
  return bytes > 0 ? 1 + varintLength(bytes) + bytes : 0;
}

/** envoy.service.discovery.v3.Resource: version (1), resource (2), name (3): the bytes of its fields. */
function versionedResourceSize(entry: VersionedResource): number {
  const { any, name } = entry.resource;
  return textFieldSize(Buffer.byteLength(entry.version)) + 1 + varintLength(any.length) + any.length + textFieldSize(Buffer.byteLength(name));
}

/**
 * envoy.service.discovery.v3.DeltaDiscoveryResponse: system_version_info (1), resources (2),
 * type_url (4), nonce (5), removed_resources (6), written like `writeDiscoveryResponse`.
 */
export function writeDeltaDiscoveryResponse(response: DeltaDiscoveryResponse, into: Buffer | undefined): number {
  const { systemVersionInfo, resources, removed, typeUrl, nonce } = response;
  const versionBytes = Buffer.byteLength(systemVersionInfo);
  const typeUrlBytes = Buffer.byteLength(typeUrl);
  const nonceBytes = Buffer.byteLength(nonce);
  let size = textFieldSize(versionBytes) + textFieldSize(typeUrlBytes) + textFieldSize(nonceBytes);
  const entrySizes = resources.map(versionedResourceSize);
  for (const entrySize of entrySizes) size += 1 + varintLength(entrySize) + entrySize;
  for (const name of removed) size += 1 + varintLength(Buffer.byteLength(name)) + Buffer.byteLength(name);
  if (!into || into.length < size) return size;
  let offset = writeText(into, 0, 1, systemVersionInfo, versionBytes);
  resources.forEach((entry, at) => {
    const { any, name } = entry.resource;
    into[offset++] = (2 << 3) | 2;
    offset = writeVarint(into, offset, entrySizes[at]!);
    offset = writeText(into, offset, 1, entry.version, Buffer.byteLength(entry.version));
    into[offset++] = (2 << 3) | 2;
    offset = writeVarint(into, offset, any.length);
    offset += any.copy(into, offset);
    offset = writeText(into, offset, 3, name, Buffer.byteLength(name));
  });
  offset = writeText(into, offset, 4, typeUrl, typeUrlBytes);
  offset = writeText(into, offset, 5, nonce, nonceBytes);
  for (const name of removed) {
    const bytes = Buffer.byteLength(name);
    into[offset] = (6 << 3) | 2;
    offset = writeVarint(into, offset + 1, bytes);
    offset += into.write(name, offset, bytes, 'utf8');
  }
  return size;
}

type MessageWriter = (into: Buffer | undefined) => number;

/** A message in a buffer of its own. */
function encodeWith(write: MessageWriter): Buffer {
  const message = Buffer.allocUnsafe(write(undefined));
  write(message);
  return message;
}

/** A discovery response in a buffer of its own. */
export const encodeDiscoveryResponse = (response: DiscoveryResponse): Buffer => encodeWith((into) => writeDiscoveryResponse(response, into));

/** An incremental discovery response in a buffer of its own. */
export const encodeDeltaDiscoveryResponse = (response: DeltaDiscoveryResponse): Buffer => encodeWith((into) => writeDeltaDiscoveryResponse(response, into));

/** Writes a string field (its tag, length and UTF-8 bytes) at `offset`, unless it is empty; returns the offset after it. */
function writeText(into: Buffer, offset: number, field: number, value: string, bytes: number): number {
  if (bytes === 0) return offset;
  into[offset] = (field << 3) | 2;
  const at = writeVarint(into, offset + 1, bytes);
  return at + into.write(value, at, bytes, 'utf8');
}

/** A malformed message from a proxy. */
export class WireFormatError extends Error {}

/** Reads protobuf fields off a buffer, refusing anything cut short. */
class FieldReader {
  private at: number;

  constructor(
    private readonly bytes: Buffer,
    start = 0,
    private readonly end = bytes.length,
  ) {
    this.at = start;
  }

  get done(): boolean {
    return this.at >= this.end;
  }

  /** A varint as a number (exact up to 2^53). */
  varint(): number {
    let value = 0;
    this.eachVarintByte((bits, shift) => (value += bits * 2 ** shift));
    return value;
  }

  /** An int32: negative ones take ten bytes, of which the low 32 bits are the value. */
  int32(): number {
    let value = 0;
    this.eachVarintByte((bits, shift) => {
      if (shift < 32) value |= bits << shift;
    });
    return value;
  }

  private eachVarintByte(take: (bits: number, shift: number) => void): void {
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.at >= this.end) throw new WireFormatError('a varint runs past the end of the message');
      const byte = this.bytes[this.at++]!;
      take(byte & 0x7f, shift);
      if (byte < 0x80) return;
    }
    throw new WireFormatError('a varint is longer than ten bytes');
  }

  /** The bounds of a length-delimited field's value. */
  delimited(): [number, number] {
    const length = this.varint();
    const start = this.at;
    if (length > this.end - start) throw new WireFormatError('a field runs past the end of the message');
    this.at += length;
    return [start, this.at];
  }

  text(): string {
    const [start, end] = this.delimited();
    return this.bytes.toString('utf8', start, end);
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 2) this.delimited();
    else if (wireType === 1 || wireType === 5) {
      this.at += wireType === 1 ? 8 : 4;
      if (this.at > this.end) throw new WireFormatError('a field runs past the end of the message');
    } else throw new WireFormatError(`unsupported wire type ${wireType}`);
  }
}

/** google.rpc.Status: code (1), message (2); the details (3) are not read. */
function readStatus(bytes: Buffer, start: number, end: number): { code?: number; message?: string } {
  const reader = new FieldReader(bytes, start, end);
  const status: { code?: number; message?: string } = {};
  while (!reader.done) {
    const tag = reader.varint();
    if (tag === 8) status.code = reader.int32();
    else if (tag === 18) status.message = reader.text();
    else reader.skip(tag & 7);
  }
  return status;
}

/** The id (field 1) of an envoy.config.core.v3.Node. */
function readNodeId(bytes: Buffer, start: number, end: number): string {
  const reader = new FieldReader(bytes, start, end);
  let id = '';
  while (!reader.done) {
    const tag = reader.varint();
    if (tag === 10) id = reader.text();
    else reader.skip(tag & 7);
  }
  return id;
}

/**
 * An envoy.service.discovery.v3.DiscoveryRequest: version_info (1), node (2), resource_names (3),
 * type_url (4), response_nonce (5), error_detail (6). Envoy repeats its node (and the metadata in
 * it) in every request of a stream: only its id is read at once, the rest when asked for (the
 * first request of a stream).
 */
export function decodeDiscoveryRequest(bytes: Buffer): DiscoveryRequestOnWire {
  const reader = new FieldReader(bytes);
  const request = new DiscoveryRequestOnWire();
  while (!reader.done) {
    const tag = reader.varint();
    switch (tag) {
      case 10:
        request.version_info = reader.text();
        break;
      case 18:
        request.readNode(bytes, reader.delimited());
        break;
      case 26:
        request.resource_names.push(reader.text());
        break;
      case 34:
        request.type_url = servedTypeUrl(reader.text());
        break;
      case 42:
        request.response_nonce = reader.text();
        break;
      case 50:
        request.error_detail = readStatus(bytes, ...reader.delimited());
        break;
      default:
        reader.skip(tag & 7);
    }
  }
  return request;
}

const servedTypeUrl = (url: string): string => SERVED_TYPE_URLS.get(url) ?? url;

/** A request's node as read off the wire: its id at once, the rest decoded on first read. */
class NodeOnWire {
  /** The node's id, when the request carries a node. */
  node_id?: string;
  nodeBytes: Buffer | undefined;
  private decodedNode: Record<string, unknown> | undefined;

  get node(): Record<string, unknown> | undefined {
    if (this.decodedNode === undefined && this.nodeBytes !== undefined) this.decodedNode = decodeMessage('envoy.config.core.v3.Node', this.nodeBytes);
    return this.decodedNode;
  }

  readNode(bytes: Buffer, [start, end]: [number, number]): void {
    this.node_id = readNodeId(bytes, start, end);
    // A copy: the request's bytes are a view of a whole batch of them (src/transport.ts).
    this.nodeBytes = Buffer.from(bytes.subarray(start, end));
  }
}

/** A request as read off the wire; `node` is decoded on first read. */
export class DiscoveryRequestOnWire extends NodeOnWire {
  version_info?: string;
  resource_names: string[] = [];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
}

/** An incremental request as read off the wire; `node` is decoded on first read. */
export class DeltaDiscoveryRequestOnWire extends NodeOnWire {
  type_url?: string;
  resource_names_subscribe: string[] = [];
  resource_names_unsubscribe: string[] = [];
  initial_resource_versions = new Map<string, string>();
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
}

/** A map<string, string> entry: key (1), value (2). */
function readStringEntry(bytes: Buffer, [start, end]: [number, number]): [string, string] {
  const reader = new FieldReader(bytes, start, end);
  let key = '';
  let value = '';
  while (!reader.done) {
    const tag = reader.varint();
    if (tag === 10) key = reader.text();
    else if (tag === 18) value = reader.text();
    else reader.skip(tag & 7);
  }
  return [key, value];
}

/**
 * An envoy.service.discovery.v3.DeltaDiscoveryRequest: node (1), type_url (2),
 * resource_names_subscribe (3), resource_names_unsubscribe (4), initial_resource_versions (5),
 * response_nonce (6), error_detail (7). The node is read as in `decodeDiscoveryRequest`.
 */
export function decodeDeltaDiscoveryRequest(bytes: Buffer): DeltaDiscoveryRequestOnWire {
  const reader = new FieldReader(bytes);
  const request = new DeltaDiscoveryRequestOnWire();
  while (!reader.done) {
    const tag = reader.varint();
    switch (tag) {
      case 10:
        request.readNode(bytes, reader.delimited());
        break;
      case 18:
        request.type_url = servedTypeUrl(reader.text());
        break;
      case 26:
        request.resource_names_subscribe.push(reader.text());
        break;
      case 34:
        request.resource_names_unsubscribe.push(reader.text());
        break;
      case 42:
        request.initial_resource_versions.set(...readStringEntry(bytes, reader.delimited()));
        break;
      case 50:
        request.response_nonce = reader.text();
        break;
      case 58:
        request.error_detail = readStatus(bytes, ...reader.delimited());
        break;
      default:
        reader.skip(tag & 7);
    }
  }
  return request;
}

// Discovery responses assembled from resources encoded once: a response is a few header fields
// around the resources' `Any` bytes, so a resource shared by many proxies (a cluster's endpoints)
// is encoded once and copied into each response.
import { hash } from 'node:crypto';
import { decodeMessage, encodeMessage } from './envoy-protos.js';

/** One resource as it travels: its name, its `Any` message bytes, and a digest of them. */
export interface EncodedResource {
  readonly name: string;
  readonly any: Buffer;
  readonly digest: string;
}

const text = (value: string): Buffer => Buffer.from(value, 'utf8');

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
 * shared, so the encoding is kept with the object, and with its content.
 */
export function encodeResource(name: string, resource: Record<string, unknown>): EncodedResource {
  const known = encodedByObject.get(resource);
  if (known && known.name === name) return known;
  // Keyed by a digest of the JSON: the text itself would hold kilobytes per entry.
  const content = hash('sha256', `${name}\u0000${JSON.stringify(resource)}`, 'base64');
  let encoded = encodedWithContent(content);
  if (!encoded) {
    const typeUrl = String(resource['@type']);
    const any = anyOf(typeUrl, encodeMessage(name, resource));
    encoded = { name, any, digest: hash('sha256', any, 'base64url').slice(0, 16) };
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

/**
 * envoy.service.discovery.v3.DiscoveryResponse: version_info (1), resources (2), type_url (4),
 * nonce (5). Written into one buffer of the exact size: a push writes one per proxy and type.
 */
export function encodeDiscoveryResponse(response: { versionInfo: string; resources: readonly EncodedResource[]; typeUrl: string; nonce: string }): Buffer {
  const fields: Array<[number, Buffer]> = [];
  if (response.versionInfo) fields.push([1, text(response.versionInfo)]);
  for (const resource of response.resources) fields.push([2, resource.any]);
  fields.push([4, text(response.typeUrl)], [5, text(response.nonce)]);
  let size = 0;
  // Field numbers under 16: a tag is one byte.
  for (const [, payload] of fields) size += 1 + varintLength(payload.length) + payload.length;
  const message = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const [field, payload] of fields) {
    message[offset++] = (field << 3) | 2;
    offset = writeVarint(message, offset, payload.length);
    offset += payload.copy(message, offset);
  }
  return message;
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
      case 18: {
        const [start, end] = reader.delimited();
        request.node_id = readNodeId(bytes, start, end);
        request.nodeBytes = bytes.subarray(start, end);
        break;
      }
      case 26:
        request.resource_names.push(reader.text());
        break;
      case 34:
        request.type_url = reader.text();
        break;
      case 42:
        request.response_nonce = reader.text();
        break;
      case 50: {
        const [start, end] = reader.delimited();
        request.error_detail = readStatus(bytes, start, end);
        break;
      }
      default:
        reader.skip(tag & 7);
    }
  }
  return request;
}

/** A request as read off the wire; `node` is decoded on first read. */
export class DiscoveryRequestOnWire {
  version_info?: string;
  /** The node's id, when the request carries a node. */
  node_id?: string;
  resource_names: string[] = [];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
  nodeBytes: Buffer | undefined;
  private decodedNode: Record<string, unknown> | undefined;

  get node(): Record<string, unknown> | undefined {
    if (this.decodedNode === undefined && this.nodeBytes !== undefined) this.decodedNode = decodeMessage('envoy.config.core.v3.Node', this.nodeBytes);
    return this.decodedNode;
  }
}

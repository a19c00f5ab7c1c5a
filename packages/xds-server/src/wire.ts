// Discovery responses assembled from resources encoded once: a response is a few header fields
// around the resources' `Any` bytes, so a resource shared by many proxies (a cluster's endpoints)
// is encoded once and copied into each response.
import { hash } from 'node:crypto';
import { encodeMessage } from './envoy-protos.js';

/** One resource as it travels: its name, its `Any` message bytes, and a digest of them. */
export interface EncodedResource {
  readonly name: string;
  readonly any: Buffer;
  readonly digest: string;
}

const text = (value: string): Buffer => Buffer.from(value, 'utf8');

const encodedByObject = new WeakMap<object, EncodedResource>();

/**
 * Encodings by content. Proxies of one service render equal outbound listeners, and the consumers
 * of a service equal clusters; a new mesh state renders its shared resources again, mostly equal
 * to the last ones: each distinct resource is encoded once, not once per proxy or state. Bounded
 * by bytes in two generations: new entries go to the current one, which becomes the previous one
 * once it holds `GENERATION_BYTES` (the one before it is dropped), and an entry read from the
 * previous one moves back, so what the configurations in use hold stays.
 */
const GENERATION_BYTES = 16 * 1024 * 1024;
let currentByContent = new Map<string, EncodedResource>();
let previousByContent = new Map<string, EncodedResource>();
let currentBytes = 0;

function rememberByContent(content: string, encoded: EncodedResource): void {
  if (currentBytes >= GENERATION_BYTES) {
    previousByContent = currentByContent;
    currentByContent = new Map();
    currentBytes = 0;
  }
  currentByContent.set(content, encoded);
  currentBytes += encoded.any.length + content.length;
}

function encodedWithContent(content: string): EncodedResource | undefined {
  const current = currentByContent.get(content);
  if (current) return current;
  const previous = previousByContent.get(content);
  if (previous) rememberByContent(content, previous);
  return previous;
}

/**
 * google.protobuf.Any: type_url (1), value (2). In a buffer of its own: encodings live long in the
 * caches above, and a small buffer from Node's shared pool would keep its whole 8 KB slab alive.
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

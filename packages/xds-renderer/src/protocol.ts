// The protocol a listener or cluster is built for: an inbound's `mesh.io/protocol` tag, or the
// protocol every endpoint of a destination shares.
import { PROTOCOL_TAG, type TagMap } from '@mesh/model';

export type Protocol = 'http' | 'http2' | 'grpc' | 'kafka' | 'tcp' | 'unknown';

const KNOWN: ReadonlySet<string> = new Set(['http', 'http2', 'grpc', 'kafka', 'tcp']);

export function parseProtocol(tag: string | undefined): Protocol {
  const lower = (tag ?? '').toLowerCase();
  return KNOWN.has(lower) ? (lower as Protocol) : 'unknown';
}

// Each protocol with the ones it is carried over, most specific first.
const STACKS: Record<Protocol, readonly Protocol[]> = {
  grpc: ['grpc', 'http2', 'tcp'],
  http2: ['http2', 'tcp'],
  http: ['http', 'tcp'],
  kafka: ['kafka', 'tcp'],
  tcp: ['tcp'],
  unknown: [],
};

function commonProtocol(one: Protocol, other: Protocol): Protocol {
  if (one === other) return one;
  const otherStack = STACKS[other];
  return STACKS[one].find((protocol) => otherStack.includes(protocol)) ?? 'unknown';
}

/** The protocol all endpoints speak: `unknown` without endpoints or when one has no known protocol. */
export function commonProtocolOf(endpoints: Iterable<{ readonly tags: TagMap }>): Protocol {
  let result: Protocol | undefined;
  for (const endpoint of endpoints) {
    const protocol = parseProtocol(endpoint.tags[PROTOCOL_TAG]);
    result = result === undefined ? protocol : commonProtocol(result, protocol);
  }
  return result ?? 'unknown';
}

export const isHttpLike = (protocol: Protocol): boolean => protocol === 'http' || protocol === 'http2' || protocol === 'grpc';

// Address rules of proxies and external services, following the Go functions the reference
// relies on: net.ParseIP, net.SplitHostPort, url.ParseRequestURI and govalidator's IsDNSName.
import { fieldPath, type Violations } from './violations.js';

const IPV4_OCTET = /^(0|[1-9]\d{0,2})$/;

function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!IPV4_OCTET.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return bytes;
}

function parseIpv6(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const words = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const groups = half.split(':');
    for (const [i, group] of groups.entries()) {
      if (i === groups.length - 1 && group.includes('.')) {
        const v4 = parseIpv4(group);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
        out.push(parseInt(group, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = words(halves[0]!);
  const tail = halves.length === 2 ? words(halves[1]!) : [];
  if (!head || !tail) return undefined;
  // An embedded IPv4 part may only end the address.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return all.flatMap((word) => [word >> 8, word & 0xff]);
}

const V4_IN_V6_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** An IP literal as 16 bytes (IPv4 in its IPv6-mapped form), or undefined; no zones, no brackets. */
export function parseIp(text: string): number[] | undefined {
  if (text.includes(':')) return parseIpv6(text);
  const v4 = parseIpv4(text);
  return v4 ? [...V4_IN_V6_PREFIX, ...v4] : undefined;
}

export const isIp = (text: string): boolean => parseIp(text) !== undefined;

const sameIp = (a: number[], b: number[]): boolean => a.every((byte, i) => byte === b[i]);
const isUnspecifiedIp = (ip: number[]): boolean =>
  ip.every((byte) => byte === 0) || sameIp(ip, [...V4_IN_V6_PREFIX, 0, 0, 0, 0]);

const LOOPBACK = parseIp('127.0.0.1')!;

/**
 * Whether a listener on this address is reachable on 127.0.0.1, where Envoy's admin listener
 * binds: the loopback address itself or a wildcard (0.0.0.0, ::). Names never overlap.
 */
export function overlapsLoopback(address: string): boolean {
  const ip = parseIp(address);
  return ip !== undefined && (isUnspecifiedIp(ip) || sameIp(ip, LOOPBACK));
}

const DNS_NAME = /^([a-zA-Z0-9_]{1}[a-zA-Z0-9_-]{0,62}){1}(\.[a-zA-Z0-9_]{1}[a-zA-Z0-9_-]{0,62})*[._]?$/;

/** govalidator.IsDNSName: permissive host names (underscores, a trailing dot), IPs excluded. */
export function isDnsName(text: string): boolean {
  if (text === '' || text.replaceAll('.', '').length > 255) return false;
  return !isIp(text) && DNS_NAME.test(text);
}

/** net.SplitHostPort: `host:port` or `[v6]:port`; undefined when malformed. */
export function splitHostPort(hostport: string): { host: string; port: string } | undefined {
  const colon = hostport.lastIndexOf(':');
  if (colon < 0) return undefined;
  let host: string;
  let from = 0;
  let after = 0;
  if (hostport.startsWith('[')) {
    const end = hostport.indexOf(']');
    if (end < 0 || end + 1 !== colon) return undefined;
    host = hostport.slice(1, end);
    from = 1;
    after = end + 1;
  } else {
    host = hostport.slice(0, colon);
    if (host.includes(':')) return undefined;
  }
  if (hostport.indexOf('[', from) >= 0 || hostport.indexOf(']', after) >= 0) return undefined;
  return { host, port: hostport.slice(colon + 1) };
}

/**
 * The reference's proxy address check (dataplanes, zone ingresses and egresses). It reports at
 * `<parent>.address`, so callers passing `networking.address` get the doubled path on purpose.
 */
export function validateProxyAddress(v: Violations, parent: string, address: string | undefined): void {
  const path = fieldPath(parent, 'address');
  if (!address) {
    v.add(path, "address can't be empty");
    return;
  }
  if (address === '0.0.0.0' || address === '::') v.add(path, 'must not be 0.0.0.0 or ::');
  if (!isIp(address) && !isDnsName(address)) v.add(path, 'address has to be valid IP address or domain name');
}

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const CONTROL = /[\x00-\x1f\x7f]/;
const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/;
const HOST_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"%\u0080-\uffff]*$/;
const OPTIONAL_PORT = /^(:\d*)?$/;

/** What url.ParseRequestURI finds in a URL; `user` says whether an `@` gave user information. */
export interface RequestUri {
  scheme: string;
  opaque: string;
  user: boolean;
  host: string;
  port: string;
  path: string;
  query: string;
}

/** url.ParseRequestURI: an absolute URI or an absolute path, in its parts; undefined when invalid. */
export function parseRequestUriParts(raw: string): RequestUri | undefined {
  const uri: RequestUri = { scheme: '', opaque: '', user: false, host: '', port: '', path: '', query: '' };
  // The query is kept raw, so only the part before it must be validly escaped.
  if (CONTROL.test(raw) || BAD_ESCAPE.test(raw.split('?', 1)[0]!)) return undefined;
  if (raw === '*') return { ...uri, path: '*' };
  if (raw.startsWith(':')) return undefined;
  const scheme = SCHEME.exec(raw);
  let rest = scheme ? raw.slice(scheme[0].length) : raw;
  uri.scheme = scheme ? scheme[0].slice(0, -1).toLowerCase() : '';
  const question = rest.indexOf('?');
  if (question >= 0) {
    uri.query = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  if (!rest.startsWith('/')) {
    if (!scheme) return undefined;
    return { ...uri, opaque: rest };
  }
  if (scheme && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    uri.user = at >= 0;
    const host = authority.slice(at + 1);
    if (host.startsWith('[')) {
      const end = host.indexOf(']');
      if (end < 0 || !OPTIONAL_PORT.test(host.slice(end + 1))) return undefined;
      uri.host = host.slice(0, end + 1);
      uri.port = host.slice(end + 2);
    } else {
      const colon = host.lastIndexOf(':');
      if (colon >= 0 && !OPTIONAL_PORT.test(host.slice(colon))) return undefined;
      if (!HOST_CHARS.test(host)) return undefined;
      uri.host = colon >= 0 ? host.slice(0, colon) : host;
      uri.port = colon >= 0 ? host.slice(colon + 1) : '';
    }
  }
  uri.path = rest;
  return uri;
}

/** url.ParseRequestURI: an absolute URI or an absolute path. Returns its port ("" if none), or undefined when invalid. */
export function parseRequestUri(raw: string): { port: string } | undefined {
  const uri = parseRequestUriParts(raw);
  return uri && { port: uri.port };
}

const URL_SCHEME = /^(?:ftp|tcp|udp|wss?|https?):\/\//;
const URL_IPV4 = /^([1-9]\d?|1\d\d|2[01]\d|22[0-3]|24\d|25[0-5])(\.(\d{1,2}|1\d\d|2[0-4]\d|25[0-5])){2}\.([0-9]\d?|1\d\d|2[0-4]\d|25[0-5])$/;
const URL_HOST_NAME = /^[a-zA-Z0-9\u00a1-\uffff](?:[a-zA-Z0-9\u00a1-\uffff._-]*[a-zA-Z0-9\u00a1-\uffff])?$/;
const URL_PORT_AND_PATH = /^(:\d{1,5})?([/?#]\S*)?$/;

/** A host (a name, an IPv4 address or a bracketed IPv6 one), then an optional port and path. */
function isUrlHostPortPath(text: string): boolean {
  let after: string;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0 || !text.slice(1, end).includes(':') || !isIp(text.slice(1, end))) return false;
    after = text.slice(end + 1);
  } else {
    let host = /^[^:/?#]*/.exec(text)![0];
    after = text.slice(host.length);
    if (host.endsWith('.')) host = host.slice(0, -1);
    if (!URL_IPV4.test(host) && (!URL_HOST_NAME.test(host) || host.includes('..'))) return false;
  }
  return URL_PORT_AND_PATH.test(after);
}

/** The host and path url.Parse finds, or undefined when it would fail. */
function parseUrlHostAndPath(text: string): { host: string; path: string } | undefined {
  if (CONTROL.test(text)) return undefined;
  let rest = text.split('#', 1)[0]!;
  const scheme = SCHEME.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length);
  rest = rest.split('?', 1)[0]!;
  if (!scheme || !rest.startsWith('//')) return BAD_ESCAPE.test(rest) ? undefined : { host: '', path: rest };
  const slash = rest.indexOf('/', 2);
  const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  const bracket = host.startsWith('[') ? host.indexOf(']') : -1;
  if (host.startsWith('[') && bracket < 0) return undefined;
  const colon = host.lastIndexOf(':');
  const port = bracket >= 0 ? host.slice(bracket + 1) : colon < 0 ? '' : host.slice(colon);
  if (!OPTIONAL_PORT.test(port) || !HOST_CHARS.test(host)) return undefined;
  return { host, path: slash < 0 ? '' : rest.slice(slash) };
}

/**
 * govalidator.IsURL, the reference's check of collector and log addresses: an optional
 * `http(s)`, `tcp`, `udp`, `ws(s)` or `ftp` scheme, optional user information, a host, then an
 * optional port and path (`127.0.0.1:5000`, `http://zipkin:9411/api/v2/spans`). Host names are
 * checked with a simpler pattern than its own, which accepts the same usual names.
 */
export function isUrl(text: string): boolean {
  if (text === '' || [...text].length >= 2083 || text.length <= 3 || text.startsWith('.')) return false;
  const parsed = parseUrlHostAndPath(text.includes(':') && !text.includes('://') ? `http://${text}` : text);
  if (!parsed || parsed.host.startsWith('.')) return false;
  if (parsed.host === '' && parsed.path !== '' && !parsed.path.includes('.')) return false;
  const rest = text.replace(URL_SCHEME, '');
  // User information is anything without spaces before an `@`; any `@` may end it.
  const hostStarts = [0, ...[...rest.matchAll(/@/g)].map((match) => match.index + 1)];
  return hostStarts.some((start) => (start === 0 || /^\S+$/.test(rest.slice(0, start - 1))) && isUrlHostPortPath(rest.slice(start)));
}

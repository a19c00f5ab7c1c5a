import { parseDurationNanos } from '../wire.js';
import type { Violations } from './violations.js';

export const PROTOCOLS = ['grpc', 'http', 'http2', 'kafka', 'tcp'] as const;

/** Ports: 1..65535 (absent counts as 0). */
export function validatePort(v: Violations, path: string, port: number | undefined): void {
  if (!port || port < 1 || port > 65535) v.add(path, 'port must be in the range [1, 65535]');
}

/** A required positive duration (normalised "<n>s" text or absent). */
export function validateDuration(v: Violations, path: string, value: string | undefined): void {
  if (value === undefined) {
    v.add(path, 'must have a positive value');
    return;
  }
  const nanos = parseDurationNanos(value);
  if (nanos === undefined) v.add(path, 'must have a valid value');
  else if (nanos <= 0) v.add(path, 'must have a positive value');
}

/** A required positive count (health-check thresholds). */
export function validateThreshold(v: Violations, path: string, value: number | undefined): void {
  if (!value) v.add(path, 'must have a positive value');
}

const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DOMAIN = new RegExp(`^${DNS_LABEL}(\\.${DNS_LABEL})*$`);

/** A lowercase DNS name (`foo.example.com`). */
export const isDomainName = (value: string): boolean => DOMAIN.test(value);

/** A gateway hostname: `*`, `*.<domain>` or a domain. */
export function validateHostname(v: Violations, path: string, hostname: string): void {
  if (hostname === '*') return;
  if (hostname.startsWith('*.')) {
    if (!isDomainName(hostname.slice(2))) v.add(path, 'invalid wildcard domain');
    return;
  }
  if (!isDomainName(hostname)) v.add(path, 'invalid hostname');
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** An IPv4 or IPv6 literal (no brackets, no zone). */
export function isIpAddress(value: string): boolean {
  if (IPV4.test(value)) return true;
  if (!value.includes(':') || !/^[0-9a-fA-F:.]+$/.test(value)) return false;
  const parts = value.split('::');
  if (parts.length > 2) return false;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const all = [...groups(parts[0]!), ...groups(parts[1] ?? '')];
  let count = 0;
  for (const [i, g] of all.entries()) {
    if (i === all.length - 1 && g.includes('.')) {
      if (!IPV4.test(g)) return false;
      count += 2;
    } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) count += 1;
    else return false;
  }
  return parts.length === 2 ? count < 8 : count === 8;
}

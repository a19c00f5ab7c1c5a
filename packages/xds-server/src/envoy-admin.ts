// Envoy's admin API of a proxy (docs/xds.md, Inspection): `/stats` and `/clusters`, reached at
// the loopback address and port the proxy announced in its node metadata when it connected from
// this host. Nothing of a failed answer is passed on: the caller names the proxy, not the
// service, and must not learn what else listens on this host.
import { request } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/** The admin API could not be reached or answered with an error; the message says how, never what it answered. */
export class AdminUnavailable extends Error {}

const CONNECT_TIMEOUT_MS = 3000;
const TOTAL_TIMEOUT_MS = 5000;

/** GETs one admin path; resolves with Envoy's body and content type. */
export function fetchAdmin(host: string, port: number, path: string): Promise<{ body: string; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, method: 'GET', timeout: CONNECT_TIMEOUT_MS }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new AdminUnavailable(`answered with status ${res.statusCode ?? 0}`));
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ body: Buffer.concat(chunks).toString('utf8'), contentType: String(res.headers['content-type'] ?? 'text/plain') }));
      res.on('error', (error) => reject(new AdminUnavailable(error.message)));
    });
    const total = setTimeout(() => req.destroy(new Error(`no answer within ${TOTAL_TIMEOUT_MS / 1000}s`)), TOTAL_TIMEOUT_MS);
    req.on('timeout', () => req.destroy(new Error(`could not connect within ${CONNECT_TIMEOUT_MS / 1000}s`)));
    req.on('error', (error) => reject(new AdminUnavailable(error.message)));
    req.on('close', () => clearTimeout(total));
    req.end();
  });
}

/**
 * Where the control plane reaches an admin API announced on `address` (`dataplane.admin.address`):
 * the admin addresses a proxy may have (the renderer allows no other) are loopback or
 * unspecified, both reached on loopback. Undefined for any other address.
 */
export function adminHostOf(address: string): string | undefined {
  if (address === '' || address === '0.0.0.0' || address === '127.0.0.1') return '127.0.0.1';
  if (address === '::' || address === '::1') return '::1';
  return undefined;
}

/** An IPv4 address written as IPv6 (`::ffff:127.0.0.1`), as a dual-stack socket reports it, in its IPv4 form. */
const unmapped = (address: string): string => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);

/** Whether a peer address is one of this host's: loopback, or an address of one of its interfaces. */
export function isThisHost(address: string): boolean {
  const plain = unmapped(address);
  if (isIP(plain) === 0) return false;
  if (/^127\./.test(plain) || plain === '::1') return true;
  return Object.values(networkInterfaces()).some((addresses) => (addresses ?? []).some((entry) => entry.address === plain));
}

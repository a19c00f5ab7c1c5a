// Envoy's admin API of a proxy (docs/xds.md, Inspection): `/stats` and `/clusters`, reached at
// the address the proxy's admin listens on. A proxy on a loopback address serves it there in
// plain HTTP.
import { request } from 'node:http';

/** The admin API could not be reached or answered with an error. */
export class AdminUnavailable extends Error {}

const CONNECT_TIMEOUT_MS = 3000;
const TOTAL_TIMEOUT_MS = 5000;

/** GETs one admin path; resolves with Envoy's body and content type. */
export function fetchAdmin(host: string, port: number, path: string): Promise<{ body: string; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, method: 'GET', timeout: CONNECT_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new AdminUnavailable(`envoy response [${res.statusCode ?? 0} ${res.statusMessage ?? ''}] [${body.trim()}]`));
        else resolve({ body, contentType: String(res.headers['content-type'] ?? 'text/plain') });
      });
      res.on('error', (error) => reject(new AdminUnavailable(error.message)));
    });
    const total = setTimeout(() => req.destroy(new Error(`no answer within ${TOTAL_TIMEOUT_MS / 1000}s`)), TOTAL_TIMEOUT_MS);
    req.on('timeout', () => req.destroy(new Error(`could not connect within ${CONNECT_TIMEOUT_MS / 1000}s`)));
    req.on('error', (error) => reject(new AdminUnavailable(`unable to send GET to ${path.replace(/^\//, '').split('?')[0]}: ${error.message}`)));
    req.on('close', () => clearTimeout(total));
    req.end();
  });
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export const isLoopback = (address: string): boolean => LOOPBACK.test(address);

// Fetches the Envoy bootstrap from the control plane's `POST /bootstrap`, retrying while the
// control plane is away or does not know the proxy yet, and with a growing wait after a refusal (4xx).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from './log.js';

export interface BootstrapRequest {
  mesh: string;
  name: string;
  proxyType: string;
  dataplaneToken?: string;
  dataplaneTokenPath?: string;
  dataplaneResource?: string;
  version: { meshDp: Record<string, unknown>; envoy: { version: string; build: string; meshDpCompatible: boolean } };
  caCert: string;
  dynamicMetadata: Record<string, string>;
  /** Where the control plane puts the proxy's DNS listener (none when absent). */
  dnsPort?: number;
  operatingSystem: string;
  features: string[];
  resources: { maxHeapSizeBytes: number };
  accessLogSocketPath: string;
  metricsResources: { socketPath: string; certPath: string; keyPath: string };
}

export interface BootstrapResponse {
  /** The Envoy bootstrap (YAML or JSON text). */
  bootstrap: string;
  meshSidecarConfiguration?: {
    networking?: { isUsingTransparentProxy?: boolean };
    /** The applications whose metrics join the proxy's. */
    metrics?: { aggregate?: Array<{ name: string; address: string; port: number; path: string }> };
  };
}

/** The control plane's refusal (4xx), still there when the retries are over. */
export class BootstrapRefused extends Error {}

interface Reply {
  status: number;
  body: string;
}

function post(url: URL, body: string, caCert: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const options = {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      timeout: 10_000,
      // Without a CA the runner cannot verify the control plane (it warns, as the reference does).
      ...(https ? (caCert ? { ca: caCert, minVersion: 'TLSv1.2' as const } : { rejectUnauthorized: false, minVersion: 'TLSv1.2' as const }) : {}),
    };
    const req = (https ? httpsRequest : httpRequest)(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10s')));
    req.on('error', reject);
    req.end(body);
  });
}

export interface FetchOptions {
  cpAddress: string;
  caCert: string;
  /** The wait between attempts while the control plane is away, and the first wait after a refusal. */
  backoffMs: number;
  /** How long to keep trying; the last attempt is made when this is over. */
  maxDurationMs: number;
  log: Logger;
}

/** Waits after refusals in a row double up to this (or up to `backoffMs` when that is longer). */
const REFUSAL_BACKOFF_CAP_MS = 30_000;

type Attempt = { bootstrap: BootstrapResponse } | { refusal: string; status: number } | { problem: string };

async function attempt(url: URL, body: string, caCert: string): Promise<Attempt> {
  try {
    const reply = await post(url, body, caCert);
    if (reply.status === 200) {
      const parsed = JSON.parse(reply.body) as { bootstrap?: string } & Omit<BootstrapResponse, 'bootstrap'>;
      return { bootstrap: { ...parsed, bootstrap: Buffer.from(parsed.bootstrap ?? '', 'base64').toString('utf8') } };
    }
    if (reply.status === 404 && reply.body === '') return { problem: 'Dataplane entity is not yet found in the Control Plane' };
    if (reply.status === 404 && reply.body === '404: Page Not Found') {
      return {
        status: reply.status,
        refusal:
          'There is no /bootstrap endpoint for provided CP address. Double check if the address passed to the CP has a DP Server port (5678 by default), not HTTP API (5681 by default)',
      };
    }
    if (reply.status >= 400 && reply.status < 500) return { status: reply.status, refusal: reply.body || `the control plane refused the request (${reply.status})` };
    return { problem: `unexpected status code: ${reply.status}` };
  } catch (error) {
    return { problem: `request to bootstrap server failed: ${(error as Error).message}` };
  }
}

/**
 * Asks for the bootstrap until it comes or `maxDurationMs` is over. While the control plane is
 * away, attempts come every `backoffMs`; after refusals in a row the wait doubles, since their
 * cause (a mesh not created or not synced yet) takes an operator or a zone sync to go away.
 */
export async function fetchBootstrap(request: BootstrapRequest, options: FetchOptions): Promise<BootstrapResponse> {
  const url = new URL('/bootstrap', options.cpAddress);
  const body = JSON.stringify(request, null, 1);
  const deadline = Date.now() + options.maxDurationMs;
  let refusalsInARow = 0;
  for (;;) {
    options.log('info', 'trying to fetch bootstrap configuration from the Control Plane');
    const outcome = await attempt(url, body, options.caCert);
    if ('bootstrap' in outcome) return outcome.bootstrap;
    const remaining = deadline - Date.now();
    const refused = 'refusal' in outcome;
    refusalsInARow = refused ? refusalsInARow + 1 : 0;
    if (remaining <= 0) throw refused ? new BootstrapRefused(outcome.refusal) : new Error(`could not fetch the bootstrap configuration: ${outcome.problem}`);
    const backoff = refused ? Math.min(options.backoffMs * 2 ** (refusalsInARow - 1), Math.max(REFUSAL_BACKOFF_CAP_MS, options.backoffMs)) : options.backoffMs;
    const wait = Math.min(remaining, backoff);
    if (refused) {
      options.log('error', `the control plane refused the bootstrap request: ${outcome.refusal}; retrying in ${inSeconds(wait)}`, { status: outcome.status });
    } else {
      options.log('info', `could not fetch bootstrap configuration (${outcome.problem}); retrying in ${inSeconds(wait)}`);
    }
    await sleep(wait);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const inSeconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;

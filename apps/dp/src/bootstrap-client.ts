// Fetches the Envoy bootstrap from the control plane's `POST /bootstrap`, retrying while the
// control plane is away or does not know the proxy yet, giving up at once on a refusal (4xx).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

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
  operatingSystem: string;
  features: string[];
  resources: { maxHeapSizeBytes: number };
  accessLogSocketPath: string;
  metricsResources: { socketPath: string; certPath: string; keyPath: string };
}

export interface BootstrapResponse {
  /** The Envoy bootstrap (YAML or JSON text). */
  bootstrap: string;
  meshSidecarConfiguration?: { networking?: { isUsingTransparentProxy?: boolean }; metrics?: { aggregate?: unknown[] } };
}

/** A refusal: retrying cannot help. */
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
  backoffMs: number;
  maxDurationMs: number;
  log: (message: string) => void;
}

export async function fetchBootstrap(request: BootstrapRequest, options: FetchOptions): Promise<BootstrapResponse> {
  const url = new URL('/bootstrap', options.cpAddress);
  const body = JSON.stringify(request, null, 1);
  const deadline = Date.now() + options.maxDurationMs;
  for (;;) {
    options.log('trying to fetch bootstrap configuration from the Control Plane');
    let problem: string;
    try {
      const reply = await post(url, body, options.caCert);
      if (reply.status === 200) {
        const parsed = JSON.parse(reply.body) as { bootstrap?: string } & Omit<BootstrapResponse, 'bootstrap'>;
        return { ...parsed, bootstrap: Buffer.from(parsed.bootstrap ?? '', 'base64').toString('utf8') };
      }
      if (reply.status === 404 && reply.body === '') {
        problem = 'Dataplane entity is not yet found in the Control Plane';
      } else if (reply.status === 404 && reply.body === '404: Page Not Found') {
        throw new BootstrapRefused(
          'There is no /bootstrap endpoint for provided CP address. Double check if the address passed to the CP has a DP Server port (5678 by default), not HTTP API (5681 by default)',
        );
      } else if (reply.status >= 400 && reply.status < 500) {
        throw new BootstrapRefused(reply.body || `the control plane refused the request (${reply.status})`);
      } else {
        problem = `unexpected status code: ${reply.status}`;
      }
    } catch (error) {
      if (error instanceof BootstrapRefused) throw error;
      problem = `request to bootstrap server failed: ${(error as Error).message}`;
    }
    if (Date.now() + options.backoffMs > deadline) throw new Error(`could not fetch the bootstrap configuration: ${problem}`);
    options.log(`could not fetch bootstrap configuration (${problem}); retrying in ${options.backoffMs / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, options.backoffMs));
  }
}

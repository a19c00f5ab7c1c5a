// What the end-to-end tests of the data plane server share: JSON calls to a control plane's API
// and the sidecars they register.
import { expect } from 'vitest';
import { AdsClient, TYPE } from './ads-client.js';
import { freePort, startControlPlane } from './process.js';

/** A JSON call to the API at `base`: the status, the body as text, and parsed when it is JSON. */
export async function callApi(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : undefined };
}

/** Creates or replaces a resource through the API at `base`, expecting 200 or 201. */
export async function putResource(base: string, path: string, body: Record<string, unknown>): Promise<void> {
  const reply = await callApi(base, 'PUT', path, body);
  expect([200, 201], `PUT ${path}: ${reply.text}`).toContain(reply.status);
}

/** A sidecar of `service` at `address` (inbound 8080, HTTP), calling `outbound` from port 10001 on. */
export const sidecar = (name: string, address: string, service: string, outbound: string[] = [], extra: Record<string, string> = {}) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: {
    address,
    inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http', ...extra } }],
    outbound: outbound.map((to, at) => ({ port: 10001 + at, tags: { 'mesh.io/service': to } })),
  },
});

/** A zone control plane whose data plane server listens in plain text on a free port, with that address. */
export async function startWithPlaintextDpServer(env: Record<string, string>) {
  const dpPort = await freePort();
  const cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(dpPort), MESH_DP_SERVER_TLS_ENABLED: 'false', ...env } });
  return { cp, dpAddress: `127.0.0.1:${dpPort}` };
}

/** An ADS client for each of these proxies of `mesh`, each once it got its first clusters: the proxies are online. */
export async function connectProxies(dpAddress: string, mesh: string, names: readonly string[]): Promise<AdsClient[]> {
  const clients: AdsClient[] = [];
  for (const name of names) {
    const client = new AdsClient({ address: dpAddress, nodeId: `${mesh}.${name}` });
    client.request({ typeUrl: TYPE.cluster });
    await client.next(TYPE.cluster, 1);
    clients.push(client);
  }
  return clients;
}

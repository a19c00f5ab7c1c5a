// Serving the web GUI (docs/gui.md): a built app on disk, served under its base path with the
// history fallback, the cache lifetimes of hashed and unhashed files, and the page's security policy.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GuiOptions } from './gui.js';
import { startApi, type TestApi } from './testing.js';

const INDEX = '<!doctype html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8">\n    <script type="module" crossorigin src="./assets/index-Bq3x9Z1a.js"></script>\n  </head>\n  <body><div id="app"></div></body>\n</html>\n';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});\n`;

let root: string;
let build: string;
let api: TestApi | undefined;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'mesh-gui-test-'));
  build = join(root, 'dist');
  mkdirSync(join(build, 'assets'), { recursive: true });
  writeFileSync(join(build, 'index.html'), INDEX);
  writeFileSync(join(build, 'assets', 'index-Bq3x9Z1a.js'), SCRIPT);
  writeFileSync(join(build, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  // Beside the build, where no request may reach.
  writeFileSync(join(root, 'secret.txt'), 'not for the web');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const served = (overrides: Partial<GuiOptions> = {}): GuiOptions => ({ basePath: '/gui', url: '/gui', apiUrl: '', app: { directory: build }, ...overrides });
const start = async (gui?: GuiOptions) => (api = await startApi({ defaultMesh: false, ...(gui ? { gui } : {}) }));

/** A request path sent as written: fetch would resolve `..` before sending it. */
function rawGet(url: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: 'GET', path }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

const configOf = (html: string) => JSON.parse(/<script type="application\/json" id="mesh-gui-config">(.*?)<\/script>/.exec(html)![1]!) as Record<string, unknown>;

describe('the GUI, when built and enabled', () => {
  it('answers its page at the base path and at every deep link, told where it lives, never cached', async () => {
    const cp = await start(served());
    for (const path of ['/gui', '/gui/', '/gui/meshes/default/data-plane-proxies/web-1', '/gui/index.html']) {
      const reply = await cp.get(path);
      expect(reply.status, path).toBe(200);
      expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(reply.headers.get('cache-control')).toBe('no-cache');
      expect(reply.text).toContain('<base href="/gui/">');
      expect(reply.text).toContain('src="./assets/index-Bq3x9Z1a.js"');
      expect(configOf(reply.text)).toEqual({ product: 'Mesh', version: '0.0.0', mode: 'standalone', apiUrl: '', basePath: '/gui' });
    }
  });

  it('serves hashed assets for a year, other files unhashed and revalidated, compressed when the client accepts gzip', async () => {
    const cp = await start(served());
    const script = await fetch(`${cp.url}/gui/assets/index-Bq3x9Z1a.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.headers.get('content-encoding')).toBeNull();
    expect(await script.text()).toBe(SCRIPT);

    const icon = await cp.get('/gui/favicon.svg');
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.headers.get('cache-control')).toBe('no-cache');

    const zipped = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) => {
      httpRequest(`${cp.url}/gui/assets/index-Bq3x9Z1a.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ ...(res.headers['content-encoding'] ? { encoding: res.headers['content-encoding'] } : {}), body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });
    expect(zipped.encoding).toBe('gzip');
    expect(zipped.body.length).toBeLessThan(SCRIPT.length);
    expect(gunzipSync(zipped.body).toString()).toBe(SCRIPT);
  });

  it('puts every answer under a policy that allows its own origin alone: no inline script or style, no framing', async () => {
    const cp = await start(served());
    for (const path of ['/gui/', '/gui/assets/index-Bq3x9Z1a.js', '/gui/zones']) {
      const policy = (await cp.get(path)).headers.get('content-security-policy');
      expect(policy, path).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
      );
    }
  });

  it('answers a missing asset with a 404, never with the page', async () => {
    const cp = await start(served());
    const reply = await cp.get('/gui/assets/index-00000000.js');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ type: '/std-errors', status: 404, detail: 'No such file of the GUI: assets/index-00000000.js' });
  });

  it('serves no file outside its folder', async () => {
    const cp = await start(served());
    for (const path of ['/gui/../secret.txt', '/gui/..%2Fsecret.txt', '/gui/%2e%2e/secret.txt', '/gui/assets/..%2F..%2Fsecret.txt']) {
      const reply = await rawGet(cp.url, path);
      expect(reply.text, path).not.toContain('not for the web');
    }
  });

  it('refuses writes with 405 and answers HEAD', async () => {
    const cp = await start(served());
    const post = await cp.request('POST', '/gui/meshes', { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await cp.request('HEAD', '/gui/');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('is announced by GET /, and the API still answers beside it', async () => {
    const cp = await start(served());
    const index = await cp.get('/');
    expect(index.body.gui).toBe('/gui');
    expect(Object.keys(index.body)).toEqual(['hostname', 'tagline', 'product', 'version', 'instanceId', 'clusterId', 'gui', 'readOnly', 'openapi', 'docs']);
    expect((await cp.get('/meshes')).status).toBe(200);
    expect((await cp.get('/guidance')).status).toBe(404);
  });

  it('behind a reverse proxy (rootUrl), is announced there and resolves its files under that path; the API elsewhere joins the policy', async () => {
    const cp = await start(served({ basePath: '/ui', url: 'https://cp.example.com/mesh/gui', apiUrl: 'https://api.example.com:8443/mesh' }));
    expect((await cp.get('/')).body.gui).toBe('https://cp.example.com/mesh/gui');
    const page = await cp.get('/ui/meshes');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<base href="/mesh/gui/">');
    expect(configOf(page.text)).toMatchObject({ apiUrl: 'https://api.example.com:8443/mesh', basePath: '/mesh/gui' });
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self' https://api.example.com:8443;");
    expect((await cp.get('/gui/')).status).toBe(404);
  });
});

describe('the base path', () => {
  it('may not hide a path of the API', async () => {
    for (const basePath of ['/meshes', '/config', '/meshes/default']) {
      await expect(start(served({ basePath, url: basePath })), basePath).rejects.toThrow(`apiServer.gui.basePath: ${basePath} would hide the API's `);
    }
  });
});

describe('the GUI, when disabled or not built', () => {
  it('is a 404 that says why, and GET / announces none', async () => {
    for (const unavailable of ['The GUI is disabled (apiServer.gui.enabled is false)', 'The GUI is not built: build it with npm run build']) {
      const cp = await start(served({ app: { unavailable } }));
      for (const path of ['/gui', '/gui/', '/gui/meshes', '/gui/assets/index-Bq3x9Z1a.js']) {
        const reply = await cp.get(path);
        expect(reply.status, path).toBe(404);
        expect(reply.body).toMatchObject({ type: '/std-errors', status: 404, detail: unavailable });
      }
      expect((await cp.get('/')).body).not.toHaveProperty('gui');
      await cp.close();
      api = undefined;
    }
  });
});

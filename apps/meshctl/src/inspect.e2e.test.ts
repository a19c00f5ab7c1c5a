// `meshctl inspect dataplane|zoneingress|zoneegress NAME --type ...` as a user runs it: a
// subprocess against the real zone binary, with a sidecar, a zone ingress and a zone egress run
// by `mesh-dp` on real Envoy, so stats and clusters are Envoy's own answers through the control plane.
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startControlPlane, freePort } from '@mesh/zone/testing';
import { clientDataplane, type DataplaneProcess, eventually, requireEnvoy, startApp, startDataplane, startMeshDataplane } from '@mesh/zone/testing/envoy';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MESHCTL = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const run = promisify(execFile);
const envoy = requireEnvoy('meshctl inspect.e2e');

/** The repository's example templates (examples/README.md), as operators use them. */
const EXAMPLES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples', 'dataplanes');
const INGRESS = readFileSync(join(EXAMPLES, 'ingress.yaml'), 'utf8');
const EGRESS = readFileSync(join(EXAMPLES, 'egress.yaml'), 'utf8');

let cp: Awaited<ReturnType<typeof startControlPlane>>;
let configFile: string;
const apps: Server[] = [];
const proxies: DataplaneProcess[] = [];
let webPort = 0;
let webAppPort = 0;

async function meshctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MESHCTL, ...args], { env: { PATH: process.env.PATH ?? '', MESHCTL_CONFIG: configFile }, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The command's output once it succeeds: a proxy's Envoy answers only once it is connected. */
const once = (...args: string[]) => eventually(() => meshctl(...args), (result) => result.code === 0, `meshctl ${args.join(' ')} to succeed`, 90_000);

async function put(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${cp.url}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect([200, 201], await res.text()).toContain(res.status);
}

async function zoneToken(scope: string): Promise<string> {
  const res = await fetch(`${cp.url}/tokens/zone`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ zone: '', scope: [scope], validFor: '1h' }) });
  const token = await res.text();
  expect(res.status, token).toBe(200);
  return token;
}

const zoneProxy = async (template: string, name: string, proxyType: string) =>
  startDataplane({
    envoy: envoy!,
    cpAddress: `https://127.0.0.1:${cp.env.MESH_DP_SERVER_PORT}`,
    caCertFile: join(cp.workDir, 'mesh-cp.crt'),
    token: await zoneToken(proxyType),
    template,
    vars: { name, address: '127.0.0.1', advertisedAddress: '127.0.0.1', port: String(await freePort()) },
    extraArgs: ['--proxy-type', proxyType],
  });

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()) } });
  configFile = join(mkdtempSync(join(tmpdir(), 'meshctl-inspect-')), 'config');
  writeFileSync(configFile, stringify({ contexts: [{ name: 'zone', controlPlane: 'zone' }], controlPlanes: [{ name: 'zone', coordinates: { apiServer: { url: cp.url } } }], currentContext: 'zone' }));
  await put('/meshes/default/meshtimeouts/web-timeouts', {
    type: 'MeshTimeout',
    mesh: 'default',
    name: 'web-timeouts',
    spec: { targetRef: { kind: 'MeshService', name: 'web' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '3s' } }] },
  });
  // Stored, never run: a proxy whose Envoy cannot be asked.
  await put('/meshes/default/dataplanes/idle-1', { type: 'Dataplane', mesh: 'default', name: 'idle-1', networking: { address: '127.0.0.1', inbound: [{ port: 7070, tags: { 'mesh.io/service': 'idle' } }] } });
  const web = await startApp('web');
  apps.push(web.server);
  webPort = await freePort();
  webAppPort = web.port;
  proxies.push(
    await startMeshDataplane(cp, envoy, clientDataplane('web', { backend: 'backendPort' }), { name: 'web-1', port: String(webPort), appPort: String(webAppPort), backendPort: String(await freePort()) }),
    await zoneProxy(INGRESS, 'ingress-1', 'ingress'),
    await zoneProxy(EGRESS, 'egress-1', 'egress'),
  );
}, 180_000);

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.stop()));
  for (const app of apps) app.close();
  await cp?.stop();
});

describe.skipIf(!envoy)('meshctl inspect of one proxy', () => {
  it("prints a sidecar's Envoy stats and clusters, as Envoy gives them", async () => {
    const stats = await once('inspect', 'dataplane', 'web-1', '--type', 'stats');
    expect(stats.stdout).toMatch(/^cluster_manager\.cds\.update_success: [1-9]/m);
    const clusters = await once('inspect', 'dataplane', 'web-1', '--type', 'clusters');
    expect(clusters.stdout).toMatch(/^backend::observability_name::backend$/m);
    expect(clusters.stdout).toMatch(/^mesh:envoy:admin::/m);
  });

  it('prints the configuration dump as JSON, or YAML with -o yaml', async () => {
    const dump = JSON.parse((await once('inspect', 'dataplane', 'web-1', '--type', 'config-dump')).stdout);
    const types = dump.configs.map((config: { '@type': string }) => config['@type']);
    expect(types).toContain('type.googleapis.com/envoy.admin.v3.ClustersConfigDump');
    const listeners = dump.configs.find((config: { '@type': string }) => config['@type'] === 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump');
    expect(listeners.dynamicListeners.map((entry: { name: string }) => entry.name)).toContain(`inbound:127.0.0.1:${webPort}`);
    expect(parse((await meshctl('inspect', 'dataplane', 'web-1', '--type', 'config-dump', '-o', 'yaml')).stdout)).toEqual(dump);
  });

  it('lists the matched policies per attachment, as the reference does, or the API body with -o json', async () => {
    const policies = await meshctl('inspect', 'dataplane', 'web-1');
    expect(policies.code).toBe(0);
    const blocks = policies.stdout.split('\n\n');
    expect(blocks[0]).toBe('DATAPLANE:\n  MeshTimeout\n    web-timeouts');
    expect(blocks).toContainEqual(expect.stringMatching(new RegExp(`^INBOUND 127\\.0\\.0\\.1:${webPort}:${webAppPort}\\(web\\):\\n  TrafficPermission\\n    allow-all-default$`)));
    expect(blocks).toContainEqual(expect.stringMatching(/^OUTBOUND 127\.0\.0\.1:\d+\(backend\):\n( {2}\w+\n {4}[\w-]+\n?)+$/));
    const body = JSON.parse((await meshctl('inspect', 'dataplane', 'web-1', '--type', 'policies', '-o', 'json')).stdout);
    expect(body).toMatchObject({ kind: 'SidecarDataplane', items: expect.arrayContaining([{ type: 'dataplane', matchedPolicies: { MeshTimeout: [expect.objectContaining({ name: 'web-timeouts' })] } }]) });
  });

  it('prints the rules of the targetRef policies as YAML, or JSON with -o json', async () => {
    const rules = parse((await meshctl('inspect', 'dataplane', 'web-1', '--type', 'rules')).stdout);
    expect(rules.items).toContainEqual(expect.objectContaining({ type: 'destinationSubset', policyType: 'MeshTimeout', conf: { connectionTimeout: '3s' }, origins: [{ mesh: 'default', name: 'web-timeouts' }] }));
    expect(JSON.parse((await meshctl('inspect', 'dataplane', 'web-1', '--type', 'rules', '-o', 'json')).stdout)).toEqual(rules);
  });

  it("prints a zone ingress's and a zone egress's stats, clusters and configuration dump", async () => {
    for (const command of ['zoneingress', 'zoneegress']) {
      const name = command === 'zoneingress' ? 'ingress-1' : 'egress-1';
      expect((await once('inspect', command, name, '--type', 'stats')).stdout).toMatch(/^cluster_manager\.cds\.update_success: [1-9]/m);
      expect((await once('inspect', command, name, '--type', 'clusters')).stdout).toMatch(/^mesh:envoy:admin::/m);
      expect(JSON.parse((await once('inspect', command, name)).stdout).configs.length).toBeGreaterThan(0);
    }
    const policies = await meshctl('inspect', 'zoneegress', 'egress-1', '--type', 'policies');
    expect(policies.code).toBe(1);
    expect(policies.stderr).toContain("argument 'policies' is invalid. Allowed choices are config-dump, stats, clusters.");
  });

  it('says so, and fails, for a proxy that does not exist or whose Envoy is not connected', async () => {
    expect(await meshctl('inspect', 'dataplane', 'nope', '--type', 'stats')).toEqual({ code: 1, stdout: '', stderr: 'Error: there is no Dataplane with name "nope" in mesh "default"\n' });
    expect(await meshctl('inspect', 'dataplane', 'web-1', '-m', 'shop')).toEqual({ code: 1, stdout: '', stderr: 'Error: there is no Dataplane with name "web-1" in mesh "shop"\n' });
    expect(await meshctl('inspect', 'zoneingress', 'nope')).toEqual({ code: 1, stdout: '', stderr: 'Error: there is no Zone Ingress with name "nope"\n' });
    for (const type of ['stats', 'clusters']) {
      expect(await meshctl('inspect', 'dataplane', 'idle-1', '--type', type)).toEqual({
        code: 1,
        stdout: '',
        stderr: 'Error: Could not execute admin operation (the proxy is not connected to this control plane)\n',
      });
    }
  });
});

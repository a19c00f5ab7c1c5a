// meshctl as a user runs it: a subprocess against the real zone binary, with its own config file.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { startControlPlane } from '@mesh/zone/testing';
import { decodeJwt } from 'jose';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MESHCTL = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const run = promisify(execFile);

let cp: Awaited<ReturnType<typeof startControlPlane>>;
let dir: string;
let adminToken: string;

async function meshctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MESHCTL, ...args], { env: { PATH: process.env.PATH ?? '', MESHCTL_CONFIG: join(dir, 'config'), HOME: dir } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const RESOURCES = `
type: TrafficRoute
mesh: default
name: web-to-{{ service }}
sources: [{ match: { mesh.io/service: web } }]
destinations: [{ match: { mesh.io/service: '{{ service }}' } }]
conf: { destination: { mesh.io/service: '{{ service }}' } }
---
type: Dataplane
mesh: default
name: web-1
networking:
  address: 10.0.0.1
  inbound: [{ port: 8080, tags: { mesh.io/service: web, version: v1 } }]
  outbound: [{ port: 10001, service: '{{ service }}' }]
`;

beforeAll(async () => {
  // The client counts as remote: every command authenticates with a token, as it would against a real deployment.
  cp = await startControlPlane({ env: { MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false' } });
  dir = mkdtempSync(join(tmpdir(), 'meshctl-'));
  const store = new SqliteResourceStore({ path: join(cp.workDir, 'mesh.db') });
  const secret = await store.get({ type: 'GlobalSecret', mesh: '', name: 'admin-user-token' });
  adminToken = Buffer.from((JSON.parse(secret!.spec) as { data: string }).data, 'base64').toString();
  await store.close();
}, 60_000);
afterAll(async () => {
  await cp?.stop();
});

describe('meshctl', () => {
  it('adds a control plane context and lists it', async () => {
    const add = ['config', 'control-planes', 'add', '--name', 'test', '--address', cp.url, '--auth-type', 'tokens', '--auth-conf', `token=${adminToken}`];
    expect(await meshctl(...add)).toMatchObject({ code: 0, stdout: expect.stringContaining('switched active Control Plane to "test"') });
    const listed = (await meshctl('config', 'control-planes', 'list')).stdout.split('\n');
    expect(listed[0]).toMatch(/^ACTIVE\s+NAME\s+ADDRESS$/);
    expect(listed).toContainEqual(expect.stringMatching(new RegExp(`^\\*\\s+test\\s+${cp.url}$`)));
    expect((await meshctl(...add)).stderr).toContain('already exists');
    expect((await meshctl('config', 'view')).stdout).toContain('currentContext: test');
  });

  it("prints its version and the control plane's, or says on stderr that it cannot reach one", async () => {
    const about = (await (await fetch(`${cp.url}/`)).json()) as { product: string; version: string };
    expect(await meshctl('version')).toEqual({ code: 0, stdout: `Client: Mesh ${about.version}\nServer: ${about.product} ${about.version}\n`, stderr: '' });
    const away = join(dir, 'away.yaml');
    writeFileSync(away, stringify({ contexts: [{ name: 'away', controlPlane: 'away' }], controlPlanes: [{ name: 'away', coordinates: { apiServer: { url: 'http://127.0.0.1:9' } } }], currentContext: 'away' }));
    expect(await meshctl('version', '--config-file', away)).toEqual({
      code: 0,
      stdout: `Client: Mesh ${about.version}\n`,
      stderr: 'Unable to connect to control plane: could not reach the control plane at http://127.0.0.1:9 (ECONNREFUSED)\n',
    });
  });

  it('applies a multi-document file with a variable, then gets it in every format', async () => {
    const file = join(dir, 'resources.yaml');
    writeFileSync(file, RESOURCES);
    const applied = await meshctl('apply', '-f', file, '-v', 'service=backend');
    expect(applied).toMatchObject({ code: 0, stdout: 'TrafficRoute "web-to-backend" created\nDataplane "web-1" created\n' });
    expect((await meshctl('apply', '-f', file, '-v', 'service=backend')).stdout).toBe('TrafficRoute "web-to-backend" updated\nDataplane "web-1" updated\n');

    const tableOut = (await meshctl('get', 'dataplanes')).stdout.split('\n');
    expect(tableOut[0]).toMatch(/^MESH\s+NAME\s+TAGS\s+AGE$/);
    expect(tableOut[1]).toMatch(/^default\s+web-1\s+mesh\.io\/service=web mesh\.io\/zone=.*|^default\s+web-1\s+mesh\.io\/service=web version=v1\s+\d+s$/);
    const json = JSON.parse((await meshctl('get', 'traffic-routes', '-o', 'json')).stdout);
    expect(json.items.map((r: { name: string }) => r.name)).toContain('web-to-backend');
    const one = parse((await meshctl('get', 'traffic-route', 'web-to-backend', '-o', 'yaml')).stdout);
    expect(one).toMatchObject({ type: 'TrafficRoute', name: 'web-to-backend', destinations: [{ match: { 'mesh.io/service': 'backend' } }] });
  });

  it('round-trips YAML: what get prints, apply accepts back unchanged', async () => {
    const printed = (await meshctl('get', 'traffic-route', 'web-to-backend', '-o', 'yaml')).stdout;
    const file = join(dir, 'round-trip.yaml');
    writeFileSync(file, printed);
    expect(await meshctl('apply', '-f', file)).toMatchObject({ code: 0, stdout: 'TrafficRoute "web-to-backend" updated\n' });
    const after = parse((await meshctl('get', 'traffic-route', 'web-to-backend', '-o', 'yaml')).stdout);
    const { modificationTime: _before, ...kept } = parse(printed);
    expect(after).toMatchObject(kept);
  });

  it('applies, gets and deletes a targetRef policy by its kind\'s names, its spec under `spec`', async () => {
    const file = join(dir, 'timeout.yaml');
    writeFileSync(
      file,
      `type: MeshTimeout
mesh: default
name: web-timeouts
spec:
  targetRef: {kind: MeshService, name: web}
  to: [{targetRef: {kind: Mesh}, default: {idleTimeout: 1h, http: {requestTimeout: 15s}}}]
`,
    );
    expect(await meshctl('apply', '-f', file)).toMatchObject({ code: 0, stdout: 'MeshTimeout "web-timeouts" created\n' });
    const table = (await meshctl('get', 'meshtimeouts')).stdout.split('\n');
    expect(table[0]).toMatch(/^MESH\s+NAME\s+AGE$/);
    expect(table[1]).toMatch(/^default\s+web-timeouts\s/);
    const printed = parse((await meshctl('get', 'meshtimeout', 'web-timeouts', '-o', 'yaml')).stdout);
    expect(printed).toMatchObject({ type: 'MeshTimeout', spec: { to: [{ default: { idleTimeout: '1h0m0s', http: { requestTimeout: '15s' } } }] } });

    writeFileSync(file, 'type: MeshTimeout\nmesh: default\nname: bad\nspec: {targetRef: {kind: MeshService}}\n');
    const refused = await meshctl('apply', '-f', file);
    expect(refused.stdout).toContain('* spec.targetRef.name: must be set with kind MeshService');
    expect(await meshctl('delete', 'meshtimeout', 'web-timeouts')).toMatchObject({ code: 0, stdout: 'deleted MeshTimeout "web-timeouts"\n' });
  });

  it('follows next to list everything, or shows one page', async () => {
    for (let i = 0; i < 3; i++) writeFileSync(join(dir, `r${i}.yaml`), RESOURCES.split('---')[0]!.replaceAll('{{ service }}', `svc-${i}`));
    for (let i = 0; i < 3; i++) await meshctl('apply', '-f', join(dir, `r${i}.yaml`));
    const all = JSON.parse((await meshctl('get', 'traffic-routes', '-o', 'json')).stdout);
    const onePage = JSON.parse((await meshctl('get', 'traffic-routes', '-o', 'json', '--size', '2')).stdout);
    expect(all.items.length).toBe(all.total);
    expect(onePage.items.length).toBe(2);
    expect(onePage.next).toMatch(/offset=~[\w-]+/);
  });

  it('inspects dataplanes, meshes and a policy', async () => {
    const dataplanes = (await meshctl('inspect', 'dataplanes')).stdout;
    expect(dataplanes.split('\n')[0]).toMatch(/^MESH\s+NAME\s+TAGS\s+STATUS\s+LAST CONNECTED AGO/);
    expect(dataplanes).toMatch(/web-1 .* Offline /);
    expect((await meshctl('inspect', 'meshes')).stdout).toMatch(/^NAME\s+DATAPLANES\s+POLICIES\s+SERVICES\ndefault\s+0\/1/);
    expect((await meshctl('inspect', 'traffic-route', 'web-to-backend')).stdout).toMatch(/^DATAPLANE\nweb-1\n$/);
    expect((await meshctl('inspect', 'zone-ingresses')).stdout).toMatch(/^NAME\s+STATUS\s+LAST CONNECTED AGO\s+LAST UPDATED AGO\n$/);
    const policies = JSON.parse((await meshctl('inspect', 'dataplane', 'web-1', '--type', 'policies', '-o', 'json')).stdout);
    expect(policies.kind).toBe('SidecarDataplane');
  });

  it('generates tokens the API accepts, and a signing key', async () => {
    const token = (await meshctl('generate', 'dataplane-token', '--name', 'web-1', '--tag', 'mesh.io/service=web', '--valid-for', '24h')).stdout.trim();
    expect(decodeJwt(token)).toMatchObject({ Name: 'web-1', Mesh: 'default', Tags: { 'mesh.io/service': ['web'] } });
    const user = (await meshctl('generate', 'user-token', '--name', 'jane', '--group', 'team-a', '--valid-for', '1h')).stdout.trim();
    // A context with jane's token: the API knows her (a token it refused would be a 401), and she is no admin.
    await meshctl('config', 'control-planes', 'add', '--name', 'jane', '--address', cp.url, '--auth-type', 'tokens', '--auth-conf', `token=${user}`);
    expect((await meshctl('get', 'meshes')).code).toBe(0);
    const secrets = await meshctl('get', 'secrets');
    expect([secrets.code, secrets.stderr]).toEqual([1, expect.stringContaining('Error: Access Denied (user "jane/team-a,mesh-system:authenticated" cannot access the resource of type "Secret")')]);
    await meshctl('config', 'control-planes', 'switch', '--name', 'test');
    expect(Buffer.from((await meshctl('generate', 'signing-key')).stdout.trim(), 'base64').toString()).toContain('BEGIN RSA PRIVATE KEY');
  });

  it('watches: prints the list, then each change as it arrives, as table rows or JSON lines', async () => {
    const watching = (...args: string[]) => {
      const child = spawn(process.execPath, [MESHCTL, ...args], { env: { PATH: process.env.PATH ?? '', MESHCTL_CONFIG: join(dir, 'config'), HOME: dir } });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const until = async (pattern: RegExp) => {
        const deadline = Date.now() + 30_000;
        while (!pattern.test(stdout)) {
          if (Date.now() > deadline) throw new Error(`meshctl printed: ${stdout}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      return { child, until, lines: () => stdout.trim().split('\n') };
    };
    const admin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    const dataplane = (name: string) => ({ type: 'Dataplane', mesh: 'default', name, networking: { address: '10.0.0.2', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'api' } }] } });
    const rows = watching('get', 'dataplanes', '--watch');
    let lines: ReturnType<typeof watching> | undefined;
    try {
      await rows.until(/web-1/);
      expect(rows.lines()[0]).toMatch(/^MESH\s+NAME\s+TAGS\s+AGE$/);
      expect((await fetch(`${cp.url}/meshes/default/dataplanes/api-1`, { method: 'PUT', headers: admin, body: JSON.stringify(dataplane('api-1')) })).status).toBe(201);
      await rows.until(/api-1/);
      expect(rows.lines().at(-1)).toMatch(/^default\s+api-1\s+mesh\.io\/service=api\s+\d+s$/);
      // Watching one resource starts with its current state, so the delete below is a live change
      // only once that state has been printed (the watcher's start is not timed against the writes).
      lines = watching('get', 'dataplane', 'api-1', '--watch', '-o', 'json');
      await lines.until(/"put"/);
      expect((await fetch(`${cp.url}/meshes/default/dataplanes/api-1`, { method: 'DELETE', headers: admin })).status).toBe(200);
      await rows.until(/deleted/);
      expect(rows.lines().at(-1)).toMatch(/^default\s+api-1\s+mesh\.io\/service=api\s+deleted$/);
      await lines.until(/"delete"/);
      const events = lines.lines().map((line) => JSON.parse(line) as { event: string; name: string; resource?: { networking: unknown } });
      expect(events.map((e) => `${e.event} ${e.name}`)).toEqual(['put api-1', 'delete api-1']);
      expect(events[0]!.resource).toMatchObject({ type: 'Dataplane', name: 'api-1', networking: { address: '10.0.0.2' } });
    } finally {
      rows.child.kill();
      lines?.child.kill();
    }
  }, 60_000);

  it('shows API errors with their causes, deletes, and reports an unreachable control plane in one line', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'type: TrafficRoute\nmesh: default\nname: bad\n');
    const refused = await meshctl('apply', '-f', file);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('TrafficRoute "bad" refused:\nError: Could not process a resource (Resource is not valid)\n* ');
    expect(await meshctl('delete', 'traffic-route', 'web-to-backend')).toMatchObject({ code: 0, stdout: 'deleted TrafficRoute "web-to-backend"\n' });
    expect((await meshctl('get', 'traffic-route', 'web-to-backend')).code).toBe(1);
    await meshctl('config', 'control-planes', 'add', '--name', 'gone', '--address', 'http://127.0.0.1:9', '--overwrite');
    const unreachable = await meshctl('config', 'control-planes', 'add', '--name', 'gone', '--address', 'http://127.0.0.1:9', '--overwrite');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Error: could not reach the control plane at http:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\)$/)]);
  });

  it('prints help for every command and a completion script', async () => {
    expect((await meshctl('get', '--help')).stdout).toContain('traffic-routes');
    expect((await meshctl('completion', 'bash')).stdout).toContain('complete -F _meshctl meshctl');
  });
});

// The binary's own command line: version, help, the reference's `run` habit, the defaults
// reference, and a misspelt MESH_* variable refused at start.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { BINARIES, startControlPlane } from './testing/process.js';

const run = promisify(execFile);
const zone = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [BINARIES['mesh-zone'], ...args], { env: { PATH: process.env.PATH ?? '', ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

describe('mesh-zone command line', () => {
  it('prints its version and a help that names the environment variables', async () => {
    expect((await zone(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = (await zone(['--help'])).stdout;
    expect(help).toContain('run [options]');
    expect(help).toContain('MESH_API_SERVER_HTTP_PORT');
    expect((await zone(['run', '--help'])).stdout).toContain('--config-file <file>');
  });

  it('prints the default configuration as YAML with the variable of each key', async () => {
    const printed = (await zone(['config', 'print-defaults'])).stdout;
    expect(printed).toContain('port: 5681 # MESH_API_SERVER_HTTP_PORT');
    expect(parse(printed)).toMatchObject({ mode: 'standalone', apiServer: { http: { port: 5681 } }, store: { type: 'sqlite' } });
  });

  it('refuses to start with a MESH_* variable that names no configuration key', async () => {
    const started = await zone(['run'], { MESH_API_SERVR_HTTP_PORT: '6681', MESH_GENERAL_WORK_DIR: '/tmp' });
    expect(started.code).toBe(1);
    expect(started.stdout + started.stderr).toContain('MESH_API_SERVR_HTTP_PORT: names no configuration key');
  });
});

describe('a running mesh-zone', () => {
  it('says where it is on stderr, and counts requests by route, store operations, resources by kind and proxies by status in /metrics', async () => {
    const cp = await startControlPlane();
    try {
      expect(cp.output()).toMatch(/mesh-zone .* is running \(standalone\)/);
      expect(cp.output()).toContain(`API          ${cp.url}`);
      const metrics = async () => (await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/metrics`)).text();
      const count = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
      const ROUTE_COUNT = /api_server_http_request_duration_seconds_count\{handler="\/meshes\/\{mesh\}\/traffic-routes\/\{name\}",method="PUT",code="201"\} (\d+)/;
      // The reference's store histogram: `store` by operation and resource type.
      const STORE_CREATES = /^store_count\{operation="create",resource_type="TrafficRoute"\} (\d+)$/m;
      const STORE_READS = /^store_count\{operation="get",resource_type="Mesh"\} (\d+)$/m;
      const before = await metrics();
      expect(before).toContain('process_resident_memory_bytes');
      expect(before).toContain('# TYPE store histogram');
      expect(before).toMatch(/resources_count\{resource_type="Mesh",mesh=""\} 1/);
      expect(before).toMatch(/dataplanes\{status="online"\} 0/);
      for (const name of ['a', 'b']) {
        const body = { type: 'TrafficRoute', mesh: 'default', name, sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }], conf: { destination: { 'mesh.io/service': '*' } } };
        await fetch(`${cp.url}/meshes/default/traffic-routes/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      }
      const after = await metrics();
      expect(count(after, ROUTE_COUNT) - count(before, ROUTE_COUNT)).toBe(2);
      expect(count(after, STORE_CREATES) - count(before, STORE_CREATES)).toBe(2);
      expect(after).toMatch(/^store_bucket\{le="\+Inf",operation="create",resource_type="TrafficRoute"\} \d+$/m);
      expect(after).toMatch(/^store_sum\{operation="create",resource_type="TrafficRoute"\} \d/m);
      expect(after).toMatch(/resources_count\{resource_type="TrafficRoute",mesh="default"\} 3/);
      expect(after).toMatch(/zones\{status="online"\} 0/);

      // One log line per request, carrying the caller's request id, which the answer echoes.
      const traced = await fetch(`${cp.url}/meshes/default`, { headers: { 'x-request-id': 'trace-123', authorization: 'Bearer not-logged' } });
      expect(traced.headers.get('x-request-id')).toBe('trace-123');
      // Reads are timed too.
      expect(count(await metrics(), STORE_READS)).toBeGreaterThan(count(after, STORE_READS));
      let line: string | undefined;
      for (let i = 0; i < 100 && !line; i++) {
        line = cp.output().split('\n').find((l) => l.includes('"trace-123"'));
        if (!line) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(JSON.parse(line!)).toMatchObject({ level: 30, req: { id: 'trace-123', method: 'GET', url: '/meshes/default' }, res: { statusCode: 200 } });
      expect(cp.output()).not.toContain('not-logged');
    } finally {
      await cp.stop();
    }
  }, 60_000);
});

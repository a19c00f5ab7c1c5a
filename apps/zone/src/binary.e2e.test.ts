// The binary's own command line: version, help, the reference's `run` habit, the defaults
// reference, and a misspelt MESH_* variable refused at start.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { BINARIES } from './testing/process.js';

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

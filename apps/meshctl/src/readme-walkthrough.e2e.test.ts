// The README's "The command-line client", run as written: its block by bash against the real zone
// binary, meshctl as the shell function it defines, each command printing what its comment says,
// and the client's configuration where the README says it is kept.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlane } from '@mesh/zone/testing';
import { markdownSection, REPOSITORY, runShell, shellBlocks } from '@mesh/zone/testing/walkthrough';
import { decodeJwt } from 'jose';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let cp: Awaited<ReturnType<typeof startControlPlane>>;

beforeAll(async () => {
  cp = await startControlPlane();
});
afterAll(async () => {
  await cp?.stop();
});

/** The README's address pointed at this test's control plane, and its relative path to meshctl made absolute (the test runs elsewhere). */
const localise = (text: string) =>
  text.replaceAll('http://127.0.0.1:5681', cp.url).replaceAll('node apps/meshctl/dist/main.js', `node ${join(REPOSITORY, 'apps', 'meshctl', 'dist', 'main.js')}`);

describe('README: the command-line client', () => {
  it('runs as written, each command printing what its comment says', async () => {
    const section = markdownSection('README.md', '## The command-line client');
    expect(section).toContain('MESHCTL_CONFIG');
    const [block, ...others] = shellBlocks(section);
    expect(others).toEqual([]);
    const cwd = mkdtempSync(join(tmpdir(), 'meshctl-readme-'));
    const { code, stdout, stderr } = await runShell(localise(block!), cwd);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });

    const lines = stdout.trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual(['added Control Plane "local"', 'switched active Control Plane to "local"', 'TrafficRoute "web-to-backend" created']);
    expect(lines[3]).toMatch(/^MESH\s+NAME\s+AGE$/);
    expect(lines.slice(4, 6).map((line) => line.split(/\s+/).slice(0, 2))).toEqual([
      ['default', 'route-all-default'],
      ['default', 'web-to-backend'],
    ]);
    expect(lines[6]).toBe('TrafficRoute "web-to-backend" updated');
    expect(lines[7]).toMatch(/^MESH\s+NAME\s+TAGS\s+STATUS\s+LAST CONNECTED AGO\s+CERT EXPIRATION\s+MESH-DP\s+ENVOY$/);
    expect(lines.slice(8)).toEqual(['deleted TrafficRoute "web-to-backend"']);

    expect(parse(readFileSync(join(cwd, 'route.yaml'), 'utf8'))).toMatchObject({ type: 'TrafficRoute', name: 'web-to-backend', conf: { destination: { 'mesh.io/service': 'backend' } } });
    expect(decodeJwt(readFileSync(join(cwd, 'web-1.token'), 'utf8'))).toMatchObject({ Name: 'web-1', Mesh: 'default' });
    // HOME is the shell's directory: the control plane was added to ~/.meshctl/config.
    expect(parse(readFileSync(join(cwd, '.meshctl', 'config'), 'utf8'))).toMatchObject({
      currentContext: 'local',
      controlPlanes: [{ name: 'local', coordinates: { apiServer: { url: cp.url } } }],
    });
  }, 120_000);
});

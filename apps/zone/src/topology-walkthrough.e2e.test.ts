// The README's "Multi-zone", run as written: `npm run topology` in the background, waiting for its
// ready line, then every command of the section, each block by bash, checked against what the
// README says it prints. The topology gets ports of its own through `--base-port`; every process it
// started (global, zones) is stopped at the end with the process group of its shell.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeBasePort } from '@mesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markdownSection, REPOSITORY, runShell, shellBlocks, stopProcessGroup } from './testing/walkthrough.js';

/** The README's base port: the global's diagnostics; its API is one above, each zone 100 further. */
const README_BASE = 5680;

let base: number;
let cwd: string;
const groups: number[] = [];

beforeAll(async () => {
  base = await freeBasePort(2);
  cwd = mkdtempSync(join(tmpdir(), 'mesh-topology-'));
});

afterAll(async () => {
  await Promise.all(groups.map((group) => stopProcessGroup(group)));
});

/**
 * The README's ports moved by this test's base port. `npm run topology --` runs the setup (the test
 * suite ran it) and then the script, which the test runs at once.
 */
const localise = (text: string) =>
  text
    .replaceAll('npm run topology --', `node ${join(REPOSITORY, 'scripts', 'topology.mjs')}`)
    .replaceAll('--zones 2', `--zones 2 --base-port ${base}`)
    .replace(/:(5[6-8]\d\d)\b/g, (_, port: string) => `:${Number(port) - README_BASE + base}`);

const lines = (output: string) => output.trim().split('\n');

describe('README: multi-zone', () => {
  it('starts the topology with the script the README names', () => {
    expect(JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')).scripts.topology).toBe('node scripts/setup.mjs && node scripts/topology.mjs');
  });

  it('runs every command as written, each printing what the README says', async () => {
    const blocks = shellBlocks(markdownSection('README.md', '## Multi-zone')).map(localise);
    expect(blocks).toHaveLength(4);
    const run = async (block: string) => {
      const shell = runShell(block, cwd);
      groups.push(shell.processGroup);
      const { code, stdout, stderr } = await shell;
      expect({ code, stderr }, `${block}\n${stdout}`).toEqual({ code: 0, stderr: '' });
      return stdout;
    };

    const [ready, zones] = lines(await run(blocks[0]!));
    expect(ready).toBe(`topology ready: global :${base + 1}, zone-1 :${base + 101}, zone-2 :${base + 201}`);
    expect(JSON.parse(zones!)).toEqual([
      { name: 'zone-1', active: true, url: `http://${hostname()}:${base + 101}` },
      { name: 'zone-2', active: true, url: `http://${hostname()}:${base + 201}` },
    ]);

    const [created, inZone2] = lines(await run(blocks[1]!));
    expect(created).toBe('{}');
    expect(JSON.parse(inZone2!)).toMatchObject({ type: 'Timeout', mesh: 'default', name: 'fast', labels: { 'mesh.io/origin': 'global' }, conf: { connectTimeout: '2s' } });

    const [registered, overviews, policies] = lines(await run(blocks[2]!));
    expect(registered).toBe('{}');
    expect(JSON.parse(overviews!)).toMatchObject({ total: 1, items: [{ type: 'DataplaneOverview', name: 'zone-1.web-1', labels: { 'mesh.io/zone': 'zone-1' } }], next: null });
    expect(JSON.parse(policies!)).toMatchObject({ kind: 'SidecarDataplane', total: 1, items: [{ type: 'inbound', name: '10.0.0.1:8080:8080', service: 'web' }] });

    expect(JSON.parse(await run(blocks[3]!))).toMatchObject({ type: '/std-errors', status: 405, title: 'Method not Allowed' });
  }, 180_000);

  it('stops what it started and says why when a zone cannot start', async () => {
    const failingBase = await freeBasePort(2);
    // zone-2's API port, taken.
    const squatter = createServer();
    await new Promise<void>((listening) => squatter.listen(failingBase + 201, '0.0.0.0', listening));
    try {
      // A directory of its own: the running topology's global must not share its store.
      const shell = runShell(`node ${join(REPOSITORY, 'scripts', 'topology.mjs')} --zones 2 --base-port ${failingBase}`, mkdtempSync(join(tmpdir(), 'mesh-topology-')));
      groups.push(shell.processGroup);
      const { code, stderr } = await shell;
      expect(code).toBe(1);
      expect(stderr).toMatch(/^topology failed: zone in .*zone-2 exited with 1; see .*zone-2\.log\n$/);
      // The global and zone-1 were stopped before it exited: nothing of its process group is left.
      expect(() => process.kill(-shell.processGroup, 0)).toThrow();
    } finally {
      squatter.close();
    }
  }, 120_000);
});

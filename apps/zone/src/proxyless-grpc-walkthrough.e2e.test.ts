// docs/xds.md's proxyless gRPC walkthrough, run as written: the control plane with a plain-text
// data plane server, the greeter servers and the `@grpc/grpc-js-xds` client the document writes,
// the Dataplanes, the route and the bootstrap, each block by bash (ports moved to free ones). The
// client's answers are what the document says they are.
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startControlPlane, type ControlPlaneProcess, type Ports } from './testing/process.js';
import { markdownSection, REPOSITORY, runShell, shellBlocks, stopProcessGroup } from './testing/walkthrough.js';

let cp: ControlPlaneProcess & { ports: Ports };
let dpPort: number;
let greeterPorts: [number, number];
const groups: number[] = [];

beforeAll(async () => {
  dpPort = await freePort();
  greeterPorts = [await freePort(), await freePort()];
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(dpPort), MESH_DP_SERVER_TLS_ENABLED: 'false' } });
});

afterAll(async () => {
  await Promise.all(groups.map((group) => stopProcessGroup(group)));
  await cp?.stop();
});

/** The document's addresses, pointed at this test's control plane and greeter ports. */
const localise = (text: string) =>
  text
    .replaceAll('localhost:5681', `127.0.0.1:${cp.ports.http}`)
    .replaceAll('127.0.0.1:5678', `127.0.0.1:${dpPort}`)
    .replaceAll('50051', String(greeterPorts[0]))
    .replaceAll('50052', String(greeterPorts[1]));

describe('docs/xds.md: proxyless gRPC', () => {
  it('says the data plane server must be plain text, and starts the control plane so', () => {
    const section = markdownSection('docs/xds.md', '## Proxyless gRPC');
    expect(section).toContain('must then be plain text too');
    expect(shellBlocks(section)[0]!.trim()).toBe('MESH_DP_SERVER_TLS_ENABLED=false npm start');
  });

  it('runs the walkthrough as written: the client reaches the greeter the route names', async () => {
    const [, files, servers, client, ...others] = shellBlocks(markdownSection('docs/xds.md', '## Proxyless gRPC')).map(localise);
    expect(others).toEqual([]);
    // The directory where the document has the reader install the two packages: the workspace's own copies.
    const cwd = mkdtempSync(join(tmpdir(), 'mesh-proxyless-grpc-'));
    symlinkSync(join(REPOSITORY, 'apps', 'zone', 'node_modules'), join(cwd, 'node_modules'));
    const run = async (block: string) => {
      const shell = runShell(block, cwd);
      groups.push(shell.processGroup);
      const { code, stdout, stderr } = await shell;
      expect({ code, stderr }, block).toEqual({ code: 0, stderr: '' });
      return stdout;
    };

    expect(await run(files!)).toBe('');
    expect(await run(servers!)).toBe('{}{}{}{}\n');
    expect(await run(client!)).toBe('greeter-2\n'.repeat(4));
  }, 120_000);
});

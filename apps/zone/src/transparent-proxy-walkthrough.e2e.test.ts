// docs/xds.md's "Transparent proxying" example, run as written by bash as root: it makes its own two
// network namespaces (mesh-cp, mesh-app), installs the rules in mesh-app, calls the backend by its
// service name and cleans everything up again. Skipped, and says so, where namespaces are refused.
import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { requireEnvoy } from './testing/envoy.js';
import { namespacesRefused } from './testing/netns.js';
import { markdownSection, repositoryLike, runShell, shellBlocks, stopProcessGroup } from './testing/walkthrough.js';

const refused = namespacesRefused();
if (refused) console.warn(`skipped: transparent-proxy-walkthrough.e2e: ${refused}`);
const envoy = refused ? undefined : requireEnvoy('transparent-proxy-walkthrough.e2e');

const [example, ...others] = shellBlocks(markdownSection('docs/xds.md', '## Transparent proxying'));
const namespaces = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
let processGroup: number | undefined;

afterAll(async () => {
  if (processGroup !== undefined) await stopProcessGroup(processGroup);
});

describe.skipIf(refused !== undefined || !envoy)("docs/xds.md's transparent proxying example", () => {
  it('is one block, and the namespaces it makes are free here', () => {
    expect(others).toEqual([]);
    expect(namespaces()).not.toMatch(/^mesh-(app|cp)\b/m);
  });

  it("runs as written: the application gets the backend's answer by its service name, and nothing is left", async () => {
    // The same PATH and HOME as the shell of the person running it, root.
    const cwd = repositoryLike();
    // Readable by all, as a checkout is: the client's proxy runs as nobody from it.
    chmodSync(cwd, 0o755);
    const run = runShell(example!, cwd, { HOME: process.env.HOME ?? '/root' });
    processGroup = run.processGroup;
    const { code, stdout, stderr } = await run;
    expect({ code, stderr: stderr.split('\n').filter((line) => line.startsWith('Error')) }).toEqual({ code: 0, stderr: [] });
    expect(stdout).toContain('Transparent proxy set up successfully');
    // Python's file server answering for backend.mesh: its listing's first lines.
    expect(stdout).toMatch(/<!DOCTYPE HTML>\n<html lang="en">\n<head>\n/);
    expect(stdout).toContain('Transparent proxy cleaned up successfully');
    expect(namespaces()).not.toMatch(/^mesh-(app|cp)\b/m);
  }, 300_000);
});

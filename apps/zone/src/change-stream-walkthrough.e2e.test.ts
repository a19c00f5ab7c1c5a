// docs/api.md "Change stream", run as written against the real zone binary (its port replaced by
// this test's): the `curl -N` there prints the current state, `synced`, then each change.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlaneProcess } from './testing/process.js';
import { markdownSection, runShell, shellBlocks, stopProcessGroup } from './testing/walkthrough.js';

let cp: ControlPlaneProcess;

beforeAll(async () => {
  cp = await startControlPlane();
}, 60_000);

afterAll(async () => {
  await cp?.stop();
});

const dataplane = { type: 'Dataplane', mesh: 'default', name: 'web-1', networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] } };

async function until(done: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; !done(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('docs/api.md: change stream', () => {
  it('streams the state, synced, then a delete, as the example shows', async () => {
    const [block, ...rest] = shellBlocks(markdownSection('docs/api.md', '## Change stream'));
    expect(rest).toEqual([]);
    expect((await fetch(`${cp.url}/meshes/default/dataplanes/web-1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(dataplane) })).status).toBe(201);

    const shell = runShell(block!.replaceAll('localhost:5681', cp.url.replace('http://', '')), mkdtempSync(join(tmpdir(), 'mesh-change-stream-')));
    try {
      await until(() => shell.stdoutSoFar().includes('event: synced'), 'synced');
      expect((await fetch(`${cp.url}/meshes/default/dataplanes/web-1`, { method: 'DELETE' })).status).toBe(200);
      await until(() => shell.stdoutSoFar().includes('event: delete'), 'the delete');
    } finally {
      await stopProcessGroup(shell.processGroup);
    }
    const events = shell
      .stdoutSoFar()
      .trim()
      .split('\n\n')
      .map((frame): Record<string, string> => Object.fromEntries(frame.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])));
    const [put, synced, deleted] = events;
    expect(events).toHaveLength(3);
    expect(put!.event).toBe('put');
    expect(JSON.parse(put!.data!)).toMatchObject({ type: 'Dataplane', mesh: 'default', name: 'web-1', resource: dataplane });
    const revision = JSON.parse(put!.data!).revision as number;
    expect(synced).toEqual({ id: String(revision), event: 'synced', data: JSON.stringify({ revision }) });
    expect(deleted!.event).toBe('delete');
    expect(Number(deleted!.id)).toBeGreaterThan(revision);
    expect(JSON.parse(deleted!.data!)).toEqual({ revision: Number(deleted!.id), type: 'Dataplane', mesh: 'default', name: 'web-1' });
  }, 60_000);
});

// The engine settings each binary chooses for itself (docs/architecture.md, Memory): what the
// running control plane says it runs with, an operator's own flag kept, and the process a test or
// a supervisor started staying the control plane, which its signals stop cleanly.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventually } from './testing/envoy.js';
import { startControlPlane, type ControlPlaneProcess } from './testing/process.js';

interface EngineLine {
  pid: number;
  semiSpaceMb: number | 'default';
  chosenBy: string;
  thread: string;
}

/** The start's `engine settings` log line. */
async function engineSettings(cp: ControlPlaneProcess): Promise<EngineLine> {
  const line = await eventually(
    () => cp.output().split('\n').find((l) => l.includes('"engine settings"')),
    (found) => found !== undefined,
    'the engine settings log line',
  );
  return JSON.parse(line!) as EngineLine;
}

/** The pids of the children of a process. */
const childrenOf = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();

describe('the engine settings of the binaries', () => {
  it('mesh-zone runs with the young generation it chose, in the process that was started, and stops on SIGTERM with code 0', async () => {
    const cp = await startControlPlane();
    try {
      expect(await engineSettings(cp)).toMatchObject({ pid: cp.pid, semiSpaceMb: 64, chosenBy: 'binary', thread: 'worker' });
      // No second process: the started pid serves, and it has no children.
      expect(childrenOf(cp.pid)).toBe('');
      expect((await fetch(`${cp.url}/meshes/default`)).status).toBe(200);
    } finally {
      expect(await cp.stop('SIGTERM')).toBe(0);
    }
    expect(cp.output()).toContain('"msg":"stopped"');
  }, 60_000);

  it('mesh-zone stops on SIGINT with code 0', async () => {
    const cp = await startControlPlane();
    await engineSettings(cp);
    expect(await cp.stop('SIGINT')).toBe(0);
    expect(cp.output()).toContain('"msg":"stopped"');
  }, 60_000);

  it("keeps an operator's own young generation from NODE_OPTIONS", async () => {
    const cp = await startControlPlane({ env: { NODE_OPTIONS: '--max-semi-space-size=16' } });
    try {
      expect(await engineSettings(cp)).toMatchObject({ pid: cp.pid, semiSpaceMb: 16, chosenBy: 'operator', thread: 'main' });
    } finally {
      expect(await cp.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);

  it("mesh-global keeps the engine's default", async () => {
    const cp = await startControlPlane({ binary: 'mesh-global' });
    try {
      expect(await engineSettings(cp)).toMatchObject({ pid: cp.pid, semiSpaceMb: 'default', chosenBy: 'engine', thread: 'main' });
    } finally {
      expect(await cp.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);
});

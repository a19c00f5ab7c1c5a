import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareWorkDir } from './work-dir.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-workdir-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('prepareWorkDir', () => {
  it('creates the directory with its parents', () => {
    const dir = join(tempDir(), 'a', 'b');
    prepareWorkDir(dir);
    expect(() => writeFileSync(join(dir, 'probe'), 'x')).not.toThrow();
  });

  it('refuses a path under a file, saying so and naming the key to set', () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, 'x');
    expect(() => prepareWorkDir(join(file, 'data'))).toThrow(
      `work directory ${join(file, 'data')} cannot be created or written (ENOTDIR); set general.workDir (MESH_GENERAL_WORK_DIR) to a writable directory`,
    );
  });

  // Root writes anywhere; the end-to-end test (apps/zone/src/disk-faults.e2e.test.ts) uses a read-only mount instead.
  it.skipIf(process.getuid?.() === 0)('refuses a directory it may not write, naming why', () => {
    const parent = tempDir();
    chmodSync(parent, 0o500);
    expect(() => prepareWorkDir(join(parent, 'data'))).toThrow(`work directory ${join(parent, 'data')} cannot be created or written (EACCES)`);
    expect(() => prepareWorkDir(parent)).toThrow(`work directory ${parent} cannot be created or written (EACCES)`);
  });
});

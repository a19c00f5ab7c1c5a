import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBundle } from './bundle.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A bundle whose runBinary resolves with `answer`, and the file its cache is kept in. */
function writeBundle(answer: string, dir = mkdtempSync(join(tmpdir(), 'mesh-bundle-'))): { bundle: string; cache: string } {
  dirs.push(dir);
  const bundle = join(dir, 'control-plane.cjs');
  // Bundles as esbuild writes them use require, __dirname and module.exports.
  writeFileSync(bundle, `const { basename } = require('node:path');\nmodule.exports = { runBinary: async () => ${JSON.stringify(answer)} + ' from ' + basename(__dirname) };\n`);
  return { bundle, cache: `${bundle}.code-cache` };
}

const run = (bundle: string) => (loadBundle(bundle).runBinary as unknown as () => Promise<string>)();
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest();

describe('a binary bundle loaded with its code cache', () => {
  it('runs the bundle and keeps the engine code beside it, headed by the digest of the bundle', async () => {
    const { bundle, cache } = writeBundle('first');
    await expect(run(bundle)).resolves.toMatch(/^first from mesh-bundle-/);
    const kept = readFileSync(cache);
    expect(kept.subarray(0, 32).equals(sha256(bundle))).toBe(true);
    expect(kept.length).toBeGreaterThan(32);
  });

  it('loads with the cache it kept, without writing it again', async () => {
    const { bundle, cache } = writeBundle('again');
    await run(bundle);
    const before = statSync(cache);
    await expect(run(bundle)).resolves.toMatch(/^again from/);
    const after = statSync(cache);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('runs a rebuilt bundle of the same length as rebuilt, not the code cached for the old one', async () => {
    const { bundle, cache } = writeBundle('one');
    await run(bundle);
    writeBundle('two', join(bundle, '..'));
    await expect(run(bundle)).resolves.toMatch(/^two from/);
    expect(readFileSync(cache).subarray(0, 32).equals(sha256(bundle))).toBe(true);
  });

  it('starts without a cache it cannot write, leaving nothing half-written', async () => {
    const { bundle, cache } = writeBundle('unkept');
    mkdirSync(cache);
    await expect(run(bundle)).resolves.toMatch(/^unkept from/);
    expect(readdirSync(join(bundle, '..')).sort()).toEqual(['control-plane.cjs', 'control-plane.cjs.code-cache']);
  });
});

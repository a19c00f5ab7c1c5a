// A binary's control plane, loaded from its bundle with the engine's code cache kept beside it
// (docs/architecture.md, Start-up).
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { Binary, runBinary } from './main.js';
import type { EngineSettings } from './launch.js';

/** What a binary's bundle exports (the binary's `src/control-plane.ts`). */
interface BinaryBundle {
  runBinary: typeof runBinary;
}

/** The cache's first bytes: the SHA-256 of the bundle it was compiled from. */
const DIGEST_BYTES = 32;

/**
 * Compiles and runs the bundle (CommonJS) with the code the engine compiled for it at an earlier
 * start, kept in `<bundle>.code-cache`: the compilation of the bundle's 6 MB and of what its modules
 * run at load is then read rather than done. Node 20 has no compile cache of its own for modules.
 * The cache opens with the digest of the bundle it belongs to, since the engine itself compares only
 * the source's length. A missing cache, one of another bundle or one the engine rejects (another
 * Node version, other engine flags) is written anew from this load; one that cannot be written is
 * only not kept.
 */
export function loadBundle(file: string): BinaryBundle {
  const source = readFileSync(file);
  const digest = createHash('sha256').update(source).digest();
  const cacheFile = `${file}.code-cache`;
  let cachedData: Buffer | undefined;
  try {
    const cache = readFileSync(cacheFile);
    if (digest.equals(cache.subarray(0, DIGEST_BYTES))) cachedData = cache.subarray(DIGEST_BYTES);
  } catch {
    // None kept yet: this load writes it.
  }
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source.toString('utf8')}\n})`, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} as BinaryBundle };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file));
  if (cachedData === undefined || script.cachedDataRejected) {
    // Taken now, with the engine's flags as the next load will have them: the start sets some.
    const compiled = script.createCachedData();
    const written = `${cacheFile}.${process.pid}`;
    try {
      writeFileSync(written, Buffer.concat([digest, compiled]));
      renameSync(written, cacheFile);
    } catch {
      // A read-only installation starts without the cache.
      rmSync(written, { force: true });
    }
  }
  return module.exports;
}

/** Runs the control plane of `binary` from its bundle, a URL of the binary's own (launch.ts). */
export async function runBundledBinary(bundle: URL, binary: Binary, argv: string[], engine: EngineSettings): Promise<void> {
  await loadBundle(fileURLToPath(bundle)).runBinary(binary, argv, engine);
}

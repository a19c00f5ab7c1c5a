// The work directory (`general.workDir`): the database, the generated certificate and keys live
// there, so a directory that cannot be created or written stops the start with a clear error.
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from './config.js';

export function prepareWorkDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new ConfigError(`work directory ${dir} cannot be created or written (${reasonOf(dir, error)}); set general.workDir (MESH_GENERAL_WORK_DIR) to a writable directory`, undefined, { cause: error });
  }
}

/**
 * The error code, and for a directory that could not be created, what its nearest existing parent
 * answers: a recursive mkdir reports ENOENT where the parent is read-only (EROFS) or not ours (EACCES).
 */
function reasonOf(dir: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  if (code !== 'ENOENT') return code;
  let parent = dir;
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  try {
    accessSync(parent, constants.W_OK);
    return code;
  } catch (parentError) {
    return (parentError as NodeJS.ErrnoException).code ?? code;
  }
}

// The binaries' first module: it chooses the engine settings a binary needs before the control
// plane's modules are loaded, since the engine sizes a heap only when it creates it.
import { Worker } from 'node:worker_threads';
import { runBundledBinary } from './bundle.js';
import { outliveOutputReaders } from './output-readers.js';
import type { Binary } from './main.js';

export type { Binary };

/**
 * The young generation's semi-space each binary needs, in MB; none is the engine's default. A zone
 * keeps every proxy's snapshot from one push to the next: with the engine's 16 MB semi-spaces a
 * mesh-wide push moved them into the old generation, which was then collected in full every other
 * push (docs/architecture.md, Memory).
 */
const SEMI_SPACE_MB: Record<Binary, number | undefined> = { 'mesh-zone': 64, 'mesh-global': undefined };

/** The engine's young generation is two semi-spaces and a space of large objects as big as one. */
const YOUNG_GENERATION_IN_SEMI_SPACES = 3;

/** The operator's own young-generation flag, from the command line or NODE_OPTIONS. */
function operatorSemiSpaceMb(): number | undefined {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
  const match = /--max[-_]semi[-_]space[-_]size[= ](\d+)/.exec(flags);
  return match ? Number(match[1]) : undefined;
}

/** The engine settings a control plane runs with, and who chose them. */
export interface EngineSettings {
  /** The young generation's semi-space in MB, or undefined for the engine's default. */
  semiSpaceMb: number | undefined;
  /** Who chose it. */
  chosenBy: 'binary' | 'operator' | 'engine';
}

/**
 * Runs a binary with the engine settings it needs. When it needs a young generation other than the
 * engine's default and the operator chose none, the control plane runs in a worker thread created
 * with it (its `resourceLimits`): one process, so its pid, signals, resident memory and CPU time are
 * the control plane's; this thread only forwards SIGTERM and SIGINT to it and exits with its code.
 * Otherwise the control plane runs on this thread, as the operator's flags set it. Either way it
 * runs from `bundle`, the binary's bundle of this package (bundle.ts).
 */
export async function launchBinary(binary: Binary, bundle: URL): Promise<void> {
  const operatorMb = operatorSemiSpaceMb();
  const binaryMb = SEMI_SPACE_MB[binary];
  if (operatorMb !== undefined || binaryMb === undefined) {
    await runBundledBinary(bundle, binary, process.argv, operatorMb === undefined ? { semiSpaceMb: undefined, chosenBy: 'engine' } : { semiSpaceMb: operatorMb, chosenBy: 'operator' });
    return;
  }
  outliveOutputReaders();
  const engine: EngineSettings = { semiSpaceMb: binaryMb, chosenBy: 'binary' };
  const controlPlane = new Worker(new URL('./binary-thread.js', import.meta.url), {
    workerData: { bundle: bundle.href, binary, argv: process.argv, engine },
    resourceLimits: { maxYoungGenerationSizeMb: binaryMb * YOUNG_GENERATION_IN_SEMI_SPACES },
  });
  const forward = (signal: NodeJS.Signals) => controlPlane.postMessage({ signal });
  process.on('SIGTERM', forward);
  process.on('SIGINT', forward);
  controlPlane.on('exit', (code) => process.exit(code));
}

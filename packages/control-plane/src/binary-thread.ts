// The thread a binary's control plane runs in when the binary chose its engine settings (launch.ts).
import { writeFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { runBundledBinary } from './bundle.js';
import type { EngineSettings } from './launch.js';
import type { Binary } from './main.js';

// The thread's name in `top -H` and `/proc/<pid>/task/*/comm` (docs/architecture.md, Threads); Linux only.
try {
  writeFileSync('/proc/thread-self/comm', 'control-plane');
} catch {
  // Not Linux: the thread keeps the process's name.
}

const { bundle, binary, argv, engine } = workerData as { bundle: string; binary: Binary; argv: string[]; engine: EngineSettings };
await runBundledBinary(new URL(bundle), binary, argv, engine);

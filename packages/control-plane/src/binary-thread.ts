// The thread a binary's control plane runs in when the binary chose its engine settings (launch.ts).
import { workerData } from 'node:worker_threads';
import { runBundledBinary } from './bundle.js';
import type { EngineSettings } from './launch.js';
import type { Binary } from './main.js';

const { bundle, binary, argv, engine } = workerData as { bundle: string; binary: Binary; argv: string[]; engine: EngineSettings };
await runBundledBinary(new URL(bundle), binary, argv, engine);

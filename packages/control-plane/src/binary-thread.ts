// The thread a binary's control plane runs in when the binary chose its engine settings (launch.ts).
import { workerData } from 'node:worker_threads';
import type { EngineSettings } from './launch.js';
import { runBinary, type Binary } from './main.js';

const { binary, argv, engine } = workerData as { binary: Binary; argv: string[]; engine: EngineSettings };
await runBinary(binary, argv, engine);

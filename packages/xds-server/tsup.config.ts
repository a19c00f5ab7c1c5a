import { defineConfig } from 'tsup';
import { libraryConfig } from '../../tsup.base.js';

// The transport runs in a worker thread, started from a file of its own (src/transport.ts).
export default defineConfig({ ...libraryConfig, entry: ['src/index.ts', 'src/transport-worker.ts'], dts: { entry: 'src/index.ts' } });

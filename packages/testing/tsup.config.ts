import { defineConfig } from 'tsup';
import { libraryConfig } from '../../tsup.base.js';

// The control plane processes a topology starts run `control-plane-process.js`, beside the entry.
export default defineConfig({ ...libraryConfig, entry: ['src/index.ts', 'src/control-plane-process.ts'] });

import { defineConfig } from 'tsup';
import { libraryConfig } from '../../tsup.base.js';

// The binaries' launcher is an entry of its own, so that it loads nothing of the control plane
// before it has chosen the engine settings; the thread it starts runs binary-thread.js.
export default defineConfig({ ...libraryConfig, entry: ['src/index.ts', 'src/launch.ts', 'src/binary-thread.ts'] });

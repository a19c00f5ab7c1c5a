import { defineConfig } from 'tsup';
import { libraryConfig } from '../../tsup.base.js';

export default defineConfig({ ...libraryConfig, entry: ['src/index.ts', 'src/envoy-protos.ts'] });

// Build settings shared by every package (libraries) and app (binaries).
import { defineConfig } from 'tsup';

const common = { format: ['esm' as const], sourcemap: true, clean: true, target: 'node20' };

export const libraryConfig = defineConfig({ ...common, entry: ['src/index.ts'], dts: true });

export const binaryConfig = defineConfig({ ...common, entry: ['src/main.ts'], banner: { js: '#!/usr/bin/env node' } });

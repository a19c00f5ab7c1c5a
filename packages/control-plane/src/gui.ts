// Where the web GUI is served and where its built files are (docs/gui.md), from `apiServer.gui.*`
// and `apiServer.rootUrl`: the app of the @mesh/gui package, built into its `dist/` folder.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { GuiOptions } from '@mesh/http-api';
import { ConfigError, type ControlPlaneConfig } from './config.js';

/** The GUI package's build output, found through the package as Node resolves it; undefined when the package is absent. */
export function guiBuildDirectory(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@mesh/gui/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

function checkUrl(key: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${key}: expected an absolute http or https URL such as https://mesh.example.com/gui, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${key}: expected an http or https URL, got "${value}"`);
}

/** The GUI's serving options; a bad base path or URL is a ConfigError. */
export function guiOptions(config: ControlPlaneConfig, directory = guiBuildDirectory()): GuiOptions {
  const { gui, rootUrl } = config.apiServer;
  const basePath = gui.basePath.replace(/\/+$/, '');
  if (!gui.basePath.startsWith('/') || basePath === '' || /[?#\s]/.test(basePath)) {
    throw new ConfigError(`apiServer.gui.basePath: expected a path below / such as /gui, got "${gui.basePath}"`);
  }
  if (gui.rootUrl !== '') checkUrl('apiServer.gui.rootUrl', gui.rootUrl);
  if (rootUrl !== '') checkUrl('apiServer.rootUrl', rootUrl);
  const app = !gui.enabled
    ? { unavailable: 'The GUI is disabled (apiServer.gui.enabled is false)' }
    : directory !== undefined && existsSync(join(directory, 'index.html'))
      ? { directory }
      : { unavailable: `The GUI is not built (no index.html in ${directory ?? 'the @mesh/gui package'}): build it with npm run build` };
  return { basePath, url: gui.rootUrl !== '' ? gui.rootUrl : basePath, apiUrl: rootUrl.replace(/\/+$/, ''), app };
}

// The GUI's serving options from the configuration (docs/gui.md, Configuration).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { guiBuildDirectory, guiOptions } from './gui.js';

const built = mkdtempSync(join(tmpdir(), 'mesh-gui-build-'));
writeFileSync(join(built, 'index.html'), '<!doctype html><html><head></head><body></body></html>');
const empty = mkdtempSync(join(tmpdir(), 'mesh-gui-empty-'));
mkdirSync(join(empty, 'assets'));
afterAll(() => {
  rmSync(built, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

const config = (env: Record<string, string> = {}) => loadConfig({ env });

describe('the GUI options', () => {
  it('serve the build at /gui by default, announced there, the API on the same origin', () => {
    expect(guiOptions(config(), built)).toEqual({ basePath: '/gui', url: '/gui', apiUrl: '', app: { directory: built } });
  });

  it('follow apiServer.gui.basePath and rootUrl, and apiServer.rootUrl for the API', () => {
    const options = guiOptions(config({ MESH_API_SERVER_GUI_BASE_PATH: '/ui/', MESH_API_SERVER_GUI_ROOT_URL: 'https://mesh.example.com/ui', MESH_API_SERVER_ROOT_URL: 'https://api.example.com/' }), built);
    expect(options).toEqual({ basePath: '/ui', url: 'https://mesh.example.com/ui', apiUrl: 'https://api.example.com', app: { directory: built } });
  });

  it('say why nothing is served when the GUI is disabled or its build is missing', () => {
    expect(guiOptions(config({ MESH_API_SERVER_GUI_ENABLED: 'false' }), built).app).toEqual({ unavailable: 'The GUI is disabled (apiServer.gui.enabled is false)' });
    expect(guiOptions(config(), empty).app).toEqual({ unavailable: `The GUI is not built (no index.html in ${empty}): build it with npm run build` });
  });

  it('refuse a base path that is not below / and URLs that are not absolute http(s)', () => {
    for (const basePath of ['gui', '/', '//', '/gui?x=1']) {
      expect(() => guiOptions(config({ MESH_API_SERVER_GUI_BASE_PATH: basePath }), built), basePath).toThrow(ConfigError);
    }
    expect(() => guiOptions(config({ MESH_API_SERVER_GUI_BASE_PATH: 'gui' }), built)).toThrow('apiServer.gui.basePath: expected a path below / such as /gui, got "gui"');
    expect(() => guiOptions(config({ MESH_API_SERVER_GUI_ROOT_URL: 'mesh.example.com/gui' }), built)).toThrow('apiServer.gui.rootUrl: expected an absolute http or https URL such as https://mesh.example.com/gui, got "mesh.example.com/gui"');
    expect(() => guiOptions(config({ MESH_API_SERVER_ROOT_URL: 'ftp://api.example.com' }), built)).toThrow('apiServer.rootUrl: expected an http or https URL, got "ftp://api.example.com"');
  });

  it('find the build of the @mesh/gui package', () => {
    expect(guiBuildDirectory()).toMatch(/apps\/gui\/dist$/);
  });
});

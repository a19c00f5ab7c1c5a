// The web GUI (docs/gui.md): the built app served under `apiServer.gui.basePath`. Files of
// `assets/` carry a content hash in their names and are cached for a year; every other path under
// the base path that names no file is a page of the app, answered with index.html (history
// fallback) so deep links work. Every answer carries a policy that lets the page load and fetch
// from its own origin (and the API's, when `apiServer.rootUrl` puts it elsewhere) and nothing else.
import { readFileSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';
import { sendError } from './errors.js';

export interface GuiOptions {
  /** The path it is served under on this server, without a trailing slash (`/gui`). */
  basePath: string;
  /** Where `GET /` says it is: `apiServer.gui.rootUrl` behind a reverse proxy, else the base path. */
  url: string;
  /** Where the app sends its API requests: `apiServer.rootUrl`, or '' for the origin it was loaded from. */
  apiUrl: string;
  /** The built app's folder (index.html, assets/), or why there is none to serve. */
  app: { directory: string } | { unavailable: string };
}

/** What the page is told at load, as JSON in index.html (a script of type application/json, which never runs). */
export interface GuiPageConfig {
  apiUrl: string;
  /** The path the browser sees the app under, without a trailing slash. */
  basePath: string;
  product: string;
  version: string;
  mode: string;
}

export const GUI_CONFIG_ELEMENT_ID = 'mesh-gui-config';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const ASSETS_FOLDER = 'assets';

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Media types worth compressing; images and fonts are compressed already. */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.map', '.svg', '.txt']);

interface CachedFile {
  bytes: Buffer;
  gzipped?: Buffer;
  mediaType: string;
}

/** The origin of an absolute URL; undefined for a path (the page's own origin). */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** Only this origin (and the API's): no inline script or style, no plugins, no framing. */
export function guiContentSecurityPolicy(apiUrl: string): string {
  const apiOrigin = originOf(apiUrl);
  const connect = apiOrigin ? `'self' ${apiOrigin}` : "'self'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** `<` escaped, so no value can close the script element it sits in. */
const scriptSafeJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

/** index.html as built, told where it lives (`<base>`, which its relative asset URLs resolve against) and its settings. */
export function pageHtml(built: string, config: GuiPageConfig): string {
  const head = `<head>\n    <base href="${encodeURI(`${config.basePath}/`)}">\n    <script type="application/json" id="${GUI_CONFIG_ELEMENT_ID}">${scriptSafeJson(config)}</script>`;
  return built.replace(/<head>/i, head);
}

/** The path the browser sees the app under: the path of `rootUrl` behind a reverse proxy, else the base path. */
export function publicBasePath(options: Pick<GuiOptions, 'basePath' | 'url'>): string {
  const path = originOf(options.url) ? new URL(options.url).pathname : options.url;
  return path.replace(/\/+$/, '');
}

/** Whether a route (`/meshes/{mesh}/dataplanes`) has paths at or below the base path, which the GUI would answer instead. */
export function hidesRoute(basePath: string, template: string): boolean {
  const base = basePath.split('/').filter(Boolean);
  const route = template.split('/').filter(Boolean);
  return route.length >= base.length && base.every((segment, i) => route[i] === segment || /^\{\w+\}$/.test(route[i]!));
}

/** Where `GET /` says the GUI is (the reference's `gui` key); undefined when none is served. */
export const announcedGuiUrl = (options: GuiOptions | undefined): string | undefined => (options && 'directory' in options.app ? options.url : undefined);

export interface GuiServer {
  /** Whether the path is the GUI's. */
  owns(path: string): boolean;
  serve(req: Request, res: Response): void;
}

export function createGuiServer(options: GuiOptions, page: Omit<GuiPageConfig, 'apiUrl' | 'basePath'>): GuiServer {
  const { basePath } = options;
  const policy = guiContentSecurityPolicy(options.apiUrl);
  const directory = 'directory' in options.app ? resolve(options.app.directory) : undefined;
  // Files found are kept; misses are not, so requests for made-up paths cannot grow the map.
  const files = new Map<string, CachedFile>();
  let index: CachedFile | undefined;

  const read = (relativePath: string): CachedFile | undefined => {
    let file = files.get(relativePath);
    if (file) return file;
    const path = join(directory!, relativePath);
    // A path that leaves the folder (`..`, an encoded slash) names no file of the app.
    if (!path.startsWith(directory! + sep) || !statSync(path, { throwIfNoEntry: false })?.isFile()) return undefined;
    file = { bytes: readFileSync(path), mediaType: MEDIA_TYPES[extname(path)] ?? 'application/octet-stream' };
    files.set(relativePath, file);
    return file;
  };

  const indexPage = (): CachedFile | undefined => {
    if (index) return index;
    const built = read('index.html');
    if (!built) return undefined;
    const html = pageHtml(built.bytes.toString('utf8'), { ...page, apiUrl: options.apiUrl, basePath: publicBasePath(options) });
    index = { bytes: Buffer.from(html), mediaType: MEDIA_TYPES['.html']! };
    return index;
  };

  const send = (req: Request, res: Response, file: CachedFile, cacheControl: string, compressible: boolean): void => {
    res.statusCode = 200;
    res.setHeader('Content-Type', file.mediaType);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    let body = file.bytes;
    if (compressible) {
      res.setHeader('Vary', 'Accept-Encoding');
      if (/\bgzip\b/.test(req.get('accept-encoding') ?? '')) {
        body = file.gzipped ??= gzipSync(file.bytes);
        res.setHeader('Content-Encoding', 'gzip');
      }
    }
    res.setHeader('Content-Length', body.length);
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  return {
    owns: (path) => path === basePath || path.startsWith(`${basePath}/`),
    serve(req, res) {
      if (!directory) {
        sendError(res, 404, 'Not Found', 'unavailable' in options.app ? options.app.unavailable : 'Not Found');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        sendError(res, 405, 'Method not Allowed', 'Method not allowed');
        return;
      }
      let relativePath: string;
      try {
        relativePath = decodeURIComponent(req.path.slice(basePath.length + 1));
      } catch {
        sendError(res, 400, 'Bad Request', 'The path is not valid URL encoding');
        return;
      }
      const file = relativePath === '' || relativePath === 'index.html' ? undefined : read(relativePath);
      if (file) {
        const immutable = relativePath.startsWith(`${ASSETS_FOLDER}/`);
        send(req, res, file, immutable ? IMMUTABLE : 'no-cache', COMPRESSIBLE.has(extname(relativePath)));
        return;
      }
      // A missing asset is an error: answering it with the page would hand a script HTML.
      if (relativePath.startsWith(`${ASSETS_FOLDER}/`)) {
        sendError(res, 404, 'Not Found', `No such file of the GUI: ${relativePath}`);
        return;
      }
      const html = indexPage();
      if (!html) {
        sendError(res, 404, 'Not Found', `The GUI's build in ${directory} has no index.html`);
        return;
      }
      send(req, res, html, 'no-cache', true);
    },
  };
}

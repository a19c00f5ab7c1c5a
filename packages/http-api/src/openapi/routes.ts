// `/openapi.json`, `/openapi.yaml` and the reference page `/docs` (Swagger UI, served from the
// swagger-ui-dist package: no CDN). They are routes of the table like any other, so the document
// lists them too (docs/api.md, OpenAPI).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { resourceNotFound } from '@mesh/model';
import type { Response } from 'express';
import { stringify } from 'yaml';
import { z } from 'zod';
import type { ApiContext } from '../context.js';
import { withOperation } from '../handler.js';
import type { RouteTable } from '../route-table.js';
import { buildOpenApiDocument } from './document.js';
import { API_DESCRIPTION_PATHS, OPENAPI_YAML_PATH } from './paths.js';
import { component } from './schemas.js';

const TAG = 'API description';

/**
 * The page's only script of its own is a file, so the page runs under a policy that allows
 * scripts from this origin alone (no inline script). Swagger UI sets inline styles.
 */
const PAGE_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const PAGE_SCRIPT = `// Starts Swagger UI on this API's OpenAPI document; no request leaves this origin.
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(API_DESCRIPTION_PATHS.openapi)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

const docsPage = (title: string) => `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>${title}</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/reference.js"></script>
  </body>
</html>
`;

interface Asset {
  mediaType: string;
  /** A file of swagger-ui-dist, or the content itself. */
  file?: string;
  content?: string;
}

const ASSETS: Readonly<Record<string, Asset>> = {
  'swagger-ui.css': { mediaType: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'swagger-ui-bundle.js': { mediaType: 'text/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'favicon-32x32.png': { mediaType: 'image/png', file: 'favicon-32x32.png' },
  'reference.js': { mediaType: 'text/javascript; charset=utf-8', content: PAGE_SCRIPT },
};

/** The package's own directory, found from its entry point (swagger-ui-dist has no `exports` map). */
const swaggerUiDirectory = (): string => join(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'), '..');

/** Assets are read once, on first use. */
const assetBytes = new Map<string, Buffer>();

function readAsset(name: string, asset: Asset): Buffer {
  let bytes = assetBytes.get(name);
  if (!bytes) {
    bytes = asset.file !== undefined ? readFileSync(join(swaggerUiDirectory(), asset.file)) : Buffer.from(asset.content ?? '');
    assetBytes.set(name, bytes);
  }
  return bytes;
}

function send(res: Response, mediaType: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', mediaType);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(body);
}

const OpenApiDocumentSchema = component(
  'OpenApiDocument',
  z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) }).meta({ description: 'An OpenAPI 3.1 document.' }),
);

const TextSchema = z.string();

const documentTitle = (ctx: Pick<ApiContext, 'info'>) => `${ctx.info.product} control plane API`;

/** The document `/openapi.json` serves for the routes of this table. */
export function apiDocument(table: RouteTable, ctx: Pick<ApiContext, 'info'>): Record<string, unknown> {
  return buildOpenApiDocument(table.routes(), {
    title: documentTitle(ctx),
    version: ctx.info.version,
    description: 'The REST API of this control plane: resources of every kind, their insights and overviews, inspection, tokens. Conventions (errors, lists, names): docs/api.md in the repository.',
  });
}

export function addApiDescriptionRoutes(table: RouteTable, ctx: ApiContext): void {
  const title = documentTitle(ctx);
  // Built on first request, once every route is in the table.
  let json: string | undefined;
  let yaml: string | undefined;
  const documentJson = () => (json ??= JSON.stringify(apiDocument(table, ctx)));

  table.add({
    method: 'GET',
    path: API_DESCRIPTION_PATHS.openapi,
    doc: { summary: 'Get the OpenAPI document of this API, as JSON', tag: TAG, responses: { 200: { description: 'The document.', schema: OpenApiDocumentSchema } }, errors: [], example: {} },
    handler: withOperation('get', (_req, res) => send(res, 'application/json', documentJson())),
  });
  table.add({
    method: 'GET',
    path: OPENAPI_YAML_PATH,
    doc: { summary: 'Get the OpenAPI document of this API, as YAML', tag: TAG, responses: { 200: { description: 'The document.', mediaType: 'application/yaml', schema: OpenApiDocumentSchema } }, errors: [], example: {} },
    handler: withOperation('get', (_req, res) => send(res, 'application/yaml', (yaml ??= stringify(JSON.parse(documentJson()), { aliasDuplicateObjects: false })))),
  });
  table.add({
    method: 'GET',
    path: API_DESCRIPTION_PATHS.docs,
    doc: {
      summary: 'Open the interactive reference of this API',
      description: 'A page that shows this document and sends requests from it (Swagger UI).',
      tag: TAG,
      responses: { 200: { description: 'The page.', mediaType: 'text/html', schema: TextSchema } },
      errors: [],
      example: {},
    },
    handler: withOperation('get', (_req, res) => send(res, 'text/html; charset=utf-8', docsPage(title), { 'Content-Security-Policy': PAGE_POLICY })),
  });
  table.add({
    method: 'GET',
    path: `${API_DESCRIPTION_PATHS.docs}/{asset}`,
    doc: {
      summary: 'Get a file of the reference page',
      description: `One of: ${Object.keys(ASSETS).map((name) => `\`${name}\``).join(', ')}.`,
      tag: TAG,
      responses: { 200: { description: 'The file.', mediaType: '*/*', schema: TextSchema } },
      errors: [404],
      example: { params: { asset: 'reference.js' } },
    },
    handler: withOperation('get', (_req, res, params) => {
      const asset = Object.hasOwn(ASSETS, params.asset!) ? ASSETS[params.asset!] : undefined;
      if (!asset) throw resourceNotFound();
      send(res, asset.mediaType, readAsset(params.asset!, asset), { 'Cache-Control': 'public, max-age=3600' });
    }),
  });
}

// `/`, `/config`, `/versions`, `/policies`, `/who-am-i` (docs/api.md, Meta and insight endpoints).
import { catalogueKinds, type AnyKind } from '@mesh/model';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerOf } from '../access.js';
import type { ApiContext } from '../context.js';
import { sendJson } from '../errors.js';
import { announcedGuiUrl } from '../gui.js';
import { withOperation } from '../handler.js';
import { API_DESCRIPTION_PATHS } from '../openapi/paths.js';
import { component } from '../openapi/schemas.js';
import type { RouteDoc } from '../route-doc.js';
import type { Handler, RouteTable } from '../route-table.js';

/**
 * Data plane versions and the Envoy version each one ships with: the reference's last published
 * matrix (1.0.0 to 1.7.x), then one line per release since. Extend it with every release.
 */
const DATA_PLANE_COMPATIBILITY: Readonly<Record<string, { envoy: string }>> = {
  '1.0.0': { envoy: '1.16.0' },
  '1.0.1': { envoy: '1.16.0' },
  '1.0.2': { envoy: '1.16.1' },
  '1.0.3': { envoy: '1.16.1' },
  '1.0.4': { envoy: '1.16.1' },
  '1.0.5': { envoy: '1.16.2' },
  '1.0.6': { envoy: '1.16.2' },
  '1.0.7': { envoy: '1.16.2' },
  '1.0.8': { envoy: '1.16.2' },
  '~1.1.0': { envoy: '~1.17.0' },
  '~1.2.0': { envoy: '~1.18.0' },
  '~1.3.0': { envoy: '~1.18.4' },
  '~1.4.0': { envoy: '~1.18.4' },
  '~1.5.0': { envoy: '~1.21.1' },
  '~1.6.0': { envoy: '~1.21.1' },
  '~1.7.0': { envoy: '~1.22.0' },
  '~1.8.0': { envoy: '~1.22.0' },
  '~2.0.0': { envoy: '~1.22.0' },
  '~2.1.0': { envoy: '~1.22.0' },
  '~2.2.0': { envoy: '~1.25.0' },
  '~2.3.0': { envoy: '~1.26.0' },
  '~2.4.0': { envoy: '~1.27.0' },
  '2.5.0': { envoy: '1.28.0' },
};

export function addMetaRoutes(table: RouteTable, ctx: ApiContext): void {
  // Configuration, compatibility and catalogue do not change while the process runs: serialise them once.
  const configJson = sortedJson(ctx.effectiveConfig);
  const versionsJson = JSON.stringify({ meshDp: DATA_PLANE_COMPATIBILITY });
  const policiesJson = JSON.stringify({ policies: catalogueKinds().map((kind) => catalogueEntry(ctx, kind)) });

  const get = (path: string, doc: Omit<RouteDoc, 'tag' | 'errors'>, handler: Handler) =>
    table.add({ method: 'GET', path, doc: { tag: 'Control plane', errors: [], ...doc, example: {} }, handler: withOperation('get', handler) });
  get('/', { summary: 'Describe this control plane', description: 'Its product, version and ids, and where the API is described.', responses: { 200: { description: 'This control plane.', schema: IndexSchema } } }, (_req, res) =>
    sendJson(res, 200, JSON.stringify(indexJson(ctx))),
  );
  get('/config', { summary: 'Show the configuration in use', description: 'Keys sorted, secrets masked.', responses: { 200: { description: 'The effective configuration.', schema: ConfigSchema } } }, (_req, res) =>
    sendJson(res, 200, configJson),
  );
  get('/versions', { summary: 'List the compatible data plane versions', responses: { 200: { description: 'Each data plane version with its Envoy version.', schema: VersionsSchema } } }, (_req, res) =>
    sendJson(res, 200, versionsJson),
  );
  get('/policies', { summary: 'List the policy kinds', description: '`readOnly` says whether this control plane refuses writes of the kind.', responses: { 200: { description: 'The catalogue.', schema: CatalogueSchema } } }, (_req, res) =>
    sendJson(res, 200, policiesJson),
  );
  get('/who-am-i', { summary: 'Say who the caller is', responses: { 200: { description: 'The caller as this control plane identifies it.', schema: CallerSchema } } }, (req, res) => sendWhoAmI(ctx, req, res));
}

/**
 * `tagline` is the reference's deprecated name for `product`; `gui` says where the GUI is, and is
 * left out when none is served (disabled, or not built); `readOnly` tells clients such as the GUI
 * that every write will be refused before they offer one. The API's own description follows.
 */
function indexJson(ctx: ApiContext) {
  const { hostname, product, version, instanceId, clusterId } = ctx.info;
  const gui = announcedGuiUrl(ctx.gui);
  return { hostname, tagline: product, product, version, instanceId, clusterId, ...(gui !== undefined ? { gui } : {}), readOnly: ctx.manager.apiReadOnly, ...API_DESCRIPTION_PATHS };
}

const IndexSchema = component(
  'Index',
  z.object({
    hostname: z.string(),
    tagline: z.string().meta({ description: 'The same as `product` (deprecated).' }),
    product: z.string(),
    version: z.string(),
    instanceId: z.string().meta({ description: 'A UUID per process.' }),
    clusterId: z.string().meta({ description: 'A UUID kept in the store across restarts.' }),
    gui: z.string().optional().meta({ description: 'Where the web GUI is (`/gui`, or `apiServer.gui.rootUrl`); absent when none is served.' }),
    readOnly: z.boolean().meta({ description: 'Whether the API refuses every write (`apiServer.readOnly`, or a Kubernetes environment).' }),
    openapi: z.string().meta({ description: 'The OpenAPI document of this API.' }),
    docs: z.string().meta({ description: 'The interactive reference page of this API.' }),
  }),
);

const ConfigSchema = component('Config', z.record(z.string(), z.unknown()).meta({ description: 'Every configuration key with its value; `*****` for secrets.' }));

const VersionsSchema = component(
  'Versions',
  z.object({ meshDp: z.record(z.string(), z.object({ envoy: z.string() })).meta({ description: 'By data plane version (or range): the Envoy version it ships with.' }) }),
);

const CatalogueSchema = component(
  'PolicyCatalogue',
  z.object({
    policies: z.array(
      z.object({
        name: z.string(),
        readOnly: z.boolean(),
        path: z.string(),
        displayName: z.string(),
        singularDisplayName: z.string(),
        pluralDisplayName: z.string(),
        isExperimental: z.boolean(),
        isTargetRefBased: z.boolean(),
        isInbound: z.boolean(),
        isOutbound: z.boolean(),
      }),
    ),
  }),
);

const CallerSchema = component('Caller', z.object({ name: z.string(), groups: z.array(z.string()) }));

/** The entry of a kind, in the reference's key order; `readOnly` says whether this CP refuses its writes. */
function catalogueEntry(ctx: ApiContext, kind: AnyKind) {
  return {
    name: kind.name,
    readOnly: !ctx.manager.isWritableViaApi(kind),
    path: kind.path,
    displayName: kind.displayName,
    singularDisplayName: kind.singularDisplayName,
    pluralDisplayName: kind.displayName,
    isExperimental: false,
    // A targetRef policy is inbound when it has `from` entries, outbound when it has `to` entries.
    isTargetRefBased: kind.targetRefPolicy !== undefined,
    isInbound: kind.targetRefPolicy?.from ?? false,
    isOutbound: kind.targetRefPolicy?.to ?? false,
  };
}

function sendWhoAmI(ctx: ApiContext, req: Request, res: Response): void {
  const { name, groups } = callerOf(req);
  sendJson(res, 200, JSON.stringify({ name, groups }));
}

/** Compact JSON with the keys of every object sorted (the reference's `/config`); arrays keep their order. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

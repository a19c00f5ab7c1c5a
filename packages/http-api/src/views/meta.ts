// `/`, `/config`, `/versions`, `/policies`, `/who-am-i` (docs/api.md, Meta and insight endpoints).
import { catalogueKinds, type AnyKind } from '@mesh/model';
import type { Request, Response } from 'express';
import { callerOf } from '../access.js';
import type { ApiContext } from '../context.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import type { RouteTable } from '../route-table.js';

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

  table.add({ method: 'GET', path: '/', handler: withOperation('get', (_req, res) => sendJson(res, 200, JSON.stringify(indexJson(ctx)))) });
  table.add({ method: 'GET', path: '/config', handler: withOperation('get', (_req, res) => sendJson(res, 200, configJson)) });
  table.add({ method: 'GET', path: '/versions', handler: withOperation('get', (_req, res) => sendJson(res, 200, versionsJson)) });
  table.add({ method: 'GET', path: '/policies', handler: withOperation('get', (_req, res) => sendJson(res, 200, policiesJson)) });
  table.add({ method: 'GET', path: '/who-am-i', handler: withOperation('get', (req, res) => sendWhoAmI(ctx, req, res)) });
}

function indexJson(ctx: ApiContext) {
  const { hostname, product, version, instanceId, clusterId } = ctx.info;
  const gui = guiUrl(ctx);
  // `tagline` is the reference's deprecated name for `product`.
  return { hostname, tagline: product, product, version, instanceId, clusterId, ...(gui !== undefined ? { gui } : {}) };
}

interface GuiSettings {
  enabled?: boolean;
  rootUrl?: string;
  basePath?: string;
}

/** Where the GUI is announced: `apiServer.gui.rootUrl`, else its base path; never on a zone CP. */
function guiUrl(ctx: ApiContext): string | undefined {
  if (ctx.mode === 'zone') return undefined;
  const apiServer = ctx.effectiveConfig.apiServer as { gui?: GuiSettings } | undefined;
  const gui = apiServer?.gui ?? {};
  if (gui.enabled === false) return undefined;
  return gui.rootUrl || gui.basePath || '/gui';
}

/** The entry of a kind, in the reference's key order; `readOnly` says whether this CP refuses its writes. */
function catalogueEntry(ctx: ApiContext, kind: AnyKind) {
  return {
    name: kind.name,
    readOnly: !ctx.manager.isWritableViaApi(kind),
    path: kind.path,
    displayName: kind.displayName,
    singularDisplayName: kind.singularDisplayName,
    pluralDisplayName: kind.displayName,
    // Only the source/destination and selector kinds are served; the targetRef kinds are not.
    isExperimental: false,
    isTargetRefBased: false,
    isInbound: false,
    isOutbound: false,
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

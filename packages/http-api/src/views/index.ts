// Computed endpoints (index, configuration, catalogue, insights, overviews, the dataplanes a
// policy selects, inspection, the service map, tokens), declared in one table per concern and added after the CRUD routes.
import type { ApiContext } from '../context.js';
import type { RouteTable } from '../route-table.js';
import { addInsightRoutes } from './insights.js';
import { addInspectRoutes } from './inspect.js';
import { addMetaRoutes } from './meta.js';
import { addOverviewRoutes } from './overviews.js';
import { addPolicyDataplanesRoutes } from './policy-dataplanes.js';
import { addServiceMapRoutes } from './service-map.js';
import { addTokenRoutes } from './tokens.js';

export function addViewRoutes(table: RouteTable, ctx: ApiContext): void {
  addMetaRoutes(table, ctx);
  addInsightRoutes(table, ctx);
  addOverviewRoutes(table, ctx);
  addPolicyDataplanesRoutes(table, ctx);
  addInspectRoutes(table, ctx);
  addServiceMapRoutes(table, ctx);
  addTokenRoutes(table, ctx);
}

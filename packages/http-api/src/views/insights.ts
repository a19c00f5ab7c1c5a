// Insights, overviews and zone status.
import type { ApiContext } from '../context.js';
import type { RouteTable } from '../route-table.js';

export function addInsightRoutes(_table: RouteTable, _ctx: ApiContext): void {}

// `/`, `/config`, `/versions`, `/policies`, `/who-am-i`.
import type { ApiContext } from '../context.js';
import type { RouteTable } from '../route-table.js';

export function addMetaRoutes(_table: RouteTable, _ctx: ApiContext): void {}

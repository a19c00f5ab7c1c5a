export { createApiApp, type ApiContext, type ControlPlaneInfo, type Logger, type RequestObserver } from './api.js';
export { RouteTable, type Route, type Handler, type Params, type Method } from './route-table.js';
export { errorBody, sendError, sendJson, type ErrorBody } from './errors.js';
export { parsePage, nextPageUrl, collectionJson, type Page } from './pagination.js';
export { resourceJson } from './resource-json.js';
export { withOperation } from './handler.js';
export { authenticate, callerOf, requireAccess, requireRule, ADMIN, ADMIN_ONLY_RULES, ANONYMOUS, type AccessOptions, type AccessRule, type Caller, type StaticRuleName } from './access.js';

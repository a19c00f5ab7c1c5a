// Where the API describes itself; `GET /` announces the first two.
export const API_DESCRIPTION_PATHS = { openapi: '/openapi.json', docs: '/docs' } as const;
export const OPENAPI_YAML_PATH = '/openapi.yaml';

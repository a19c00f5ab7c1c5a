import type {} from 'vitest';

export { createDatabase, findPostgresBinaries, startPostgresServer, type DatabaseOptions, type PostgresServer } from './postgres-server.js';

/** The server a test project's global setup started (`global-setup.ts`), as tests `inject` it. */
export interface ProvidedPostgres {
  host: string;
  port: number;
  user: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres?: ProvidedPostgres;
  }
}

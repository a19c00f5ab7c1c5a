export { findPostgresBinaries, startPostgresServer, type PostgresServer } from './postgres-server.js';

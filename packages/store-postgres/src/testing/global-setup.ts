// A vitest global setup that starts one private PostgreSQL server for a test project and hands
// its address to the tests (`inject('postgres')`); each test store gets a database of its own.
import type { TestProject } from 'vitest/node';
import type {} from './index.js';
import { startPostgresServer, type PostgresServer } from './postgres-server.js';

let server: PostgresServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  server = await startPostgresServer();
  project.provide('postgres', { host: server.host, port: server.port, user: server.user });
}

export async function teardown(): Promise<void> {
  await server?.stop();
}

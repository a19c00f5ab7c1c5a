import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Every resource of every kind: keyed by (type, mesh, name), mesh '' for global kinds. The spec
 * is stored as the JSON text served to clients, so hot reads need no parse/stringify.
 */
export const resources = sqliteTable(
  'resources',
  {
    type: text('type').notNull(),
    mesh: text('mesh').notNull(),
    name: text('name').notNull(),
    spec: text('spec').notNull(),
    version: integer('version').notNull(),
    creationTime: text('creation_time').notNull(),
    modificationTime: text('modification_time').notNull(),
    labels: text('labels').notNull().default('{}'),
  },
  (table) => [primaryKey({ columns: [table.type, table.mesh, table.name] }), index('resources_mesh').on(table.mesh)],
);

/** Facts about this control plane that outlive a process (cluster id). */
export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

/**
 * One row per committed change, in commit order: the revision consumers resume from. Old rows
 * are pruned; a consumer from before the oldest kept row reads everything again.
 */
export const changes = sqliteTable('changes', {
  revision: integer('revision').primaryKey(),
  type: text('type').notNull(),
  mesh: text('mesh').notNull(),
  name: text('name').notNull(),
  operation: text('operation').notNull(),
});

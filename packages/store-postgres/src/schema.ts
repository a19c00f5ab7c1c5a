import { bigint, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/**
 * Every resource of every kind: keyed by (type, mesh, name), mesh '' for global kinds. The spec
 * is stored as the JSON text served to clients, so reads need no parse/stringify.
 */
export const resources = pgTable(
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

/**
 * One row per committed change, in commit order: the revision every instance and every
 * reconnecting consumer resumes from. Writers number revisions under a lock (not from a
 * sequence, which a rolled-back write would leave a gap in). Old rows are pruned; a consumer
 * from before the oldest kept row reads everything again.
 */
export const changes = pgTable('changes', {
  revision: bigint('revision', { mode: 'number' }).primaryKey(),
  type: text('type').notNull(),
  mesh: text('mesh').notNull(),
  name: text('name').notNull(),
  operation: text('operation').notNull(),
});

/** Facts about this control plane that outlive a process (cluster id). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

// Schemas of the API's bodies for the OpenAPI document, built from the kind registry: a kind's spec
// is its zod schema as the model declares it, wrapped with the meta every resource carries
// (docs/api.md, Resources). Schemas named here become components of the document.
import type { AnyKind } from '@mesh/model';
import { z } from 'zod';

const componentIds = new Map<z.ZodType, string>();

/** Names a schema as a component of the document (`#/components/schemas/<id>`); the first name given wins. */
export function component<T extends z.ZodType>(id: string, schema: T): T {
  if (!componentIds.has(schema)) componentIds.set(schema, id);
  return schema;
}

/** Every named schema, with its name. */
export const namedComponents = (): ReadonlyMap<z.ZodType, string> => componentIds;

export const timestamp = (description: string) => z.string().meta({ format: 'date-time', description, example: '2024-05-06T07:08:09.123Z' });

/** The standard error body (docs/api.md, Errors), in its key order. */
export const ErrorBodySchema = component(
  'Error',
  z
    .object({
      type: z.literal('/std-errors'),
      status: z.number().int(),
      title: z.string().meta({ description: 'What the request was doing (`Could not process a resource`), or the error (`Bad Request`).' }),
      detail: z.string(),
      invalid_parameters: z
        .array(z.object({ field: z.string(), reason: z.string() }))
        .optional()
        .meta({ description: 'Every violated rule, with its field path (`conf.split[0].weight`).' }),
      details: z.string().meta({ description: 'The same as `detail`.' }),
      causes: z
        .array(z.object({ field: z.string(), message: z.string() }))
        .optional()
        .meta({ description: 'The violated rules again, as `{field, message}`.' }),
    })
    .meta({
      description: 'The body of every error answer.',
      example: {
        type: '/std-errors',
        status: 400,
        title: 'Could not process a resource',
        detail: 'Resource is not valid',
        invalid_parameters: [{ field: 'conf', reason: 'cannot be empty' }],
        details: 'Resource is not valid',
        causes: [{ field: 'conf', message: 'cannot be empty' }],
      },
    }),
);

/** `{total, items, next}` (docs/api.md, Lists). */
export const collectionOf = (item: z.ZodType, nextDescription = 'The URL of the next page; null on the last one.') =>
  z.object({
    total: z.number().int().meta({ description: 'Items across every page.' }),
    items: z.array(item),
    next: z.string().nullable().meta({ description: nextDescription }),
  });

export const LabelsSchema = z.record(z.string(), z.string()).meta({
  description: 'Kubernetes-style labels; `mesh.io/origin` and `mesh.io/zone` are set by the control plane on synced copies.',
});

export interface KindSchemas {
  /** The kind's own fields, as its zod schema accepts them (and as they are returned). */
  spec: z.ZodType;
  /** A `PUT` body: meta, labels and the spec fields. */
  body: z.ZodType;
  /** The resource as `GET` returns it: meta, timestamps, labels and the spec fields. */
  resource: z.ZodType;
  /** `?format=k8s`: the spec under `spec`, the meta under `metadata`. */
  kubernetes: z.ZodType;
}

const schemasByKind = new Map<AnyKind, KindSchemas>();

/** The schemas of a kind, made once; a spec schema two kinds share is one component. */
export function kindSchemas(kind: AnyKind): KindSchemas {
  let schemas = schemasByKind.get(kind);
  if (schemas) return schemas;
  const spec = component(`${kind.name}Spec`, kind.schema as z.ZodType);
  // A targetRef policy carries its spec under `spec` (docs/policies.md).
  const specFields = kind.specField === undefined ? spec : z.object({ [kind.specField]: spec });
  const mesh = kind.scope === 'mesh' ? { mesh: z.string().meta({ description: 'The mesh it belongs to; the one in the path.' }) } : {};
  const name = z.string().meta({ description: 'Its name; the one in the path.' });
  const body = z.intersection(
    z.object({
      type: z.enum(kind.acceptedTypes as [string, ...string[]]),
      ...mesh,
      name,
      labels: LabelsSchema.optional(),
    }),
    specFields,
  );
  const resource = z.intersection(
    z.object({
      type: z.literal(kind.wireType),
      ...mesh,
      name,
      creationTime: timestamp('When it was created (RFC 3339, UTC, milliseconds).'),
      modificationTime: timestamp('When it was last changed.'),
      labels: LabelsSchema.optional(),
    }),
    specFields,
  );
  const kubernetes = z.object({
    apiVersion: z.literal('mesh.io/v1alpha1'),
    kind: z.literal(kind.name),
    ...mesh,
    metadata: z.object({ name: z.string(), creationTimestamp: z.string(), labels: LabelsSchema.optional() }),
    spec,
  });
  schemas = {
    spec,
    body: component(`${kind.name}Body`, body),
    resource: component(kind.name, resource),
    kubernetes: component(`${kind.name}Kubernetes`, kubernetes),
  };
  schemasByKind.set(kind, schemas);
  return schemas;
}

/** `{}`, or the warnings of an accepted write. */
export const WriteResultSchema = component(
  'WriteResult',
  z.object({ warnings: z.array(z.string()).optional() }).meta({ description: '`{}`, or `{"warnings": [...]}` when the write was accepted with warnings.' }),
);

// The documented example of each kind, from its descriptor (`example`): the OpenAPI document shows
// it as the body and path captures of the kind's requests. A kind without one is documented
// without one, and the OpenAPI test names it.
import type { AnyKind, KindExample } from '@mesh/model';

export { EXAMPLE_MESH, EXAMPLE_SERVICE } from '@mesh/model';

export const exampleOf = (kind: AnyKind): KindExample | undefined => kind.example;

/** The example's path captures: `{mesh, name}` or `{name}`. */
export const exampleParams = (example: KindExample): Record<string, string> =>
  example.mesh !== undefined ? { mesh: example.mesh, name: example.name } : { name: example.name };

/** The example's captures of a list path: `{mesh}`, or none for a global kind. */
export const exampleListParams = (example: KindExample): Record<string, string> => (example.mesh !== undefined ? { mesh: example.mesh } : {});

/** The example as a `PUT` body. */
export const exampleBody = (kind: AnyKind, example: KindExample): Record<string, unknown> => ({
  type: kind.acceptedTypes[0],
  ...(example.mesh !== undefined ? { mesh: example.mesh } : {}),
  name: example.name,
  ...example.spec,
});

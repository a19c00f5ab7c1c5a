// What every targetRef policy shares (docs/policies.md): the `targetRef` that names what a policy
// or one of its entries applies to, the rules it must follow where it appears, the `to` and
// `from` entries with their `default` conf, and references to backends.
import { z } from 'zod';
import { validateTags } from '../validation/tags.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goList, goStringMap, goUint, str } from '../wire.js';

/** The kinds a targetRef may name, from the least to the most specific (the order rules merge in). */
export const TARGET_REF_KINDS = ['Mesh', 'MeshSubset', 'MeshGateway', 'MeshService', 'MeshServiceSubset', 'MeshHTTPRoute'] as const;
export type TargetRefKind = (typeof TARGET_REF_KINDS)[number];

/** How specific a targetRef kind is: a higher rank wins when rules for the same traffic merge. */
export const targetRefRank = (kind: TargetRefKind): number => TARGET_REF_KINDS.indexOf(kind);

const targetRefShape = {
  kind: z.enum(TARGET_REF_KINDS).optional(),
  /** The service, gateway or route named (`MeshService`, `MeshServiceSubset`, `MeshGateway`, `MeshHTTPRoute`). */
  name: str(),
  /** The tags proxies or endpoints must have (`MeshSubset`, `MeshServiceSubset`, `MeshGateway`). */
  tags: goStringMap(),
  /** Reserved for references across meshes; never set today. */
  mesh: str(),
};

export const TargetRefSchema = z.object(targetRefShape);
export type TargetRef = z.infer<typeof TargetRefSchema>;

/** Where traffic goes: a service or a subset of it, with its share of the traffic. */
export const BackendRefSchema = z.object({ ...targetRefShape, weight: goUint(z.int().min(0)).optional() });
export type BackendRef = z.infer<typeof BackendRefSchema>;

/** A `default` conf: Go writes it even when empty, so an absent one reads as `{}` (every field of a conf is optional). */
export const defaultConf = <S extends z.ZodRawShape>(shape: S) => z.object(shape).prefault({} as z.input<z.ZodObject<S>>);

/** A `to` or `from` entry: the targets it configures, and its conf. */
export const targetRefEntry = <C extends z.ZodType>(conf: C) => z.object({ targetRef: TargetRefSchema, default: conf });
export type TargetRefEntry<Conf> = { targetRef: TargetRef; default: Conf };

/** A list of `to` or `from` entries, omitted when empty. */
export const targetRefEntries = <C extends z.ZodType>(conf: C) => goList(targetRefEntry(conf));

export const MUST_BE_DEFINED = 'must be defined';
export const MUST_NOT_BE_DEFINED = 'must not be defined';
export const MUST_NOT_BE_EMPTY = 'must not be empty';
export const NEEDS_AT_LEAST_ONE_ITEM = 'needs at least one item';
export const FROM_OR_TO_REQUIRED = "at least one of 'from', 'to' has to be defined";

const NAME = /^[0-9a-z-_]*$/;

/**
 * The rules of a targetRef where it appears: its kind must be one of `supported` (the top level,
 * `to` and `from` of each kind allow their own), and each kind takes a name, tags, both or neither.
 */
export function validateTargetRef(v: Violations, path: string, ref: TargetRef, supported: readonly TargetRefKind[]): void {
  const at = (field: string) => fieldPath(path, field);
  const { kind } = ref;
  if (kind === undefined) {
    v.add(at('kind'), MUST_BE_DEFINED);
    return;
  }
  if (!supported.includes(kind)) {
    v.add(at('kind'), 'value is not supported');
    return;
  }
  const mustNotBeSet = (field: 'name' | 'mesh' | 'tags', set: boolean) => {
    if (set) v.add(at(field), `must not be set with kind ${kind}`);
  };
  const requireName = () => {
    if (!ref.name) v.add(at('name'), `must be set with kind ${kind}`);
    if (ref.name && !NAME.test(ref.name)) v.add(at('name'), "invalid characters. Valid characters are numbers, lowercase latin letters and '-', '_' symbols.");
  };
  switch (kind) {
    case 'Mesh':
      if (ref.name) v.add(at('name'), `using name with kind ${kind} is not yet supported`);
      mustNotBeSet('mesh', ref.mesh !== undefined);
      mustNotBeSet('tags', ref.tags !== undefined);
      break;
    case 'MeshSubset':
      mustNotBeSet('name', ref.name !== undefined);
      mustNotBeSet('mesh', ref.mesh !== undefined);
      validateTags(v, at('tags'), ref.tags, {});
      break;
    case 'MeshService':
    case 'MeshHTTPRoute':
      requireName();
      mustNotBeSet('mesh', ref.mesh !== undefined);
      mustNotBeSet('tags', ref.tags !== undefined);
      break;
    case 'MeshServiceSubset':
    case 'MeshGateway':
      requireName();
      mustNotBeSet('mesh', ref.mesh !== undefined);
      validateTags(v, at('tags'), ref.tags, {});
      break;
  }
}

/** What a policy validates of its `to` or `from` entries: each one's targetRef, then its conf. */
export function validateEntries<Conf>(
  v: Violations,
  path: string,
  entries: ReadonlyArray<TargetRefEntry<Conf>> | undefined,
  supported: readonly TargetRefKind[],
  validateConf: (v: Violations, path: string, conf: Conf) => void,
): void {
  (entries ?? []).forEach((entry, i) => {
    const at = `${path}[${i}]`;
    validateTargetRef(v, fieldPath(at, 'targetRef'), entry.targetRef, supported);
    validateConf(v, fieldPath(at, 'default'), entry.default);
  });
}

/** `must have at least one defined: a, b` */
export const mustHaveAtLeastOne = (...fields: string[]): string => `must have at least one defined: ${fields.join(', ')}`;
/** `tag must have only one type defined: header, literal` */
export const mustHaveOnlyOne = (entity: string, ...fields: string[]): string => `${entity} must have only one type defined: ${fields.join(', ')}`;
/** `cluster must have exactly one defined: value, jsonPatches` */
export const mustHaveExactlyOneOf = (entity: string, ...fields: string[]): string => `${entity} must have exactly one defined: ${fields.join(', ')}`;

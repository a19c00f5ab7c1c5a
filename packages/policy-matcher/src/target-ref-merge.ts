// How the confs of the entries that apply to one subset become one conf (docs/matching.md,
// Merging): each conf is merged over the previous one as a JSON merge patch (RFC 7386: objects
// merge key by key, anything else replaces), lists whose name starts with `append` are
// concatenated instead, and a list merged by key collects the entries of every conf and merges
// those with an equal key.
export interface MergeOptions {
  /** A top-level list whose entries are merged by key: `{[key]: ..., [conf]: ...}` entries (route rules by their matches). */
  readonly byKey?: { readonly list: string; readonly key: string; readonly conf: string };
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A name of the lists that are appended to rather than replaced (`appendModifications`). */
const isAppendList = (key: string): boolean => /^append[A-Z]/.test(key);

/** RFC 7386: `patch` over `target`; a null in the patch removes the key. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * Equal as JSON values (key order aside). Keys are walked with `for...in`, which allocates nothing
 * on the engine's fast objects: the xDS server compares every proxy's rendered resources with the
 * ones they replace during a push (docs/xds.md, Pushing changes).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let at = 0; at < a.length; at++) if (!sameJson(a[at], b[at])) return false;
    return true;
  }
  if (!isObject(a) || !isObject(b)) return false;
  let keys = 0;
  for (const key in a) {
    if (!Object.hasOwn(b, key) || !sameJson(a[key], b[key])) return false;
    keys++;
  }
  for (const key in b) if (Object.hasOwn(b, key)) keys--;
  return keys === 0;
}

/**
 * Puts the concatenation of every conf's `append…` lists in place of the merged ones, through
 * nested objects, as the reference appends the slices of fields named `Append…`.
 */
function appendLists(merged: JsonObject, confs: readonly unknown[]): JsonObject {
  const result: JsonObject = { ...merged };
  for (const [key, value] of Object.entries(merged)) {
    const atKey = confs.map((conf) => (isObject(conf) ? conf[key] : undefined));
    if (isAppendList(key) && Array.isArray(value)) result[key] = atKey.flatMap((list): unknown[] => (Array.isArray(list) ? list : []));
    else if (isObject(value)) result[key] = appendLists(value, atKey.filter(isObject));
  }
  return result;
}

/** Every conf's entries of a list merged by key: one entry per distinct key, in order of first appearance. */
function mergeByKey(confs: readonly unknown[], byKey: NonNullable<MergeOptions['byKey']>): JsonObject[] | null {
  const groups: Array<{ key: unknown; confs: unknown[] }> = [];
  for (const conf of confs) {
    const entries = isObject(conf) ? conf[byKey.list] : undefined;
    for (const entry of Array.isArray(entries) ? entries : []) {
      const key = isObject(entry) ? entry[byKey.key] : undefined;
      const conf = isObject(entry) ? entry[byKey.conf] : undefined;
      const group = groups.find((candidate) => sameJson(candidate.key, key));
      if (group) group.confs.push(conf);
      else groups.push({ key, confs: [conf] });
    }
  }
  // No entries at all is a missing list, which the reference writes as null.
  if (groups.length === 0) return null;
  return groups.map(({ key, confs }) => ({ [byKey.key]: key, [byKey.conf]: mergeConfs(confs) }));
}

/** The confs merged in order, later ones winning; undefined for none. */
export function mergeConfs(confs: readonly unknown[], options: MergeOptions = {}): unknown {
  if (confs.length === 0) return undefined;
  let merged = confs.slice(1).reduce<unknown>((result, conf) => mergePatch(result, conf), confs[0]);
  if (!isObject(merged)) return merged;
  merged = appendLists(merged, confs);
  if (options.byKey) merged = { ...(merged as JsonObject), [options.byKey.list]: mergeByKey(confs, options.byKey) };
  return merged;
}

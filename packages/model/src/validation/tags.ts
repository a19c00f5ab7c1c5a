// Tag maps and selectors: the rules shared by every kind that selects proxies by tags.
import { fieldPath, indexPath, keyPath, Violations } from './violations.js';

export const SERVICE_TAG = 'mesh.io/service';
export const PROTOCOL_TAG = 'mesh.io/protocol';
export const ZONE_TAG = 'mesh.io/zone';

const TAG_NAME = /^[a-zA-Z0-9.\-_:/]*$/;
const TAG_VALUE = /^[a-zA-Z0-9.\-_:]*$/;
const SELECTOR_VALUE = /^([a-zA-Z0-9.\-_:/]*|\*)$/;

export type TagMap = Record<string, string>;

export interface TagRules {
  requireAtLeastOneTag?: boolean;
  requireService?: boolean;
  /** Selectors of the S-ONLY-SVC profile: exactly one tag, the service. */
  onlyService?: boolean;
  /** Map-level checks run before the per-key checks (protocol rules of a kind). */
  extraMapChecks?: Array<(v: Violations, path: string, tags: TagMap) => void>;
}

export interface SelectorRules extends TagRules {
  requireAtLeastOneSelector?: boolean;
  requireAtMostOneSelector?: boolean;
}

/** Tag keys in code-unit order, as the reference reports them. */
export const sortedKeys = (tags: TagMap | undefined): string[] => Object.keys(tags ?? {}).sort();

/** Tags as the command-line client prints them: `key=value` pairs, sorted, space-separated (several sets merged). */
export function tagPairs(tagSets: ReadonlyArray<TagMap | undefined>): string {
  const pairs = new Set<string>();
  for (const tags of tagSets) for (const [key, value] of Object.entries(tags ?? {})) pairs.add(`${key}=${value}`);
  return [...pairs].sort().join(' ');
}

function checkTagMap(v: Violations, path: string, tags: TagMap | undefined, rules: TagRules, valueOk: (value: string) => boolean, valueMessage: string): void {
  const map = tags ?? {};
  const keys = sortedKeys(map);
  if (rules.requireAtLeastOneTag && keys.length === 0) v.add(path, 'must have at least one tag');
  if (rules.onlyService && (keys.length !== 1 || !(SERVICE_TAG in map))) {
    v.add(path, `must consist of exactly one tag "${SERVICE_TAG}"`);
  }
  for (const check of rules.extraMapChecks ?? []) check(v, path, map);
  for (const key of keys) {
    if (key === '') v.add(path, 'tag name must be non-empty');
    if (!TAG_NAME.test(key)) {
      v.add(keyPath(path, key), 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores');
    }
    if (rules.onlyService && key !== SERVICE_TAG) v.add(keyPath(path, key), `tag "${key}" is not allowed`);
    const value = map[key] ?? '';
    if (value === '') v.add(keyPath(path, key), 'tag value must be non-empty');
    if (!valueOk(value)) v.add(keyPath(path, key), valueMessage);
  }
  if (rules.requireService && !(SERVICE_TAG in map)) v.add(path, `mandatory tag "${SERVICE_TAG}" is missing`);
}

/** A selector's `match` map: values may be `*`. */
export function validateSelector(v: Violations, path: string, tags: TagMap | undefined, rules: TagRules): void {
  checkTagMap(v, path, tags, rules, (value) => SELECTOR_VALUE.test(value),
    'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"');
}

/** A plain tag map (dataplane inbound tags, external service tags): no wildcards. */
export function validateTags(v: Violations, path: string, tags: TagMap | undefined, rules: TagRules): void {
  checkTagMap(v, path, tags, rules, (value) => TAG_VALUE.test(value),
    'tag value must consist of alphanumeric characters, dots, dashes and underscores');
}

/** A list of `{match}` selectors (`sources`, `destinations`, `selectors`). */
export function validateSelectors(v: Violations, path: string, selectors: Array<{ match?: TagMap | undefined }> | undefined, rules: SelectorRules): void {
  const items = selectors ?? [];
  if (rules.requireAtLeastOneSelector && items.length === 0) v.add(path, 'must have at least one element');
  items.forEach((selector, i) => {
    validateSelector(v, fieldPath(indexPath(path, i), 'match'), selector.match, rules);
    if (i > 0 && rules.requireAtMostOneSelector) v.add(indexPath(path, i), 'there can be at most one selector');
  });
}

/** The reference's selector profiles (docs/api.md, Kinds). */
export const SELECTOR_PROFILES = {
  /** S-ANY: list required, each selector at least one tag. */
  any: { requireAtLeastOneSelector: true, requireAtLeastOneTag: true },
  /** S-SVC: S-ANY plus the service tag. */
  service: { requireAtLeastOneSelector: true, requireAtLeastOneTag: true, requireService: true },
  /** S-ONLY-SVC: exactly one tag, the service (an empty one reports the two service messages only). */
  onlyService: { requireAtLeastOneSelector: true, requireService: true, onlyService: true },
} as const satisfies Record<string, SelectorRules>;

/** A `{match}` selector as written in requests. */
export const selectorsOf = (value: unknown): Array<{ match?: TagMap }> => (Array.isArray(value) ? (value as Array<{ match?: TagMap }>) : []);

/** Makes a map-level check that requires the protocol tag to be one of the given values. */
export function requireProtocol(...protocols: string[]) {
  return (v: Violations, path: string, tags: TagMap): void => {
    const value = tags[PROTOCOL_TAG];
    if (value === undefined) {
      v.add(path, 'protocol must be specified');
    } else if (!protocols.includes(value)) {
      v.add(keyPath(path, PROTOCOL_TAG), `must be one of the [${protocols.join(', ')}]`);
    }
  };
}

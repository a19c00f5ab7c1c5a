// Checks shared by the source/destination policy kinds (docs/api.md, Kinds).
import { durationNanos } from '../wire.js';
import { SELECTOR_PROFILES, validateSelectors, type TagMap } from './tags.js';
import type { Violations } from './violations.js';

type Selectors = Array<{ match?: TagMap | undefined }> | undefined;

/** Sources S-SVC and destinations S-ONLY-SVC: the policies applied from services to a service. */
export function validateServiceToService(v: Violations, spec: { sources?: Selectors; destinations?: Selectors }): void {
  validateSelectors(v, 'sources', spec.sources, SELECTOR_PROFILES.service);
  validateSelectors(v, 'destinations', spec.destinations, SELECTOR_PROFILES.onlyService);
}

/** No field of the message is set (an explicit `{}` or a message whose fields are all zero). */
export const isEmptyMessage = (value: object): boolean => Object.values(value).every((field) => field === undefined);

/** A zero count, or a zero normalised duration. Negative durations are not zero: the reference lets them pass. */
const isZero = (value: number | string): boolean => (typeof value === 'number' ? value === 0 : durationNanos(value) === 0);

/** Returns whether the value passed. */
export function requireNonZero(v: Violations, path: string, value: number | string): boolean {
  if (!isZero(value)) return true;
  v.add(path, 'has to be greater than 0');
  return false;
}

export function requireNonZeroWhenDefined(v: Violations, path: string, value: number | string | undefined): void {
  if (value !== undefined && isZero(value)) v.add(path, 'has to be greater than 0 when defined');
}

/** A percentage given as a number (FaultInjection, CircuitBreaker). */
export function validatePercentRange(v: Violations, path: string, value: number | undefined): void {
  if (value !== undefined && (value < 0 || value > 100)) v.add(path, 'has to be in [0.0 - 100.0] range');
}

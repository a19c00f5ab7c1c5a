// Checks of the values in targetRef policy confs, with the reference's messages (docs/policies.md,
// Validation). Durations arrive in Go's form ("1m30s"), percentages as a number or a decimal text.
import { parseDurationNanos } from '../wire.js';
import type { Violations } from './violations.js';

const nanosOf = (duration: string): number => parseDurationNanos(duration) ?? 0;

/** `must be greater than zero when defined` */
export function durationGreaterThanZeroOrNil(v: Violations, path: string, duration: string | undefined): void {
  if (duration !== undefined && nanosOf(duration) <= 0) v.add(path, 'must be greater than zero when defined');
}

/** `must not be negative when defined` */
export function durationNotNegativeOrNil(v: Violations, path: string, duration: string | undefined): void {
  if (duration !== undefined && nanosOf(duration) < 0) v.add(path, 'must not be negative when defined');
}

/** A required duration: `must be defined`, or `must not be negative when defined`. */
export function durationNotNegative(v: Violations, path: string, duration: string | undefined): void {
  if (duration === undefined) v.add(path, 'must be defined');
  else durationNotNegativeOrNil(v, path, duration);
}

/** `must be defined and greater than zero` */
export function durationGreaterThanZero(v: Violations, path: string, duration: string): void {
  if (nanosOf(duration) <= 0) v.add(path, 'must be defined and greater than zero');
}

/** `must be greater than: 50ms`, the minimum written as Go writes durations. */
export function durationGreaterThan(v: Violations, path: string, duration: string, minNanos: number, minText: string): void {
  if (nanosOf(duration) <= minNanos) v.add(path, `must be greater than: ${minText}`);
}

/** An unsigned count: `must be greater than <min>`. */
export function integerGreaterThan(v: Violations, path: string, value: number, min: number): void {
  if (value <= min) v.add(path, `must be greater than ${min}`);
}

export function integerGreaterThanZeroOrNil(v: Violations, path: string, value: number | undefined): void {
  if (value !== undefined) integerGreaterThan(v, path, value, 0);
}

/** A signed count: `must be greater than zero when defined`. */
export function valueGreaterThanZeroOrNil(v: Violations, path: string, value: number | undefined): void {
  if (value !== undefined && value <= 0) v.add(path, 'must be greater than zero when defined');
}

const UINT_PERCENT_RANGE = 'has to be in [0 - 100] range';

/** An integer percentage: `has to be in [0 - 100] range`. */
export function intPercentageOrNil(v: Violations, path: string, value: number | undefined): void {
  if (value !== undefined && (value < 0 || value > 100)) v.add(path, UINT_PERCENT_RANGE);
}

/**
 * The number an IntOrString holds, as the reference's decimal parser reads it: an integer, or a
 * decimal text ("50.5", "1e2"); undefined when the text is not a number.
 */
export function decimalOf(value: number | string): number | undefined {
  if (typeof value === 'number') return value;
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value) ? Number(value) : undefined;
}

/** A percentage as an integer or a decimal text: `string has to be a valid number`, `has to be in [0.0 - 100.0] range`. */
export function percentage(v: Violations, path: string, value: number | string | undefined): void {
  if (value === undefined) {
    v.add(path, 'must be defined');
    return;
  }
  const number = decimalOf(value);
  if (number === undefined) v.add(path, 'string has to be a valid number');
  const checked = number ?? 0;
  if (checked < 0 || checked > 100) v.add(path, 'has to be in [0.0 - 100.0] range');
}

export function percentageOrNil(v: Violations, path: string, value: number | string | undefined): void {
  if (value !== undefined) percentage(v, path, value);
}

/** `must be greater than: 0` for an IntOrString; an invalid text counts as zero. */
export function intOrStringGreaterThan(v: Violations, path: string, value: number | string, min: number): void {
  const number = decimalOf(value);
  if (number === undefined) v.add(path, 'string has to be a valid number');
  if ((number ?? 0) <= min) v.add(path, `must be greater than: ${min}`);
}

/** `must be less than: 100` for an IntOrString; an invalid text counts as zero. */
export function intOrStringLessThan(v: Violations, path: string, value: number | string, max: number): void {
  const number = decimalOf(value);
  if (number === undefined) v.add(path, 'string has to be a valid number');
  if ((number ?? 0) >= max) v.add(path, `must be less than: ${max}`);
}

/** An HTTP status: `must be in range [100, 600)`. */
export function statusCode(v: Violations, path: string, status: number): void {
  if (status < 100 || status >= 600) v.add(path, 'must be in range [100, 600)');
}

/** A bandwidth such as `10kbps`, `5 mbps` (a unit somewhere in the text is enough, as for the reference). */
export function bandwidth(v: Violations, path: string, value: string): void {
  if (value === '') v.add(path, 'must be defined');
  else if (!/\d*\s?[gmk]bps/.test(value)) v.add(path, 'has to be in kbps/mbps/gbps units');
}

const WINDOWS_PATH = /^[a-zA-Z]:\\(?:[^\\/:*?"<>|\r\n]+\\)*[^\\/:*?"<>|\r\n]*$/;
// eslint-disable-next-line no-control-regex -- a NUL byte cannot be part of a path
const UNIX_PATH = /^(\/[^/\x00]*)+\/?$/;

/** A file path as the reference's path check reads one: absolute, Unix or Windows style. */
export const isFilePath = (path: string): boolean => WINDOWS_PATH.test(path) ? path.length - 3 <= 32767 : UNIX_PATH.test(path);

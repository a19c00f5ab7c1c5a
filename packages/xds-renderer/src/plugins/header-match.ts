// Request and response header matches of the targetRef policies (`Exact` unless told) as Envoy
// header matchers.
import type { HttpRouteMatch } from '@mesh/model';
import type { JsonObject } from '../envoy.js';

type HeaderMatch = NonNullable<HttpRouteMatch['headers']>[number];

const googleRe2 = (regex: string): JsonObject => ({ googleRe2: {}, regex });

/**
 * One header match. A route's prefix match of nothing asks for the header's presence (Envoy
 * wants a prefix); MeshRetry passes it on as it is.
 */
export function headerMatcher(header: HeaderMatch, options: { emptyPrefixIsPresence?: boolean } = {}): JsonObject {
  const name = header.name;
  const value = header.value ?? '';
  switch (header.type ?? 'Exact') {
    case 'Present':
      return { name, presentMatch: true };
    case 'Absent':
      return { name, presentMatch: false };
    case 'RegularExpression':
      return { name, stringMatch: { safeRegex: googleRe2(value) } };
    case 'Prefix':
      return value === '' && options.emptyPrefixIsPresence ? { name, presentMatch: true } : { name, stringMatch: { prefix: value } };
    default:
      return { name, stringMatch: { exact: value } };
  }
}

export const regexMatcher = googleRe2;

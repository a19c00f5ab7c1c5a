// Resource name rules (docs/api.md, Resources).
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LOOSE = /^[0-9a-z-_.]*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const MAX_NAME_LENGTH = 253;

export const NAME_MESSAGES = {
  empty: 'cannot be empty',
  tooLong: `value length must less or equal ${MAX_NAME_LENGTH}`,
  subdomain:
    "invalid characters. A lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  meshChars: "invalid characters. Valid characters are numbers, lowercase latin letters and '-', '_', '.' symbols.",
  dnsLabel:
    "invalid characters. A zone name must be a single lowercase RFC 1123 label: lower case alphanumeric characters or '-', starting and ending with an alphanumeric character, without dots",
} as const;

/**
 * The message for a bad resource name, or undefined when it is fine. Creates use the strict
 * subdomain rule; updates also accept the older, looser names so existing resources stay editable.
 */
export function checkResourceName(name: string, strict: boolean): string | undefined {
  if (name === '') return NAME_MESSAGES.empty;
  if (name.length > MAX_NAME_LENGTH) return NAME_MESSAGES.tooLong;
  if (SUBDOMAIN.test(name)) return undefined;
  if (strict) return NAME_MESSAGES.subdomain;
  return LOOSE.test(name) ? undefined : NAME_MESSAGES.meshChars;
}

/** The message for a bad mesh name in a body, or undefined. */
export function checkMeshName(mesh: string): string | undefined {
  if (mesh === '') return NAME_MESSAGES.empty;
  if (mesh.length > MAX_NAME_LENGTH) return NAME_MESSAGES.tooLong;
  if (!LOOSE.test(mesh)) return NAME_MESSAGES.meshChars;
  return undefined;
}

/** Zone names are one DNS label. */
export const isDnsLabel = (name: string): boolean => DNS_LABEL.test(name) && name.length <= 63;

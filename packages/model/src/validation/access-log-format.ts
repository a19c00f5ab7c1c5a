// Envoy access-log format strings as the reference parses them (mesh logging backends): text
// with `%COMMAND(args):limit%` operators. Only well-formedness is checked; any upper-case
// command name is accepted, as in the reference.
const COMMAND = /^%([A-Z_0-9]+)(?:\(([^)]*)\))?(?::([0-9]+))?%/;
// eslint-disable-next-line no-control-regex -- a NUL byte in a header name is refused as a newline is
const NEWLINE = /[\x00\r\n]/;
const START_TIME_NEWLINE = /%[-_0^#]*[1-9]*n/;

const DESCRIPTORS: Record<string, string> = {
  REQ: '%REQ(X?Y):Z%',
  RESP: '%RESP(X?Y):Z%',
  TRAILER: '%TRAILER(X?Y):Z%',
  DYNAMIC_METADATA: '%DYNAMIC_METADATA(NAMESPACE:KEY*):Z%',
  FILTER_STATE: '%FILTER_STATE(KEY):Z%',
};
const describe = (command: string): string => DESCRIPTORS[command] ?? `%${command}%`;

/** Why one operator is malformed, or undefined. */
function operatorError(token: string, command: string, args: string | undefined, limit: string | undefined): string | undefined {
  // `%REQ()%` has (empty) arguments, `%REQ%` and `%REQ:10%` have none.
  const noArguments = args === undefined;
  const q = JSON.stringify;
  switch (command) {
    case 'REQ':
    case 'RESP':
    case 'TRAILER': {
      if (noArguments) {
        return `command ${q(describe(command))} requires a header and optional alternative header names as its arguments, instead got ${q(token)}`;
      }
      const headers = args.split('?');
      if (headers.length > 2) return `more than 1 alternative header specified in ${q(token)}`;
      if (headers.some((h) => NEWLINE.test(h))) return `header name contains a newline in ${q(token)}`;
      return undefined;
    }
    case 'DYNAMIC_METADATA':
      return noArguments ? `command ${q(describe(command))} requires a filter namespace and optional path as its arguments, instead got ${q(token)}` : undefined;
    case 'FILTER_STATE':
      return args ? undefined : `command ${q(describe(command))} requires a key as its argument, instead got ${q(token)}`;
    case 'START_TIME':
      return args && START_TIME_NEWLINE.test(args) ? `start time format string contains a newline in ${q(token)}` : undefined;
    default:
      return noArguments && limit === undefined ? undefined : `command ${q(describe(command))} doesn't support arguments or max length constraint, instead got ${q(token)}`;
  }
}

/** The reference's message for a bad format string (`format string is not valid: ...`), or undefined. */
export function accessLogFormatError(format: string): string | undefined {
  for (let pos = 0; pos < format.length; pos++) {
    if (format[pos] !== '%') continue;
    const tail = format.slice(pos);
    const match = COMMAND.exec(tail);
    if (!match) {
      return `format string is not valid: expected a command operator to start at position ${pos + 1}, instead got: ${JSON.stringify(tail)}`;
    }
    const [token, command, args, limit] = match;
    const error = operatorError(token, command!, args, limit);
    if (error) return `format string is not valid: ${error}`;
    pos += token.length - 1;
  }
  return undefined;
}

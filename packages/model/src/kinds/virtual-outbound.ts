import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { isIpAddress } from '../validation/scalars.js';
import { SELECTOR_PROFILES, SERVICE_TAG, validateSelectors } from '../validation/tags.js';
import { fieldPath, indexPath, Violations } from '../validation/violations.js';
import { list, message, str } from '../wire.js';
import { selectorList } from './common.js';

export const VirtualOutboundSpecSchema = message({
  selectors: selectorList(),
  conf: message({
    host: str(),
    port: str(),
    parameters: list(message({ name: str(), tagKey: str() })),
  }).optional(),
});
export type VirtualOutboundSpec = z.infer<typeof VirtualOutboundSpecSchema>;

interface Parameter {
  name?: string | undefined;
  tagKey?: string | undefined;
}
/** What evaluating the host and port templates reads of a conf. */
interface VirtualOutboundConf {
  host?: string | undefined;
  port?: string | undefined;
  parameters?: Parameter[] | undefined;
}

type Evaluation<T> = { ok: true; value: T } | { ok: false; error: string };

// Host and port are Go text/templates. Only what a virtual outbound needs is supported: text,
// `{{.param}}` lookups, trim markers (`{{- `, ` -}}`) and comments; anything else fails to compile.
type TemplatePart = { text: string } | { param: string };

const TEMPLATE_SPACE = /[ \t\r\n]/;
const TEMPLATE_FIELD = /^\.([\p{L}_][\p{L}\p{Nd}_]*)$/u;
const TEMPLATE_IDENTIFIER = /^[\p{L}_][\p{L}\p{Nd}_]*/u;
const TEMPLATE_COMMENT = /^\/\*[\s\S]*\*\/$/;
/** Keywords and builtin functions: valid Go template syntax, just not supported here. */
const GO_TEMPLATE_WORDS = new Set(
  'and block break call continue define else end eq false ge gt html if index js le len lt ne nil not or print printf println range slice template true urlquery with'.split(' '),
);

/** Compiles a template; errors read like Go's (`template: :1: function "x" not defined`). */
function compileTemplate(source: string): { parts: TemplatePart[] } | { error: string } {
  const parts: TemplatePart[] = [];
  let position = 0;
  let trimLeadingSpace = false;
  for (;;) {
    const open = source.indexOf('{{', position);
    let text = source.slice(position, open < 0 ? undefined : open);
    if (trimLeadingSpace) text = text.replace(/^[ \t\r\n]+/, '');
    if (open < 0) {
      parts.push({ text });
      return { parts };
    }
    let start = open + 2;
    if (source[start] === '-' && TEMPLATE_SPACE.test(source[start + 1] ?? '')) {
      text = text.replace(/[ \t\r\n]+$/, '');
      start += 2;
    }
    parts.push({ text });
    const close = source.indexOf('}}', start);
    let body = source.slice(start, close < 0 ? undefined : close);
    trimLeadingSpace = close >= 0 && /[ \t\r\n]-$/.test(body);
    if (trimLeadingSpace) body = body.slice(0, -2);

    const fail = (reason: string) => ({ error: `template: :${source.slice(0, open).split('\n').length}: ${reason}` });
    const action = body.trim();
    // Go resolves a function name as soon as it reads it, before looking for the closing braces.
    const word = TEMPLATE_IDENTIFIER.exec(action)?.[0];
    if (word !== undefined && !GO_TEMPLATE_WORDS.has(word)) return fail(`function "${word}" not defined`);
    if (close < 0) return fail('unclosed action');
    position = close + 2;
    if (TEMPLATE_COMMENT.test(body)) continue;
    const field = TEMPLATE_FIELD.exec(action)?.[1];
    if (field !== undefined) parts.push({ param: field });
    else if (action === '') return fail('missing value for command');
    else return fail(`unsupported action {{${body}}}`);
  }
}

const parameterTag = (parameter: Parameter): string => parameter.tagKey ?? parameter.name ?? '';

/** Renders a template with each parameter's value read from the tag it names. */
function renderTemplate(conf: VirtualOutboundConf, template: string, tags: Record<string, string>): Evaluation<string> {
  const compiled = compileTemplate(template);
  if ('error' in compiled) return { ok: false, error: `failed compiling gotemplate error='${compiled.error}'` };
  const values = new Map<string, string>();
  for (const parameter of conf.parameters ?? []) {
    const tag = parameterTag(parameter);
    const value = Object.hasOwn(tags, tag) ? tags[tag] : undefined;
    if (value !== undefined) values.set(parameter.name ?? '', value);
  }
  // A missing value prints as Go prints a missing map key.
  const value = compiled.parts.map((part) => ('text' in part ? part.text : (values.get(part.param) ?? '<no value>'))).join('');
  return { ok: true, value };
}

/** govalidator's IsDNSName, the reference's check: looser than a lowercase domain (capitals, `_`, a trailing dot). */
const GO_DNS_NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_-]{0,62}(\.[a-zA-Z0-9_][a-zA-Z0-9_-]{0,62})*[._]?$/;
const isDnsName = (name: string): boolean =>
  name !== '' && name.replaceAll('.', '').length <= 255 && !isIpAddress(name) && GO_DNS_NAME.test(name);

/** The hostname a virtual outbound gives a proxy with these tags. */
export function evaluateVirtualOutboundHost(conf: VirtualOutboundConf, tags: Record<string, string>): Evaluation<string> {
  const rendered = renderTemplate(conf, conf.host ?? '', tags);
  if (!rendered.ok || isDnsName(rendered.value)) return rendered;
  return { ok: false, error: `evaluation of template with parameters didn't return a valid dns name result='${rendered.value}'` };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The port a virtual outbound gives a proxy with these tags. */
export function evaluateVirtualOutboundPort(conf: VirtualOutboundConf, tags: Record<string, string>): Evaluation<number> {
  const rendered = renderTemplate(conf, conf.port ?? '', tags);
  if (!rendered.ok) return rendered;
  const text = rendered.value;
  // Parsed as Go's strconv.ParseInt(text, 10, 64).
  const port = /^[+-]?\d+$/.test(text) ? BigInt(text) : undefined;
  if (port === undefined || port < INT64_MIN || port > INT64_MAX) {
    return { ok: false, error: `evaluation of template with parameters didn't evaluate to a parsable number result='${text}'` };
  }
  if (port < 1n || port > 65535n) {
    return { ok: false, error: `evaluation of template returned a port outside of the range [1..65535] result='${port}'` };
  }
  return { ok: true, value: Number(port) };
}

/** The tag-name characters of validation/tags.ts (which keeps its pattern private). */
const TAG_NAME = /^[a-zA-Z0-9.\-_:/]*$/;
const TEMPLATE_KEY = /^[a-zA-Z0-9]+$/;

function validateParameters(v: Violations, parameters: Parameter[]): void {
  const names = new Set<string>();
  let hasService = false;
  parameters.forEach((parameter, i) => {
    const path = indexPath('conf.parameters', i);
    const name = parameter.name ?? '';
    if (names.has(name)) v.add(fieldPath(path, 'name'), 'name is already used');
    names.add(name);
    if (parameter.tagKey !== undefined) {
      hasService ||= parameter.tagKey === SERVICE_TAG;
      if (!TAG_NAME.test(parameter.tagKey)) v.add(fieldPath(path, 'tagKey'), 'must be a valid tag name');
    } else if (!TAG_NAME.test(name)) {
      v.add(fieldPath(path, 'name'), 'must be a valid tag name if you are not setting tagKey');
    }
    if (!TEMPLATE_KEY.test(name)) v.add(fieldPath(path, 'name'), 'must consist of alphanumeric characters to be used as a gotemplate key');
  });
  if (!hasService) v.add('conf.parameters', `must contain a parameter with ${SERVICE_TAG} as a tagKey`);
}

/** Tags giving every parameter the same sample value, to check that a template renders sensibly. */
const sampleTags = (conf: VirtualOutboundConf, value: string): Record<string, string> =>
  Object.fromEntries((conf.parameters ?? []).map((parameter) => [parameterTag(parameter), value]));

function checkTemplate(v: Violations, path: string, template: string | undefined, evaluate: () => Evaluation<unknown>): void {
  if (!template) {
    v.add(path, 'has to be defined');
    return;
  }
  const evaluation = evaluate();
  if (!evaluation.ok) v.add(path, `template pre evaluation failed with error='${evaluation.error}'`);
}

export function validateVirtualOutbound(spec: VirtualOutboundSpec) {
  const v = new Violations();
  validateSelectors(v, 'selectors', spec.selectors, SELECTOR_PROFILES.any);
  const conf = spec.conf;
  if (conf === undefined) {
    v.add('conf', 'has to be defined');
    return v.list;
  }
  validateParameters(v, conf.parameters ?? []);
  checkTemplate(v, 'conf.host', conf.host, () => evaluateVirtualOutboundHost(conf, sampleTags(conf, 'dummy')));
  checkTemplate(v, 'conf.port', conf.port, () => evaluateVirtualOutboundPort(conf, sampleTags(conf, '1')));
  return v.list;
}

export const virtualOutboundKind = defineKind({
  name: 'VirtualOutbound',
  cliNames: { singular: 'virtual-outbound', plural: 'virtual-outbounds' },
  path: 'virtual-outbounds',
  scope: 'mesh',
  displayName: 'Virtual Outbounds',
  singularDisplayName: 'Virtual Outbound',
  selection: 'selectors',
  // Virtual outbounds give VIP outbounds to every transparent proxy.
  reach: 'everyProxy',
  affects: 'selectedProxies',
  inspectable: false,
  schema: VirtualOutboundSpecSchema,
  validate: validateVirtualOutbound,
  example: demo.inMesh('service-hostnames', {
    selectors: demo.EVERY_SERVICE,
    conf: { host: '{{.svc}}.mesh', port: '80', parameters: [{ name: 'svc', tagKey: 'mesh.io/service' }] },
  }),
});

import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const ProxyTemplateSpecSchema = message({});
export type ProxyTemplateSpec = z.infer<typeof ProxyTemplateSpecSchema>;

export function validateProxyTemplate(spec: ProxyTemplateSpec) {
  const v = new Violations();
  return v.list;
}

export const proxyTemplateKind = defineKind({
  name: 'ProxyTemplate',
  path: 'proxytemplates',
  scope: 'mesh',
  displayName: 'Proxy Templates',
  singularDisplayName: 'Proxy Template',
  selection: 'selectors',
  schema: ProxyTemplateSpecSchema,
  validate: validateProxyTemplate,
});

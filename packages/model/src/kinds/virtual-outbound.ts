import type { z } from 'zod';
import { defineKind } from '../kind.js';
import { Violations } from '../validation/violations.js';
import { message } from '../wire.js';

export const VirtualOutboundSpecSchema = message({});
export type VirtualOutboundSpec = z.infer<typeof VirtualOutboundSpecSchema>;

export function validateVirtualOutbound(spec: VirtualOutboundSpec) {
  const v = new Violations();
  return v.list;
}

export const virtualOutboundKind = defineKind({
  name: 'VirtualOutbound',
  path: 'virtual-outbounds',
  scope: 'mesh',
  displayName: 'Virtual Outbounds',
  singularDisplayName: 'Virtual Outbound',
  selection: 'selectors',
  schema: VirtualOutboundSpecSchema,
  validate: validateVirtualOutbound,
});

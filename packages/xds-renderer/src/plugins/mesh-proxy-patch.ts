// MeshProxyPatch (docs/policies.md): the modifications of the proxy's rule, in order, on what every
// generator and policy produced.
import { applyModifications } from '../modifications.js';
import { ORIGIN } from '../resource-set.js';
import type { Plugin } from './common.js';

export const applyMeshProxyPatch: Plugin<'MeshProxyPatch'> = (input, rules) => {
  applyModifications(input.resources, rules.singleItem[0]?.conf.appendModifications ?? [], ORIGIN.meshProxyPatch);
};

export { registerCaHooks } from './hooks.js';
export { issueMeshIdentity, loadMeshCa, type IssuedIdentity, type MeshCa } from './identity.js';
export { generateSigningKeyData } from './signing-key.js';

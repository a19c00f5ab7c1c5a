// What the kinds' documented examples (`example` on each descriptor) share. Together the examples
// form one small mesh, `demo`: a web proxy, policies toward its backend, a gateway, a zone with its
// ingress and egress. Every request the OpenAPI document shows succeeds once the examples before
// it (in registry order) have been sent; the http-api OpenAPI test sends them all.
import type { KindExample } from './kind.js';

/** The mesh every mesh-scoped example lives in; the Mesh example creates it. */
export const EXAMPLE_MESH = 'demo';
/** The service of the example proxy, so its service insight exists. */
export const EXAMPLE_SERVICE = 'web';

export const FROM_WEB = [{ match: { 'mesh.io/service': 'web' } }];
export const TO_BACKEND = [{ match: { 'mesh.io/service': 'backend' } }];
export const EVERY_SERVICE = [{ match: { 'mesh.io/service': '*' } }];
export const MESH = { kind: 'Mesh' };
export const WEB = { kind: 'MeshService', name: EXAMPLE_SERVICE };
export const BACKEND = { kind: 'MeshService', name: 'backend' };

/** An example of a mesh-scoped kind, in the example mesh. */
export const inMesh = (name: string, spec: Record<string, unknown>): KindExample => ({ mesh: EXAMPLE_MESH, name, spec });

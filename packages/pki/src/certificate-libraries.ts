// The certificate libraries, loaded at their first use: together they take about a third of a
// second to load, and a control plane starting on a work directory that already holds its
// certificates does not need them before it serves (docs/architecture.md, Start-up). They are
// loaded with `require`, which returns a module only once it is whole; an `import()` racing other
// imports of the same CommonJS modules was seen to get them half-loaded.
import { createRequire } from 'node:module';

type X509 = typeof import('@peculiar/x509');
type Selfsigned = typeof import('selfsigned');

const require = createRequire(import.meta.url);
let x509Library: X509 | undefined;
let selfsignedLibrary: Selfsigned | undefined;

/** @peculiar/x509. */
export const x509 = (): X509 => (x509Library ??= require('@peculiar/x509') as X509);

/** selfsigned. */
export const selfsigned = (): Selfsigned => (selfsignedLibrary ??= require('selfsigned') as Selfsigned);

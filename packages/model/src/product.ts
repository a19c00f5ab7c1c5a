/**
 * The product name and version every binary reports: `version` and `--version` of each command, `GET /`,
 * the zone sync handshake, and `version.meshDp` of a proxy's insight.
 */
export const PRODUCT = 'Mesh';
export const PRODUCT_VERSION = '2.5.0';

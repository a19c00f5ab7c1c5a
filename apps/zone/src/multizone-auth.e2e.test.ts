// End to end: a global that requires zone tokens (multizone.global.kds.authn.type: zoneToken)
// refuses a zone without one and takes the zone that presents its token (docs/multizone.md,
// Authentication).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startControlPlane, zoneOf, type ControlPlaneProcess } from './testing/process.js';

const started: ControlPlaneProcess[] = [];
afterAll(async () => {
  for (const cp of started.reverse()) await cp.stop();
});

/** Reads until the check passes; the test's timeout ends a wait that never does. */
async function eventually<T>(read: () => T | Promise<T>, check: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a global that requires zone tokens', () => {
  it('refuses a zone without a token and takes the zone with its token of scope cp', async () => {
    const global = await startControlPlane({ binary: 'mesh-global', env: { MESH_MULTIZONE_GLOBAL_KDS_AUTHN_TYPE: 'zoneToken' } });
    started.push(global);
    const issued = await fetch(`${global.url}/tokens/zone`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ zone: 'zone-1', scope: ['cp'], validFor: '24h' }) });
    expect(issued.status).toBe(200);
    const tokenFile = join(global.workDir, 'zone-1.token');
    writeFileSync(tokenFile, `${await issued.text()}\n`);

    const stranger = await startControlPlane({ env: zoneOf(global, 'zone-2'), waitUntilReady: false });
    started.push(stranger);
    await eventually(() => stranger.output(), (output) => output.includes('a zone token is required'));
    // Its diagnostics server may listen a moment after zone sync was refused: it is not ready, ever.
    const readiness = () => fetch(`http://127.0.0.1:${stranger.ports.diagnostics}/ready`).then((res) => res.status, () => undefined);
    expect(await eventually(readiness, (status) => status !== undefined)).toBe(503);

    const zone = await startControlPlane({ env: { ...zoneOf(global, 'zone-1'), MESH_MULTIZONE_ZONE_KDS_AUTHN_ZONE_TOKEN_FILE: tokenFile } });
    started.push(zone);
    const zones = await eventually(
      async () => (await (await fetch(`${global.url}/status/zones`)).json()) as Array<{ name: string; active: boolean }>,
      (list) => list.some((z) => z.name === 'zone-1' && z.active),
    );
    expect(zones.map((z) => z.name)).toEqual(['zone-1']);
  });
});

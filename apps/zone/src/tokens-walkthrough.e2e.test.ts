// The README's "Tokens and API access", run as written against the real zone binary: the admin
// token read from localhost, the restart without the loopback rule, then jane's identity, her 403
// on a secret and a forged token's 401, each block by bash and checked against what the README
// says it prints.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlaneProcess, type Ports } from './testing/process.js';
import { markdownSection, REPOSITORY, runShell, shellBlocks } from './testing/walkthrough.js';

let cp: ControlPlaneProcess & { ports: Ports };
let blocks: string[];

beforeAll(async () => {
  blocks = shellBlocks(markdownSection('README.md', '## Tokens and API access'));
  cp = await startControlPlane();
});

afterAll(async () => {
  await cp?.stop();
});

/** The README's address, pointed at this test's control plane. */
const localise = (text: string) => text.replaceAll('localhost:5681', `127.0.0.1:${cp.ports.http}`);

const json = (line: string | undefined): any => JSON.parse(line ?? 'null');

describe('README: tokens and API access', () => {
  it('restarts the control plane of `npm start` with loopback callers counting as anyone else', () => {
    expect(blocks).toHaveLength(4);
    expect(blocks[1]!.trim()).toBe('MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN=false npm start');
    expect(JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')).scripts.start).toContain('node apps/zone/dist/main.js');
  });

  it('shows the admin, then jane, her 403 and a forged token\'s 401, as written', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mesh-tokens-'));
    const run = async (block: string) => {
      const { code, stdout, stderr } = await runShell(localise(block), cwd);
      expect({ code, stderr }, block).toEqual({ code: 0, stderr: '' });
      return stdout.trim().split('\n');
    };

    // From localhost, whatever the token: the admin.
    expect(json((await run(blocks[0]!))[0])).toEqual({ name: 'mesh-system:admin', groups: ['mesh-system:admin', 'mesh-system:authenticated'] });
    expect(decodeJwt(readFileSync(join(cwd, 'admin.jwt'), 'utf8').trim())).toMatchObject({ Name: 'mesh-system:admin' });

    await cp.stop();
    cp = await startControlPlane({ workDir: cp.workDir, ports: cp.ports, env: { MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false' } });

    const [anonymous, jane] = await run(blocks[2]!);
    expect(json(anonymous)).toEqual({ name: 'mesh-system:anonymous', groups: ['mesh-system:unauthenticated'] });
    expect(json(jane)).toEqual({ name: 'jane', groups: ['team-a', 'mesh-system:authenticated'] });
    expect(decodeJwt(readFileSync(join(cwd, 'web-1.token'), 'utf8'))).toMatchObject({ Name: 'web-1', Mesh: 'default' });

    const [forbidden, unauthenticated] = await run(blocks[3]!);
    expect(json(forbidden)).toMatchObject({
      type: '/std-errors',
      status: 403,
      title: 'Access Denied',
      detail: 'user "jane/team-a,mesh-system:authenticated" cannot access the resource of type "GlobalSecret"',
    });
    expect(json(unauthenticated)).toMatchObject({ type: '/std-errors', status: 401, title: 'Invalid authentication data', detail: 'Unauthenticated' });
  }, 120_000);
});

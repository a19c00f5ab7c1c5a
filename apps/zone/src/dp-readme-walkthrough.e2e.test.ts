// apps/dp/README.md's examples, run as written: every `sh` block, in order, by bash, from a
// directory laid out as the repository's root (`apps`, `examples`, and `data` as the control
// plane's work directory), against the real zone binary and real Envoy, with `meshctl` on PATH;
// then docs/xds.md's fetch of monitoring assignments. Only port numbers change, to free ones.
// What the blocks start in the background (mesh-dp, Python servers) is stopped with their shells'
// process groups.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, requireEnvoy } from './testing/envoy.js';
import { type ControlPlaneProcess, freePort, type Ports, startControlPlane } from './testing/process.js';
import { freePortsFor, markdownSection, REPOSITORY, repositoryLike, runShell, ShellSession, shellBlocks, stopProcessGroup, withPorts } from './testing/walkthrough.js';

const envoy = requireEnvoy('dp-readme-walkthrough.e2e');

/** How long a proxy may take to connect and be configured. */
const CONNECTS_MS = 90_000;

const readme = markdownSection('apps/dp/README.md', '# mesh-dp');
const [runner, metrics, accessLogs, healthChecks, dns, ...others] = shellBlocks(readme);
const assignments = shellBlocks(markdownSection('docs/xds.md', '## Proxy metrics and monitoring assignments'));
/** The one comment of the metrics example that is no output: it says what the next command starts. */
const METRICS_PROSE = '# The application, with its own metrics on :8080/metrics.\n';

let cp: ControlPlaneProcess & { ports: Ports };
let ports: Map<number, number>;
let session: ShellSession;
/** The shell's environment: `meshctl` on PATH, as an installed one is. */
let env: Record<string, string>;

const api = async (path: string): Promise<any> => (await fetch(`${cp.url}${path}`)).json();
const port = (documented: number): number => ports.get(documented)!;

/** Every `# ` line of the block that comes after a command: what it prints, one line each (a line starting with a space goes on the one before). */
function documentedLines(block: string): string {
  const lines = block.trimEnd().split('\n');
  const output: string[] = [];
  for (const line of lines) {
    if (!line.startsWith('# ')) continue;
    const text = line.slice(2);
    if (text.startsWith(' ')) output[output.length - 1] += text.trimStart();
    else output.push(text);
  }
  return output.map((line) => `${line}\n`).join('');
}

/**
 * The documented output as a pattern: `…` stands for what varies (a version, further fields or
 * lines); the last line may end without a newline, as a JSON answer does.
 */
const shapeOf = (documented: string): RegExp =>
  new RegExp(`^${documented.replace(/\n$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('…', '[\\s\\S]*?')}\\n?$`);

/** Runs a block on this test's ports; it must exit 0 with nothing on stderr. */
async function run(block: string): Promise<string> {
  const { code, stdout, stderr } = await session.run(withPorts(block, ports));
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return stdout;
}

const online = (mesh: string, count: number) =>
  eventually(() => api(`/mesh-insights/${mesh}`), (insight) => insight.dataplanes?.online === count, `${count} proxies of mesh ${mesh} to be online`, CONNECTS_MS);

beforeAll(async () => {
  if (!envoy) return;
  ports = await freePortsFor([...shellBlocks(readme), ...assignments]);
  cp = await startControlPlane({
    ports: { http: port(5681), https: await freePort(), diagnostics: await freePort(), kds: await freePort() },
    env: { MESH_DP_SERVER_PORT: String(port(5678)), MESH_MONITORING_ASSIGNMENT_SERVER_PORT: String(port(5676)) },
  });
  const cwd = repositoryLike({ data: cp.workDir });
  // meshctl installed on PATH, its current control plane this test's (`meshctl config control-planes add`).
  const bin = join(cwd, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'meshctl'), `#!/bin/sh\nexec node ${join(REPOSITORY, 'apps', 'meshctl', 'dist', 'main.js')} "$@"\n`);
  chmodSync(join(bin, 'meshctl'), 0o755);
  mkdirSync(join(cwd, '.meshctl'));
  writeFileSync(
    join(cwd, '.meshctl', 'config'),
    JSON.stringify({ contexts: [{ name: 'local', controlPlane: 'local' }], controlPlanes: [{ name: 'local', coordinates: { apiServer: { url: cp.url } } }], currentContext: 'local' }),
  );
  env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
  session = new ShellSession(cwd, env);
}, 60_000);

afterAll(async () => {
  await session?.stop();
  await cp?.stop();
});

describe.skipIf(!envoy)("apps/dp/README.md: mesh-dp's examples", () => {
  it('has the five examples this test runs, and docs/xds.md its fetch of monitoring assignments', () => {
    expect([runner, metrics, accessLogs, healthChecks, dns].map((block) => block !== undefined)).toEqual([true, true, true, true, true]);
    expect(others).toEqual([]);
    expect(markdownSection('apps/dp/README.md', '## Metrics')).toContain(metrics);
    expect(markdownSection('apps/dp/README.md', '## Access logs to TCP')).toContain(accessLogs);
    expect(markdownSection('apps/dp/README.md', '## Health checks by the control plane')).toContain(healthChecks);
    expect(markdownSection('apps/dp/README.md', '## Service names through DNS')).toContain(dns);
    expect(assignments.filter((block) => block.includes('discovery:monitoringassignments'))).toHaveLength(1);
  });

  it('runs every example as written, each printing what the README says', async () => {
    // The first runs mesh-dp in the foreground, as in a terminal: until the proxy is online, then
    // stopped as Ctrl-C would (its whole process group).
    const foreground = runShell(withPorts(runner!, ports), session.cwd, env);
    await online('default', 1);
    await stopProcessGroup(foreground.processGroup);
    const stopped = await foreground;
    expect(stopped.stdout).toBe('');
    expect(readFileSync(join(session.cwd, 'web-1.token'), 'utf8')).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect((await api('/meshes/default/dataplanes/web-1')).networking.inbound[0].port).toBe(port(20002));

    // Metrics: the mesh's PUT prints `{}`, then the scrape and the monitoring assignments.
    expect(metrics).toContain(METRICS_PROSE);
    const scraped = await run(metrics!);
    expect(scraped).toMatch(shapeOf(`{}${withPorts(documentedLines(metrics!.replace(METRICS_PROSE, '')), ports)}`));

    // Access logs: the MeshAccessLog's PUT prints `{}`, then the collector's line.
    expect(await run(accessLogs!)).toBe(`{}${withPorts(documentedLines(accessLogs!), ports)}`);

    // Health checks: ready, unready when the application stops, ready again when it starts.
    expect(await run(healthChecks!)).toBe(withPorts(documentedLines(healthChecks!), ports));

    // docs/xds.md's fetch sees both proxies of mesh obs.
    const [fetchAssignments] = assignments.filter((block) => block.includes('discovery:monitoringassignments'));
    const answer = JSON.parse(await run(fetchAssignments!));
    expect(answer.resources.map((assignment: any) => [assignment.mesh, assignment.service, assignment.targets[0].name, assignment.targets[0].address])).toEqual([
      ['obs', 'files', 'files-1', `127.0.0.1:${port(5670)}`],
      ['obs', 'web', 'web-1', `127.0.0.1:${port(5670)}`],
    ]);

    // DNS, an example of its own, runs beside the proxies of the ones before.
    const [resolved, ...listeners] = (await run(dns!)).trimEnd().split('\n');
    const [documentedResolved, ...documentedListeners] = withPorts(documentedLines(dns!), ports).trimEnd().split('\n');
    expect(resolved).toBe(`{}${documentedResolved}`);
    // Envoy lists the listeners in name order, which the port numbers change: the documented ones
    // are there, and the rest (`…`) beside them.
    expect(documentedListeners.pop()).toBe('…');
    expect(listeners).toEqual([...listeners].sort());
    expect(listeners).toEqual(expect.arrayContaining(documentedListeners));
    expect(listeners.length).toBeGreaterThan(documentedListeners.length);
  }, 300_000);
});

// meshctl: the command-line client of the control plane, on its REST API alone. Kind names and
// paths come from the kind registry, as the control plane's routes do.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dataplaneKind, KINDS, PRODUCT, PRODUCT_VERSION, tagPairs, zoneEgressKind, zoneIngressKind, type AnyKind, type TagMap } from '@mesh/model';
import { Argument, Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import { ApiClient, describeApiError } from './client.js';
import { configPath, currentControlPlane, readClientConfig, UserError, writeClientConfig, type ClientConfig } from './config.js';
import { ago, type DataplanePolicies, kindColumns, policiesText, structured, table, TableStream, type ApiResource, type Format } from './output.js';
import { DEFAULT_SETTINGS, describeRules, install, planInstall, planUninstall, requireRoot, uidOfUser, uninstall, type RedirectSettings } from './transparent-proxy.js';

/** What `--version` prints, and the first line of `version`, as the reference's CLI prints them. */
const CLIENT_VERSION_LINE = `Client: ${PRODUCT} ${PRODUCT_VERSION}`;

const NAMED_KINDS = KINDS.filter((kind) => kind.cliNames !== undefined);

function kindNamed(word: string, plural: boolean): AnyKind {
  const kind = NAMED_KINDS.find((k) => (plural ? k.cliNames!.plural : k.cliNames!.singular) === word);
  if (!kind) {
    const names = NAMED_KINDS.map((k) => (plural ? k.cliNames!.plural : k.cliNames!.singular)).sort();
    throw new UserError(`Error: unknown TYPE: ${word}. Available types: ${names.join(', ')}`);
  }
  return kind;
}

const collectionPath = (kind: AnyKind, mesh: string) => (kind.scope === 'mesh' ? `/meshes/${encodeURIComponent(mesh)}/${kind.path}` : `/${kind.path}`);
const entityPath = (kind: AnyKind, mesh: string, name: string) => `${collectionPath(kind, mesh)}/${encodeURIComponent(name)}`;

interface GlobalOptions {
  configFile?: string;
  mesh: string;
  output: Format;
}

const program = new Command('meshctl')
  .description('Command-line client of the service mesh control plane (its REST API)')
  .version(CLIENT_VERSION_LINE, '-V, --version', 'print the client version')
  .option('--config-file <file>', 'client configuration file (MESHCTL_CONFIG; default ~/.meshctl/config)')
  .option('-m, --mesh <mesh>', 'mesh of mesh-scoped resources', 'default')
  .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'yaml', 'json']).default('table'))
  .showHelpAfterError();

const globals = (): GlobalOptions => program.opts<GlobalOptions>();
const clientConfigPath = () => configPath(globals().configFile);
const client = () => new ApiClient(currentControlPlane(readClientConfig(clientConfigPath())));
const print = (text: string): void => {
  process.stdout.write(text);
};

// --- config -----------------------------------------------------------------------------------

const config = program.command('config').description('manage the control planes this client talks to');
config
  .command('view')
  .description('show the client configuration')
  .action(() => print(structured('yaml', readClientConfig(clientConfigPath()))));

const controlPlanes = config.command('control-planes').description('the control planes the client knows');
controlPlanes
  .command('add')
  .description('add a control plane and switch to it')
  .requiredOption('--name <name>', 'name of the control plane')
  .requiredOption('--address <url>', 'URL of its API server, e.g. https://cp.example:5682')
  .option('--auth-type <type>', 'authentication: tokens')
  .option('--auth-conf <key=value...>', 'authentication settings, e.g. token=<jwt>')
  .option('--ca-cert-file <file>', 'CA certificate to verify the API server with')
  .option('--skip-verify', 'do not verify the API server certificate')
  .option('--overwrite', 'replace a control plane of the same name')
  .action(async (options: { name: string; address: string; authType?: string; authConf?: string[]; caCertFile?: string; skipVerify?: boolean; overwrite?: boolean }) => {
    const path = clientConfigPath();
    const current = readClientConfig(path);
    if (current.controlPlanes.some((cp) => cp.name === options.name) && !options.overwrite) {
      throw new UserError(`Error: Control Plane with name "${options.name}" already exists. Use --overwrite to replace an existing one.`);
    }
    const authConf = Object.fromEntries((options.authConf ?? []).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
    const entry = {
      name: options.name,
      coordinates: {
        apiServer: {
          url: options.address,
          ...(options.authType ? { authType: options.authType, authConf } : {}),
          ...(options.caCertFile ? { caCertFile: options.caCertFile } : {}),
          ...(options.skipVerify ? { skipVerify: true } : {}),
        },
      },
    };
    const next: ClientConfig = {
      contexts: [...current.contexts.filter((c) => c.name !== options.name), { name: options.name, controlPlane: options.name }],
      controlPlanes: [...current.controlPlanes.filter((cp) => cp.name !== options.name), entry],
      currentContext: options.name,
    };
    const reply = await new ApiClient(entry).call('GET', '/');
    if (reply.status >= 400) throw new UserError(`Error: ${options.address} does not answer as a control plane (${reply.status})`);
    writeClientConfig(path, next);
    print(`added Control Plane "${options.name}"\nswitched active Control Plane to "${options.name}"\n`);
  });
controlPlanes
  .command('list')
  .description('list the control planes')
  .action(() => {
    const current = readClientConfig(clientConfigPath());
    const active = current.contexts.find((c) => c.name === current.currentContext)?.controlPlane;
    print(table([{ header: 'ACTIVE', value: (cp) => (cp.name === active ? '*' : '') }, { header: 'NAME', value: (cp) => cp.name }, { header: 'ADDRESS', value: (cp) => cp.coordinates.apiServer.url }], current.controlPlanes));
  });
controlPlanes
  .command('switch')
  .description('use another control plane')
  .requiredOption('--name <name>', 'name of the control plane')
  .action((options: { name: string }) => {
    const path = clientConfigPath();
    const current = readClientConfig(path);
    if (!current.contexts.some((c) => c.name === options.name)) throw new UserError(`Error: there is no Control Plane with name "${options.name}"`);
    writeClientConfig(path, { ...current, currentContext: options.name });
    print(`switched active Control Plane to "${options.name}"\n`);
  });
controlPlanes
  .command('remove')
  .description('forget a control plane')
  .requiredOption('--name <name>', 'name of the control plane')
  .action((options: { name: string }) => {
    const path = clientConfigPath();
    const current = readClientConfig(path);
    if (!current.controlPlanes.some((cp) => cp.name === options.name)) throw new UserError(`Error: there is no Control Plane with name "${options.name}"`);
    writeClientConfig(path, {
      contexts: current.contexts.filter((c) => c.name !== options.name),
      controlPlanes: current.controlPlanes.filter((cp) => cp.name !== options.name),
      currentContext: current.currentContext === options.name ? '' : current.currentContext,
    });
    print(`removed Control Plane "${options.name}"\n`);
  });

// --- get / delete / apply -----------------------------------------------------------------------

const page = (options: { size?: string; offset?: string }) =>
  options.size !== undefined || options.offset !== undefined
    ? { ...(options.size !== undefined ? { size: Number(options.size) } : {}), ...(options.offset !== undefined ? { offset: Number(options.offset) } : {}) }
    : undefined;

const get = program.command('get').description('show resources');
for (const kind of NAMED_KINDS) {
  get
    .command(kind.cliNames!.plural)
    .description(`show ${kind.displayName}`)
    .option('--size <n>', 'one page of this many items')
    .option('--offset <n>', 'one page starting here')
    .option('-w, --watch', 'print the list, then each change as it arrives')
    .action(async (options: { size?: string; offset?: string; watch?: boolean }) => {
      const { mesh, output } = globals();
      if (options.watch) return watchChanges(kind, mesh, undefined, output);
      const listed = await client().list<ApiResource>(collectionPath(kind, mesh), page(options));
      print(output === 'table' ? table(kindColumns(kind), listed.items) : structured(output, { items: listed.items, total: listed.total, next: listed.next ?? null }));
    });
  get
    .command(`${kind.cliNames!.singular} <name>`)
    .description(`show one ${kind.singularDisplayName}`)
    .option('-w, --watch', 'print it, then each change as it arrives')
    .action(async (name: string, options: { watch?: boolean }) => {
      const { mesh, output } = globals();
      if (options.watch) return watchChanges(kind, mesh, name, output);
      const reply = await client().call('GET', entityPath(kind, mesh, name));
      if (reply.status === 404) throw new UserError(`Error: No resources found in ${mesh} mesh`);
      if (reply.status >= 400) throw new UserError(describeApiError(reply));
      print(output === 'table' ? table(kindColumns(kind), [reply.json as ApiResource]) : structured(output, reply.json));
    });
}

/**
 * `get --watch`: the current state, then each change, from the change stream (`GET /events`). A
 * table prints its rows as they come (a deleted resource's last row, its age `deleted`); `-o json`
 * prints one event a line, `-o yaml` one document an event.
 */
async function watchChanges(kind: AnyKind, mesh: string, name: string | undefined, output: Format): Promise<void> {
  const query = new URLSearchParams({ type: kind.name, initial: 'true' });
  if (kind.scope === 'mesh') query.set('mesh', mesh);
  if (name !== undefined) query.set('name', name);
  const rows = new TableStream(kindColumns(kind));
  const lastSeen = new Map<string, ApiResource>();
  let initial: ApiResource[] | undefined = [];
  for await (const { event, data } of client().watch(`/events?${query.toString()}`)) {
    if (output !== 'table') {
      if (event === 'put' || event === 'delete') print(output === 'json' ? `${JSON.stringify({ event, ...data })}\n` : `---\n${structured('yaml', { event, ...data })}`);
      continue;
    }
    const { name: changed = '', resource } = data;
    if (event === 'resync') initial = [];
    else if (event === 'synced') {
      print(rows.start(initial ?? []));
      initial = undefined;
    } else if (event === 'put' && resource) {
      lastSeen.set(changed, resource);
      if (initial) initial.push(resource);
      else print(rows.row(resource));
    } else if (event === 'delete') {
      const last = lastSeen.get(changed);
      lastSeen.delete(changed);
      if (last) print(rows.row(last, 'deleted'));
    }
  }
}

program
  .command('delete <type> <name>')
  .description('delete a resource')
  .action(async (type: string, name: string) => {
    const kind = kindNamed(type, false);
    const { mesh } = globals();
    const reply = await client().call('DELETE', entityPath(kind, mesh, name));
    if (reply.status === 404) throw new UserError(`Error: there is no ${kind.singularDisplayName} with name "${name}"`);
    if (reply.status >= 400) throw new UserError(describeApiError(reply));
    print(`deleted ${kind.name} "${name}"\n`);
  });

/** `{{ name }}` placeholders replaced by `-v name=value`; a placeholder without a value is an error. */
function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, key: string) => {
    if (!Object.hasOwn(vars, key)) throw new UserError(`Error: missing variable "${key}": pass it with -v ${key}=<value>`);
    return vars[key]!;
  });
}

program
  .command('apply')
  .description('create or update resources from YAML or JSON documents')
  .requiredOption('-f, --file <file>', 'file with one or more documents, or - for standard input')
  .option('-v, --var <key=value...>', 'value of a {{ key }} placeholder')
  .option('--dry-run', 'print the resources instead of applying them')
  .action(async (options: { file: string; var?: string[]; dryRun?: boolean }) => {
    const vars = Object.fromEntries((options.var ?? []).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
    const text = substitute(readFileSync(options.file === '-' ? 0 : options.file, 'utf8'), vars);
    const documents = parseAllDocuments(text).filter((doc) => doc.contents !== null);
    let refused = 0;
    for (const [index, document] of documents.entries()) {
      if (document.errors.length > 0) throw new UserError(`Error: document ${index + 1} is not valid YAML: ${document.errors[0]!.message}`);
      const resource = document.toJS() as Record<string, unknown>;
      const { type } = resource;
      const kind = typeof type === 'string' ? KINDS.find((k) => k.acceptedTypes.includes(type) && !k.computed) : undefined;
      if (!kind || typeof resource.name !== 'string') {
        print(`document ${index + 1}: refused: it needs a known "type" and a "name"\n`);
        refused++;
        continue;
      }
      if (options.dryRun) {
        print(structured('yaml', resource) + '---\n');
        continue;
      }
      const mesh = typeof resource.mesh === 'string' ? resource.mesh : 'default';
      const reply = await client().call('PUT', entityPath(kind, mesh, resource.name), resource);
      if (reply.status >= 400) {
        refused++;
        print(`${kind.name} "${resource.name}" refused:\n${describeApiError(reply)}\n`);
      } else {
        print(`${kind.name} "${resource.name}" ${reply.status === 201 ? 'created' : 'updated'}\n`);
      }
    }
    if (refused > 0) throw new UserError(`Error: ${refused} of ${documents.length} documents refused`);
  });

// --- inspect ------------------------------------------------------------------------------------

// The fields of the insight and overview lists the tables show.
interface Subscription {
  connectTime?: string;
  disconnectTime?: string;
  status?: { lastUpdateTime?: string };
  version?: { meshDp?: { version?: string }; envoy?: { version?: string } };
}
interface Insight {
  subscriptions?: Subscription[];
  mTLS?: { certificateExpirationTime?: string };
}
interface DataplaneOverview {
  mesh: string;
  name: string;
  dataplane?: { networking?: { inbound?: Array<{ tags?: TagMap }> } };
  dataplaneInsight?: Insight;
}
interface ProxyCounts {
  online?: number;
  total?: number;
}
interface MeshInsight {
  name: string;
  dataplanes?: ProxyCounts;
  policies?: Record<string, { total: number }>;
  services?: { total?: number };
}
interface ServiceInsight {
  mesh: string;
  name: string;
  status?: string;
  dataplanes?: ProxyCounts;
}
interface ZoneOverview {
  name: string;
  zoneInsight?: Insight;
  zoneIngressInsight?: Insight;
  zoneEgressInsight?: Insight;
}
interface PolicyDataplanes {
  items: Array<{ dataplane?: { name?: string } }>;
}

const inspect = program.command('inspect').description('show runtime state: insights and what proxies are given');
const statusOf = (insight: Insight | undefined) => {
  const subscriptions = insight?.subscriptions ?? [];
  return subscriptions.some((s) => s.connectTime && !s.disconnectTime) ? 'Online' : 'Offline';
};
const lastSubscription = (insight: Insight | undefined) => (insight?.subscriptions ?? []).at(-1);
inspect
  .command('dataplanes')
  .description('proxies with their status, versions and certificates')
  .option('--tag <key=value...>', 'only proxies with these tags')
  .option('--gateway', 'only gateway proxies')
  .action(async (options: { tag?: string[]; gateway?: boolean }) => {
    const { mesh, output } = globals();
    const query = new URLSearchParams();
    for (const tag of options.tag ?? []) query.append('tag', tag.replace('=', ':'));
    if (options.gateway) query.set('gateway', 'true');
    const listed = await client().list<DataplaneOverview>(`/meshes/${encodeURIComponent(mesh)}/dataplanes+insights${query.size > 0 ? `?${query.toString()}` : ''}`);
    if (output !== 'table') return print(structured(output, listed));
    print(
      table(
        [
          { header: 'MESH', value: (o) => o.mesh },
          { header: 'NAME', value: (o) => o.name },
          { header: 'TAGS', value: (o) => tagPairs((o.dataplane?.networking?.inbound ?? []).map((inbound) => inbound.tags)) },
          { header: 'STATUS', value: (o) => statusOf(o.dataplaneInsight) },
          { header: 'LAST CONNECTED AGO', value: (o) => ago(lastSubscription(o.dataplaneInsight)?.connectTime) },
          { header: 'CERT EXPIRATION', value: (o) => o.dataplaneInsight?.mTLS?.certificateExpirationTime ?? 'never' },
          { header: 'MESH-DP', value: (o) => lastSubscription(o.dataplaneInsight)?.version?.meshDp?.version ?? 'unknown' },
          { header: 'ENVOY', value: (o) => lastSubscription(o.dataplaneInsight)?.version?.envoy?.version ?? 'unknown' },
        ],
        listed.items,
      ),
    );
  });
inspect
  .command('meshes')
  .description('meshes with their proxies and policies')
  .action(async () => {
    const { output } = globals();
    const listed = await client().list<MeshInsight>('/mesh-insights');
    if (output !== 'table') return print(structured(output, listed));
    print(
      table(
        [
          { header: 'NAME', value: (m) => m.name },
          { header: 'DATAPLANES', value: (m) => `${m.dataplanes?.online ?? 0}/${m.dataplanes?.total ?? 0}` },
          { header: 'POLICIES', value: (m) => String(Object.values(m.policies ?? {}).reduce((sum, p) => sum + p.total, 0)) },
          { header: 'SERVICES', value: (m) => String(m.services?.total ?? 0) },
        ],
        listed.items,
      ),
    );
  });
inspect
  .command('services')
  .description('services of a mesh with their proxies')
  .action(async () => {
    const { mesh, output } = globals();
    const listed = await client().list<ServiceInsight>(`/meshes/${encodeURIComponent(mesh)}/service-insights`);
    if (output !== 'table') return print(structured(output, listed));
    print(
      table(
        [
          { header: 'MESH', value: (s) => s.mesh },
          { header: 'NAME', value: (s) => s.name },
          { header: 'STATUS', value: (s) => s.status ?? 'not_available' },
          { header: 'DATAPLANES', value: (s) => `${s.dataplanes?.online ?? 0}/${s.dataplanes?.total ?? 0}` },
        ],
        listed.items,
      ),
    );
  });
/** Zones and zone proxies with the status of their connections, from their overview lists. */
const zoneOverviews: Array<[string, string, string, Exclude<keyof ZoneOverview, 'name'>]> = [
  ['zones', 'zone control planes and their connection to the global', '/zones+insights', 'zoneInsight'],
  ['zone-ingresses', 'zone ingress proxies', '/zoneingresses+insights', 'zoneIngressInsight'],
  ['zone-egresses', 'zone egress proxies', '/zoneegressoverviews', 'zoneEgressInsight'],
];
for (const [command, description, path, insightField] of zoneOverviews) {
  inspect
    .command(command)
    .description(description)
    .action(async () => {
      const { output } = globals();
      const listed = await client().list<ZoneOverview>(path);
      if (output !== 'table') return print(structured(output, listed));
      print(
        table(
          [
            { header: 'NAME', value: (o) => o.name },
            { header: 'STATUS', value: (o) => statusOf(o[insightField]) },
            { header: 'LAST CONNECTED AGO', value: (o) => ago(lastSubscription(o[insightField])?.connectTime) },
            { header: 'LAST UPDATED AGO', value: (o) => ago(lastSubscription(o[insightField])?.status?.lastUpdateTime) },
          ],
          listed.items,
        ),
      );
    });
}
/** The `--type` of `inspect dataplane|zoneingress|zoneegress NAME`, each with the API view under the proxy's path it reads (docs/insights.md, Inspection). */
const PROXY_VIEWS = { policies: 'policies', rules: 'rules', 'config-dump': 'xds', stats: 'stats', clusters: 'clusters' } as const;
type ProxyView = keyof typeof PROXY_VIEWS;

/**
 * One view of a proxy: Envoy's own text for stats and clusters; the configuration dump as JSON;
 * the matched policies as the reference's CLI lists them; rules as YAML. `-o json|yaml` prints the
 * API's body in that format instead (not for stats and clusters).
 */
async function inspectProxy(kind: AnyKind, proxyPath: string, name: string, view: ProxyView): Promise<void> {
  const { mesh, output } = globals();
  const reply = await client().call('GET', `${proxyPath}/${PROXY_VIEWS[view]}`);
  if (reply.status === 404) throw new UserError(`Error: there is no ${kind.singularDisplayName} with name "${name}"${kind.scope === 'mesh' ? ` in mesh "${mesh}"` : ''}`);
  if (reply.status >= 400) throw new UserError(describeApiError(reply));
  if (view === 'stats' || view === 'clusters') return print(reply.text);
  if (output !== 'table') return print(structured(output, reply.json));
  if (view === 'policies') return print(policiesText(reply.json as DataplanePolicies));
  print(structured(view === 'rules' ? 'yaml' : 'json', reply.json));
}

interface ProxyCommand {
  command: string;
  alias?: string;
  kind: AnyKind;
  /** The API path of the proxy, under which its views are. */
  path: (name: string) => string;
  views: ProxyView[];
}

const proxyCommands: ProxyCommand[] = [
  { command: 'dataplane', kind: dataplaneKind, path: (name) => entityPath(dataplaneKind, globals().mesh, name), views: ['policies', 'rules', 'config-dump', 'stats', 'clusters'] },
  // Zone proxies get no policies: only what Envoy is given and what it reports. The views of a
  // zone ingress are under `/zoneingresses`, not its resource path, as in the reference's API.
  { command: 'zoneingress', alias: 'zone-ingress', kind: zoneIngressKind, path: (name) => `/zoneingresses/${encodeURIComponent(name)}`, views: ['config-dump', 'stats', 'clusters'] },
  { command: 'zoneegress', alias: 'zone-egress', kind: zoneEgressKind, path: (name) => entityPath(zoneEgressKind, '', name), views: ['config-dump', 'stats', 'clusters'] },
];
for (const { command, alias, kind, path, views } of proxyCommands) {
  const inspectOne = inspect
    .command(`${command} <name>`)
    .description(`what one ${kind.singularDisplayName.toLowerCase()} proxy is given, and what its Envoy reports`)
    .addOption(new Option('--type <type>', 'what to show').choices(views).default(views[0]))
    .action((name: string, options: { type: ProxyView }) => inspectProxy(kind, path(name), name, options.type));
  if (alias) inspectOne.alias(alias);
}
for (const kind of NAMED_KINDS.filter((k) => k.inspectable)) {
  inspect
    .command(`${kind.cliNames!.singular} <name>`)
    .description(`the proxies a ${kind.singularDisplayName} applies to`)
    .action(async (name: string) => {
      const { mesh, output } = globals();
      const reply = await client().ok('GET', `${entityPath(kind, mesh, name)}/dataplanes`);
      if (output !== 'table') return print(structured(output, reply.json));
      print(table([{ header: 'DATAPLANE', value: (item) => item.dataplane?.name ?? '' }], (reply.json as PolicyDataplanes).items));
    });
}

// --- generate -----------------------------------------------------------------------------------

const generateCommand = program.command('generate').description('generate tokens, keys and certificates');
const tokenCommand = <Options>(path: string, body: (options: Options) => Record<string, unknown>) => (command: Command) =>
  command.action(async (options: Options) => {
    const reply = await client().ok('POST', path, body(options));
    print(`${reply.text}\n`);
  });
tokenCommand('/tokens/dataplane', (o: { name?: string; tag?: string[]; proxyType?: string; validFor?: string }) => ({ name: o.name, mesh: globals().mesh, tags: tagMap(o.tag), type: o.proxyType, validFor: o.validFor }))(
  generateCommand
    .command('dataplane-token')
    .description('a token a proxy presents to the control plane')
    .option('--name <name>', 'name of the dataplane')
    .option('--tag <key=value...>', 'tags the proxy must have (repeat for several values)')
    .option('--proxy-type <type>', 'dataplane, ingress or egress')
    .option('--valid-for <duration>', 'how long the token is valid, e.g. 720h'),
);
tokenCommand('/tokens/zone-ingress', (o: { zone: string; validFor?: string }) => ({ zone: o.zone, validFor: o.validFor }))(
  generateCommand.command('zone-ingress-token').description('a token for a zone ingress').requiredOption('--zone <zone>', 'zone of the ingress').option('--valid-for <duration>', 'validity'),
);
tokenCommand('/tokens/zone', (o: { zone?: string; scope?: string[]; validFor?: string }) => ({ zone: o.zone, scope: o.scope ?? [], validFor: o.validFor }))(
  generateCommand
    .command('zone-token')
    .description('a token for the zone proxies of a zone, or for its control plane (scope cp)')
    .option('--zone <zone>', 'the zone')
    .option('--scope <scope...>', 'ingress, egress, or cp (a zone control plane to its global)')
    .option('--valid-for <duration>', 'validity'),
);
tokenCommand('/tokens/user', (o: { name: string; group?: string[]; validFor: string }) => ({ name: o.name, groups: o.group ?? [], validFor: o.validFor }))(
  generateCommand
    .command('user-token')
    .description('a token for a user of the API')
    .requiredOption('--name <name>', 'name of the user')
    .option('--group <group...>', 'groups of the user')
    .requiredOption('--valid-for <duration>', 'validity, e.g. 24h'),
);
generateCommand
  .command('signing-key')
  .description('a new token signing key, as the data of a secret')
  .action(() => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    print(`${Buffer.from(privateKey).toString('base64')}\n`);
  });
generateCommand
  .command('tls-certificate')
  .description('a self-signed certificate and key')
  .addOption(new Option('--type <type>', 'server or client').choices(['server', 'client']).default('server'))
  .option('--hostname <name...>', 'names the certificate is for', ['localhost'])
  .requiredOption('--cert-file <file>', 'where to write the certificate')
  .requiredOption('--key-file <file>', 'where to write the key')
  .action(async (options: { type: string; hostname: string[]; certFile: string; keyFile: string }) => {
    // Loaded on use: the certificate library is the heaviest module, and only this command needs it.
    const { generate } = await import('selfsigned');
    const pems = await generate([{ name: 'commonName', value: options.hostname[0] ?? 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: options.hostname.map((value) => ({ type: 2, value })) }, { name: 'extKeyUsage', [options.type === 'client' ? 'clientAuth' : 'serverAuth']: true }],
    });
    writeFileSync(options.certFile, pems.cert);
    writeFileSync(options.keyFile, pems.private, { mode: 0o600 });
    print(`certificate written to ${options.certFile}, key to ${options.keyFile}\n`);
  });

function tagMap(pairs: string[] | undefined): Record<string, string[]> {
  const tags: Record<string, string[]> = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf('=');
    (tags[pair.slice(0, at)] ??= []).push(pair.slice(at + 1));
  }
  return tags;
}

// --- transparent proxy ---------------------------------------------------------------------------

/** A port option's value; `allowZero` for the ones where 0 turns something off. */
function portOption(flag: string, value: string, allowZero = false): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535 || (port === 0 && !allowZero)) throw new UserError(`Error: ${flag} must be a port number (${allowZero ? 0 : 1}-65535), got "${value}"`);
  return port;
}

const portList = (flag: string, value: string | undefined): number[] =>
  (value ?? '')
    .split(',')
    .map((port) => port.trim())
    .filter((port) => port !== '')
    .map((port) => portOption(flag, port));

interface InstallTransparentProxyOptions {
  meshDpUser?: string;
  meshDpUid?: string;
  redirectOutboundPort: string;
  redirectInboundPort: string;
  redirectInboundPortV6: string;
  excludeInboundPorts?: string;
  excludeOutboundPorts?: string;
  redirectDns?: boolean;
  redirectAllDnsTraffic?: boolean;
  redirectDnsPort: string;
  skipDnsConntrackZoneSplit?: boolean;
  dryRun?: boolean;
  verbose?: boolean;
}

function redirectSettings(options: InstallTransparentProxyOptions): RedirectSettings {
  if (options.redirectDns && options.redirectAllDnsTraffic) throw new UserError('Error: give one of --redirect-dns and --redirect-all-dns-traffic');
  let uid: number;
  if (options.meshDpUid !== undefined) {
    if (!/^\d+$/.test(options.meshDpUid)) throw new UserError(`Error: --mesh-dp-uid must be a user id (a number), got "${options.meshDpUid}"`);
    uid = Number(options.meshDpUid);
  } else if (options.meshDpUser !== undefined) {
    uid = uidOfUser(options.meshDpUser);
  } else {
    throw new UserError('Error: give the user mesh-dp runs as with --mesh-dp-user or --mesh-dp-uid');
  }
  return {
    uid,
    outboundPort: portOption('--redirect-outbound-port', options.redirectOutboundPort),
    inboundPort: portOption('--redirect-inbound-port', options.redirectInboundPort),
    inboundPortV6: portOption('--redirect-inbound-port-v6', options.redirectInboundPortV6, true),
    excludeInboundPorts: portList('--exclude-inbound-ports', options.excludeInboundPorts),
    excludeOutboundPorts: portList('--exclude-outbound-ports', options.excludeOutboundPorts),
    dns: options.redirectAllDnsTraffic ? 'all' : options.redirectDns ? 'name-servers' : 'off',
    dnsPort: portOption('--redirect-dns-port', options.redirectDnsPort),
    dnsConntrackZoneSplit: !options.skipDnsConntrackZoneSplit,
  };
}

program
  .command('install')
  .description('set up this host for the mesh')
  .command('transparent-proxy')
  .description("redirect this host's TCP traffic (and DNS) through its proxy with iptables rules; run as root")
  .option('--mesh-dp-user <user>', 'the user mesh-dp and Envoy run as: their own traffic is not redirected')
  .option('--mesh-dp-uid <uid>', 'the user id mesh-dp and Envoy run as (instead of --mesh-dp-user)')
  .option('--redirect-outbound-port <port>', "the proxy's outbound port (its Dataplane's networking.transparentProxying.redirectPortOutbound)", String(DEFAULT_SETTINGS.outboundPort))
  .option('--redirect-inbound-port <port>', "the proxy's inbound port (redirectPortInbound)", String(DEFAULT_SETTINGS.inboundPort))
  .option('--redirect-inbound-port-v6 <port>', 'the inbound port of IPv6 traffic (redirectPortInboundV6); 0 leaves IPv6 alone', String(DEFAULT_SETTINGS.inboundPortV6))
  .option('--exclude-inbound-ports <ports>', 'comma-separated inbound ports not redirected')
  .option('--exclude-outbound-ports <ports>', 'comma-separated outbound ports not redirected')
  .option('--redirect-dns', "redirect DNS queries to the name servers of /etc/resolv.conf to mesh-dp's resolver")
  .option('--redirect-all-dns-traffic', "redirect every DNS query to mesh-dp's resolver")
  .option('--redirect-dns-port <port>', "the port of mesh-dp's resolver", String(DEFAULT_SETTINGS.dnsPort))
  .option('--skip-dns-conntrack-zone-split', 'do not keep redirected DNS flows in their own conntrack zone')
  .option('--dry-run', 'print the rules (iptables-restore input) and change nothing')
  .option('--verbose', 'print the rules as they are applied')
  .action((options: InstallTransparentProxyOptions) => {
    if (!options.dryRun) requireRoot('meshctl install transparent-proxy');
    const rules = planInstall(redirectSettings(options));
    if (options.dryRun || options.verbose) print(describeRules(rules));
    if (options.dryRun) return;
    install(rules);
    print('# Transparent proxy set up successfully, you can now run mesh-dp using transparent-proxy.\n');
  });

program
  .command('uninstall')
  .description('undo what install did')
  .command('transparent-proxy')
  .description('remove the iptables rules and chains install transparent-proxy added; run as root')
  .option('--dry-run', 'print what would be removed (iptables-restore input) and change nothing')
  .option('--verbose', 'print what is removed')
  .action((options: { dryRun?: boolean; verbose?: boolean }) => {
    if (!options.dryRun) requireRoot('meshctl uninstall transparent-proxy');
    const removals = planUninstall();
    if (removals.length === 0) return print('Transparent proxy is not installed: nothing to remove\n');
    if (options.dryRun || options.verbose) print(describeRules(removals));
    if (options.dryRun) return;
    uninstall(removals);
    print('Transparent proxy cleaned up successfully\n');
  });

// --- version, completion ------------------------------------------------------------------------

program
  .command('version')
  .description('client and control plane versions')
  .action(async () => {
    print(`${CLIENT_VERSION_LINE}\n`);
    // As the reference's CLI: a control plane out of reach is said on stderr, and the command still succeeds.
    try {
      const about = (await client().ok('GET', '/')).json as { product: string; version: string };
      print(`Server: ${about.product} ${about.version}\n`);
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      process.stderr.write(`Unable to connect to control plane: ${error.message.replace(/^Error: /, '')}\n`);
    }
  });

/** Every command path, for shell completion. */
function commandWords(command: Command): string[] {
  return command.commands.flatMap((sub) => [sub.name(), ...commandWords(sub)]);
}

program
  .command('completion')
  .description('shell completion script')
  .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
  .action((shell: string) => {
    const words = [...new Set(commandWords(program))].sort().join(' ');
    const bash = `_meshctl() { COMPREPLY=( $(compgen -W "${words}" -- "\${COMP_WORDS[COMP_CWORD]}") ); }\ncomplete -F _meshctl meshctl\n`;
    print(shell === 'bash' ? bash : `autoload -U +X bashcompinit && bashcompinit\n${bash}`);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`${error instanceof UserError ? error.message : `Error: ${(error as Error).message}`}\n`);
  process.exit(1);
}

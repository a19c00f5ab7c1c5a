// Transparent proxying on Linux: the iptables rules that send an application's TCP traffic through
// its proxy (outbound to the proxy's outbound pass-through port, inbound to its inbound one, DNS to
// mesh-dp's resolver), built as data, rendered as `iptables-restore` input, applied and removed.
// The proxy's own traffic is told apart by the user id it runs as.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { isIPv4, isIPv6 } from 'node:net';
import { UserError } from './config.js';

/** The chains of the nat table the rules live in; installing creates them, uninstalling deletes them. */
export const CHAINS = {
  inbound: 'MESH_INBOUND',
  outbound: 'MESH_OUTBOUND',
  inboundRedirect: 'MESH_INBOUND_REDIRECT',
  outboundRedirect: 'MESH_OUTBOUND_REDIRECT',
} as const;
const OWN_CHAINS: ReadonlySet<string> = new Set(Object.values(CHAINS));

/**
 * Marks the rules this command adds to the built-in chains (PREROUTING, OUTPUT), which are shared
 * with whatever else manages the host's firewall: uninstalling removes exactly the marked ones.
 */
export const RULE_COMMENT = 'mesh/transparent-proxy';

const DNS_PORT = '53';

export type IpFamily = 4 | 6;

export interface RedirectSettings {
  /** The user id mesh-dp and Envoy run as: their own connections are never redirected. */
  uid: number;
  outboundPort: number;
  inboundPort: number;
  /** The inbound port for IPv6 traffic; 0 leaves IPv6 alone. */
  inboundPortV6: number;
  excludeInboundPorts: readonly number[];
  excludeOutboundPorts: readonly number[];
  /** DNS to mesh-dp's resolver: none, queries to the resolv.conf name servers, or every query. */
  dns: 'off' | 'name-servers' | 'all';
  dnsPort: number;
  /** Keeps the application's DNS flows and the resolver's own upstream flows in separate conntrack zones. */
  dnsConntrackZoneSplit: boolean;
}

export const DEFAULT_SETTINGS: Omit<RedirectSettings, 'uid'> = {
  outboundPort: 15001,
  inboundPort: 15006,
  inboundPortV6: 15010,
  excludeInboundPorts: [],
  excludeOutboundPorts: [],
  dns: 'off',
  dnsPort: 15053,
  dnsConntrackZoneSplit: true,
};

export interface IptablesRule {
  chain: string;
  /** Built-in chains get the DNS rules at their head (before rules of others), the jumps at their tail. */
  position: 'insert' | 'append';
  args: readonly string[];
}

export interface IptablesTable {
  name: 'raw' | 'nat';
  /** Chains to create, before any rule. */
  newChains: readonly string[];
  rules: readonly IptablesRule[];
}

const marked = (args: readonly string[]): string[] => {
  const jump = args.indexOf('-j');
  return [...args.slice(0, jump), '-m', 'comment', '--comment', RULE_COMMENT, ...args.slice(jump)];
};
const builtin = (chain: string, position: IptablesRule['position'], args: readonly string[]): IptablesRule => ({ chain, position, args: marked(args) });
const own = (chain: string, args: readonly string[]): IptablesRule => ({ chain, position: 'append', args });
const owner = (uid: number) => ['-m', 'owner', '--uid-owner', String(uid)];
const redirectTo = (port: number) => ['-j', 'REDIRECT', '--to-ports', String(port)];

/** Addresses of one family: loopback, and the source the proxy's inbound pass-through connects from. */
const FAMILY_ADDRESSES = {
  4: { localhost: '127.0.0.1/32', inboundPassThroughSource: '127.0.0.6/32' },
  6: { localhost: '::1/128', inboundPassThroughSource: '::6/128' },
} as const;

/**
 * Conntrack zones for DNS: the application's queries (redirected to the resolver) in zone 2, the
 * resolver's queries to the name servers and their answers in zone 1, so that an answer from a name
 * server is never taken for the answer to a redirected query of the same addresses and ports.
 */
function conntrackZoneRules(settings: RedirectSettings, nameServers: readonly string[]): IptablesRule[] {
  const zone = (zone: string) => ['-j', 'CT', '--zone', zone];
  const rules = [
    builtin('OUTPUT', 'append', ['-p', 'udp', '--dport', DNS_PORT, ...owner(settings.uid), ...zone('1')]),
    builtin('OUTPUT', 'append', ['-p', 'udp', '--sport', String(settings.dnsPort), ...owner(settings.uid), ...zone('2')]),
  ];
  const servers = settings.dns === 'all' ? [undefined] : nameServers;
  for (const server of servers) rules.push(builtin('OUTPUT', 'append', [...(server ? ['-d', server] : []), '-p', 'udp', '--dport', DNS_PORT, ...zone('2')]));
  for (const server of servers) rules.push(builtin('PREROUTING', 'append', [...(server ? ['-s', server] : []), '-p', 'udp', '--sport', DNS_PORT, ...zone('1')]));
  return rules;
}

/**
 * The rules of one address family. `nameServers` are that family's name servers of
 * /etc/resolv.conf, whose DNS traffic goes to the resolver when `dns` is `name-servers`.
 */
export function buildRules(settings: RedirectSettings, family: IpFamily, nameServers: readonly string[]): IptablesTable[] {
  const { localhost, inboundPassThroughSource } = FAMILY_ADDRESSES[family];
  const inboundPort = family === 6 ? settings.inboundPortV6 : settings.inboundPort;
  const dns = settings.dns !== 'off';
  const dnsTargets = settings.dns === 'all' ? [[]] : nameServers.map((server) => ['-d', server]);
  const tables: IptablesTable[] = [];
  if (dns && settings.dnsConntrackZoneSplit) tables.push({ name: 'raw', newChains: [], rules: conntrackZoneRules(settings, nameServers) });

  const notDns = dns ? ['!', '--dport', DNS_PORT] : [];
  const nat: IptablesRule[] = [builtin('PREROUTING', 'append', ['-p', 'tcp', '-j', CHAINS.inbound])];
  if (dns) {
    // The resolver's own queries go out; the application's go to the resolver.
    nat.push(builtin('OUTPUT', 'insert', ['-p', 'udp', '--dport', DNS_PORT, ...owner(settings.uid), '-j', 'RETURN']));
    for (const target of dnsTargets) nat.push(builtin('OUTPUT', 'insert', [...target, '-p', 'udp', '--dport', DNS_PORT, ...redirectTo(settings.dnsPort)]));
  }
  nat.push(builtin('OUTPUT', 'append', ['-p', 'tcp', '-j', CHAINS.outbound]));

  for (const port of settings.excludeInboundPorts) nat.push(own(CHAINS.inbound, ['-p', 'tcp', '--dport', String(port), '-j', 'RETURN']));
  nat.push(own(CHAINS.inbound, ['-p', 'tcp', '-j', CHAINS.inboundRedirect]));

  for (const port of settings.excludeOutboundPorts) nat.push(own(CHAINS.outbound, ['-p', 'tcp', '--dport', String(port), '-j', 'RETURN']));
  nat.push(
    // The inbound pass-through's connections to the application stay as they are.
    own(CHAINS.outbound, ['-s', inboundPassThroughSource, '-o', 'lo', '-j', 'RETURN']),
    // The proxy calling an address of its own host (but loopback) is an inbound call: through its inbound listeners.
    own(CHAINS.outbound, ['-p', 'tcp', ...notDns, '-o', 'lo', '!', '-d', localhost, ...owner(settings.uid), '-j', CHAINS.inboundRedirect]),
    // Anyone else calling over loopback reaches the listener it calls.
    own(CHAINS.outbound, ['-p', 'tcp', ...notDns, '-o', 'lo', '-m', 'owner', '!', '--uid-owner', String(settings.uid), '-j', 'RETURN']),
    own(CHAINS.outbound, [...owner(settings.uid), '-j', 'RETURN']),
  );
  for (const target of dns ? dnsTargets : []) nat.push(own(CHAINS.outbound, [...target, '-p', 'tcp', '--dport', DNS_PORT, ...redirectTo(settings.dnsPort)]));
  nat.push(own(CHAINS.outbound, ['-d', localhost, '-j', 'RETURN']), own(CHAINS.outbound, ['-j', CHAINS.outboundRedirect]));
  nat.push(own(CHAINS.inboundRedirect, ['-p', 'tcp', ...redirectTo(inboundPort)]), own(CHAINS.outboundRedirect, ['-p', 'tcp', ...redirectTo(settings.outboundPort)]));

  tables.push({ name: 'nat', newChains: [CHAINS.inbound, CHAINS.outbound, CHAINS.inboundRedirect, CHAINS.outboundRedirect], rules: nat });
  return tables;
}

/**
 * `iptables-restore --noflush` input adding the tables' chains and rules: chains created first,
 * then the built-in chains' rules (inserted ones numbered from the head, in order), then the
 * chains' own rules in the order the chains were created.
 */
export function renderRestoreInput(tables: readonly IptablesTable[]): string {
  const lines: string[] = [];
  for (const table of tables) {
    lines.push(`*${table.name}`, ...table.newChains.map((chain) => `-N ${chain}`));
    const inserted = new Map<string, number>();
    const builtinRules = table.rules.filter((rule) => !table.newChains.includes(rule.chain));
    for (const chain of new Set(builtinRules.map((rule) => rule.chain))) {
      const rules = builtinRules.filter((rule) => rule.chain === chain);
      for (const rule of [...rules.filter((r) => r.position === 'insert'), ...rules.filter((r) => r.position === 'append')]) {
        if (rule.position === 'insert') {
          const at = (inserted.get(chain) ?? 0) + 1;
          inserted.set(chain, at);
          lines.push(`-I ${chain} ${at} ${rule.args.join(' ')}`);
        } else {
          lines.push(`-A ${chain} ${rule.args.join(' ')}`);
        }
      }
    }
    for (const chain of table.newChains) for (const rule of table.rules.filter((r) => r.chain === chain)) lines.push(`-A ${chain} ${rule.args.join(' ')}`);
    lines.push('COMMIT');
  }
  return `${lines.join('\n')}\n`;
}

const MARK = new RegExp(`--comment "?${RULE_COMMENT}"?(?: |$)`);

/**
 * `iptables-restore --noflush` input removing what installing added, from `iptables-save` output:
 * the marked rules of the built-in chains, then the rules and the chains of our own. Empty when
 * nothing of ours is there.
 */
export function removalInput(saved: string): string {
  const tables: Array<{ name: string; deletions: string[]; chains: string[] }> = [];
  for (const line of saved.split('\n')) {
    if (line.startsWith('*')) tables.push({ name: line.slice(1).trim(), deletions: [], chains: [] });
    const table = tables.at(-1);
    if (!table) continue;
    const declared = /^:(\S+) /.exec(line)?.[1];
    if (declared && OWN_CHAINS.has(declared)) table.chains.push(declared);
    const chain = /^-A (\S+) /.exec(line)?.[1];
    if (chain && !OWN_CHAINS.has(chain) && MARK.test(line)) table.deletions.push(`-D ${line.slice(3)}`);
  }
  const lines = tables
    .filter((table) => table.deletions.length > 0 || table.chains.length > 0)
    .flatMap((table) => [`*${table.name}`, ...table.deletions, ...table.chains.map((chain) => `-F ${chain}`), ...table.chains.map((chain) => `-X ${chain}`), 'COMMIT']);
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** The name servers of a resolv.conf, by family. */
export function nameServersOf(resolvConf: string): Record<IpFamily, string[]> {
  const servers: Record<IpFamily, string[]> = { 4: [], 6: [] };
  for (const line of resolvConf.split('\n')) {
    const address = /^\s*nameserver\s+(\S+)/.exec(line)?.[1]?.replace(/%.*$/, '');
    if (address && isIPv4(address)) servers[4].push(address);
    else if (address && isIPv6(address)) servers[6].push(address);
  }
  return servers;
}

// --- on the host ---------------------------------------------------------------------------------

const TOOLS = {
  4: { restore: 'iptables-restore', save: 'iptables-save', iptables: 'iptables' },
  6: { restore: 'ip6tables-restore', save: 'ip6tables-save', iptables: 'ip6tables' },
} as const;

interface Run {
  ok: boolean;
  stdout: string;
  /** The first line of what the command said on failure, or why it could not start. */
  failure: string;
}

function run(command: string, args: readonly string[], input?: string): Run {
  try {
    const stdout = execFileSync(command, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
    return { ok: true, stdout, failure: '' };
  } catch (error) {
    const failed = error as { code?: string; stderr?: string; message: string };
    if (failed.code === 'ENOENT') return { ok: false, stdout: '', failure: `${command} was not found on PATH` };
    const said = (failed.stderr ?? '').trim().split('\n')[0];
    return { ok: false, stdout: '', failure: said || failed.message.split('\n')[0]! };
  }
}

/** The uid of a user of this host (through the system's user database, as `id` reads it). */
export function uidOfUser(user: string): number {
  const looked = run('id', ['-u', '--', user]);
  if (!looked.ok) throw new UserError(`Error: there is no user "${user}" on this host (--mesh-dp-user)`);
  return Number(looked.stdout.trim());
}

/**
 * IPv6 gets its rules too where it is in use: a port for it, an IPv6 address besides loopback, and
 * ip6tables with its nat table (which some kernels lack).
 */
function ipv6InUse(settings: RedirectSettings): boolean {
  if (settings.inboundPortV6 === 0) return false;
  const addresses = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []);
  if (!addresses.some((address) => address.family === 'IPv6' && !address.internal)) return false;
  return run(TOOLS[6].iptables, ['-t', 'nat', '-S']).ok;
}

/** `iptables-restore` input for each address family. */
export type RulesByFamily = Array<{ family: IpFamily; input: string }>;

/** What installing would apply on this host: the rules of IPv4, and of IPv6 where it is in use. */
export function planInstall(settings: RedirectSettings, resolvConfPath = '/etc/resolv.conf'): RulesByFamily {
  let nameServers: Record<IpFamily, string[]> = { 4: [], 6: [] };
  if (settings.dns === 'name-servers') {
    try {
      nameServers = nameServersOf(readFileSync(resolvConfPath, 'utf8'));
    } catch (error) {
      throw new UserError(`Error: cannot read the name servers of ${resolvConfPath}: ${(error as Error).message}`);
    }
  }
  const families: IpFamily[] = ipv6InUse(settings) ? [4, 6] : [4];
  return families.map((family) => ({ family, input: renderRestoreInput(buildRules(settings, family, nameServers[family])) }));
}

/** Rules as `--dry-run` and `--verbose` print them: `iptables-restore` input, each family's under the command it goes to. */
export function describeRules(rules: RulesByFamily): string {
  return rules.map(({ family, input }) => `# ${TOOLS[family].restore} --noflush\n${input}`).join('');
}

export function requireRoot(command: string): void {
  if (process.platform !== 'linux') throw new UserError(`Error: ${command} changes iptables rules, which only Linux has`);
  if (process.geteuid?.() !== 0) throw new UserError(`Error: ${command} changes iptables rules and must run as root`);
}

function saved(family: IpFamily): string {
  const dump = run(TOOLS[family].save, []);
  if (!dump.ok) throw new UserError(`Error: cannot read the current rules: ${dump.failure}`);
  return dump.stdout;
}

function restore(family: IpFamily, input: string): void {
  const applied = run(TOOLS[family].restore, ['--noflush'], input);
  if (!applied.ok) throw new UserError(`Error: ${TOOLS[family].restore} refused the rules: ${applied.failure}`);
}

/** Applies the rules, all or nothing: IPv4 rules already applied are removed again when IPv6's fail. */
export function install(rules: RulesByFamily): void {
  for (const { family } of rules) {
    if (!run(TOOLS[family].restore, ['--version']).ok) throw new UserError(`Error: ${TOOLS[family].restore} was not found on PATH: install iptables`);
    if (removalInput(saved(family)) !== '') throw new UserError('Error: the transparent proxy is already installed: run meshctl uninstall transparent-proxy first');
  }
  const applied: IpFamily[] = [];
  try {
    for (const { family, input } of rules) {
      // The inbound pass-through connects from ::6, which IPv6 (unlike 127.0.0.0/8) does not have on loopback.
      if (family === 6) {
        const added = run('ip', ['-6', 'addr', 'add', '::6/128', 'dev', 'lo']);
        if (!added.ok && !/exists/i.test(added.failure)) throw new UserError(`Error: cannot add ::6 to the loopback interface: ${added.failure}`);
      }
      restore(family, input);
      applied.push(family);
    }
  } catch (error) {
    for (const family of applied) restore(family, removalInput(saved(family)));
    throw error;
  }
}

/** What uninstalling would remove: of IPv4, and of IPv6 where ip6tables is there and answers. */
export function planUninstall(): RulesByFamily {
  if (!run(TOOLS[4].save, ['--version']).ok) throw new UserError(`Error: ${TOOLS[4].save} was not found on PATH: install iptables`);
  const removals: RulesByFamily = [{ family: 4, input: removalInput(saved(4)) }];
  const ipv6 = run(TOOLS[6].save, []);
  if (ipv6.ok) removals.push({ family: 6, input: removalInput(ipv6.stdout) });
  return removals.filter(({ input }) => input !== '');
}

export function uninstall(removals: RulesByFamily): void {
  for (const { family, input } of removals) restore(family, input);
}

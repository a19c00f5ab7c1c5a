// Linux network namespaces for end-to-end tests that change a host's network (iptables): each test
// creates its own namespaces, joins them with veth pairs, runs processes inside and deletes them.
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

let created = 0;
const uniqueName = (prefix: string) => `${prefix}-${process.pid}-${++created}`;

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Why this machine refuses to create a network namespace (not root, no `ip`, a sandbox), or undefined when it can. */
export function namespacesRefused(): string | undefined {
  const name = uniqueName('mesh-probe');
  try {
    ip('netns', 'add', name);
  } catch (error) {
    const said = (error as { stderr?: string; message: string }).stderr?.trim() || (error as Error).message;
    return `creating a network namespace is refused here (ip netns add: ${said.split('\n')[0]})`;
  }
  ip('netns', 'del', name);
  return undefined;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface NetworkNamespace {
  readonly name: string;
  /** Runs a command inside and waits for it; `input` goes to its standard input. */
  run(command: string, args: readonly string[], options?: { input?: string; env?: NodeJS.ProcessEnv }): Promise<CommandResult>;
  /** Starts a long-running command inside. */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Every iptables and ip6tables rule of every table inside, as `iptables -S` lists them. */
  firewall(): Promise<string>;
  delete(): void;
}

/** A new network namespace with its loopback up. */
export function createNamespace(prefix: string): NetworkNamespace {
  const name = uniqueName(prefix);
  ip('netns', 'add', name);
  ip('-n', name, 'link', 'set', 'lo', 'up');
  const namespace: NetworkNamespace = {
    name,
    run: (command, args, options = {}) =>
      new Promise((resolve) => {
        const child = spawn('ip', ['netns', 'exec', name, command, ...args], { env: options.env ?? process.env, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', (error) => resolve({ code: -1, stdout, stderr: stderr + error.message }));
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
        child.stdin?.end(options.input);
      }),
    spawn: (command, args, options = {}) => spawn('ip', ['netns', 'exec', name, command, ...args], options),
    firewall: async () => {
      const listings: string[] = [];
      for (const tool of ['iptables', 'ip6tables']) {
        for (const table of ['raw', 'mangle', 'nat', 'filter']) {
          const listed = await namespace.run(tool, ['-t', table, '-S']);
          listings.push(`# ${tool} -t ${table}\n${listed.stdout}${listed.stderr}`);
        }
      }
      return listings.join('');
    },
    delete: () => ip('netns', 'del', name),
  };
  return namespace;
}

/**
 * Joins two namespaces with a veth pair on `subnet` (its first three octets): `a` gets `.1`, `b`
 * gets `.2`, and `b` routes everything else through `a`.
 */
export function connect(a: NetworkNamespace, b: NetworkNamespace, subnet: string): { a: string; b: string } {
  // Interface names are at most 15 characters.
  const link = `mv${process.pid % 100_000}x${created}`;
  ip('link', 'add', `${link}a`, 'netns', a.name, 'type', 'veth', 'peer', 'name', `${link}b`, 'netns', b.name);
  const addresses = { a: `${subnet}.1`, b: `${subnet}.2` };
  ip('-n', a.name, 'addr', 'add', `${addresses.a}/24`, 'dev', `${link}a`);
  ip('-n', b.name, 'addr', 'add', `${addresses.b}/24`, 'dev', `${link}b`);
  ip('-n', a.name, 'link', 'set', `${link}a`, 'up');
  ip('-n', b.name, 'link', 'set', `${link}b`, 'up');
  ip('-n', b.name, 'route', 'add', 'default', 'via', addresses.a);
  return addresses;
}

// Runs the repository's walkthroughs as written: a Markdown section's `sh` blocks, by bash, as a
// fresh shell would run them. Tests point the documented addresses at their own free ports.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { freePort } from './process.js';

/** The repository's root directory. */
export const REPOSITORY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/**
 * The text of the section a heading opens (`## Running proxies`), up to the next heading of the
 * same or a higher level, from a Markdown file given relative to the repository's root. Lines in
 * code blocks are no headings (a shell comment or a YAML one starts with `# `).
 */
export function markdownSection(file: string, heading: string): string {
  const lines = readFileSync(join(REPOSITORY, file), 'utf8').split('\n');
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const endsSection = new RegExp(`^#{1,${level}} `);
  let start = -1;
  let inCode = false;
  for (const [i, line] of lines.entries()) {
    if (line.startsWith('```')) inCode = !inCode;
    else if (inCode) continue;
    else if (start === -1 && line === heading) start = i;
    else if (start !== -1 && endsSection.test(line)) return lines.slice(start, i).join('\n');
  }
  if (start === -1) throw new Error(`${file} has no "${heading}" section`);
  return lines.slice(start).join('\n');
}

/** The section's `sh` code blocks, in order. */
export const shellBlocks = (section: string): string[] => [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script with `bash -e` in `cwd`, with no start-up files and only PATH and HOME (= `cwd`)
 * set besides `env`: the commands run as a fresh shell would run them, whatever this machine's set-up.
 * What it printed so far is `stdoutSoFar()`, for commands that do not end (`curl -N`).
 * The shell leads a process group of its own (`processGroup`, known at once): what the script
 * leaves running in the background stays in it for `stopProcessGroup` to stop, even when the
 * script does not end. The result waits for the script's output to close, so a command left in
 * the background must send its output elsewhere.
 */
export function runShell(script: string, cwd: string, env: Record<string, string> = {}): Promise<ShellResult> & { processGroup: number; stdoutSoFar: () => string } {
  const shell = spawn('bash', ['--noprofile', '--norc', '-e', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env }, detached: true });
  let stdout = '';
  const result = new Promise<ShellResult>((resolve, reject) => {
    let stderr = '';
    shell.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    shell.once('error', reject);
    shell.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
  return Object.assign(result, { processGroup: shell.pid!, stdoutSoFar: () => stdout });
}

/** Signals every process of the group; whether they were all gone within `waitMs`. */
async function signalGroup(group: number, signal: NodeJS.Signals, waitMs: number): Promise<boolean> {
  try {
    process.kill(-group, signal);
  } catch {
    return true; // no process left in the group
  }
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      process.kill(-group, 0);
    } catch {
      return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops every process of the group: SIGTERM, then SIGKILL for what is still there after `graceMs`. */
export async function stopProcessGroup(group: number, graceMs = 30_000): Promise<void> {
  if (!(await signalGroup(group, 'SIGTERM', graceMs))) await signalGroup(group, 'SIGKILL', 5_000);
}

/**
 * Runs blocks that leave processes in the background (`mesh-dp run ... > web-1.log 2>&1 &`), as
 * an operator's terminal keeps them. Each block's shell leads a process group of its own, which
 * what it starts in the background stays in (a script has no job control), so `stop` ends all of
 * them. A block resolves once its shell has exited and closed its output: a background process must
 * send its output elsewhere, as the walkthroughs' do.
 */
export class ShellSession {
  private readonly groups = new Set<number>();

  constructor(
    /** The directory the blocks run in. */
    readonly cwd: string,
    private readonly env: Record<string, string> = {},
  ) {}

  run(script: string): Promise<ShellResult> {
    const shell = runShell(script, this.cwd, this.env);
    this.groups.add(shell.processGroup);
    return shell;
  }

  /** Stops every block's process group: SIGTERM, then SIGKILL for what is left after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    await Promise.all([...this.groups].map((group) => stopProcessGroup(group, graceMs)));
    this.groups.clear();
  }
}

/** A port number as the walkthroughs write them: four or five digits, not part of a longer number. */
const PORT_NUMBER = /(?<!\d)\d{4,5}(?!\d)/g;

/** A free port of this machine for each port number the blocks name, so that they run beside other tests. */
export async function freePortsFor(blocks: readonly string[]): Promise<Map<number, number>> {
  const ports = new Map<number, number>();
  for (const block of blocks) {
    for (const [documented] of block.matchAll(PORT_NUMBER)) if (!ports.has(Number(documented))) ports.set(Number(documented), await freePort());
  }
  return ports;
}

/** The text with each documented port replaced by the one this test runs on. */
export const withPorts = (text: string, ports: ReadonlyMap<number, number>): string => text.replace(PORT_NUMBER, (documented) => String(ports.get(Number(documented)) ?? documented));

/** What a block says it prints: its `# ` comment lines after its last command, one output line each. */
export function documentedOutput(block: string): string {
  const lines = block.trimEnd().split('\n');
  let first = lines.length;
  while (first > 0 && lines[first - 1]!.startsWith('# ')) first--;
  return lines
    .slice(first)
    .map((line) => `${line.slice(2)}\n`)
    .join('');
}

/**
 * A new directory laid out as the repository's root for what walkthroughs run (`apps`,
 * `examples`), plus `links` (`data` to a control plane's work directory): what the blocks write
 * stays in it.
 */
export function repositoryLike(links: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-walkthrough-'));
  for (const [name, target] of Object.entries({ apps: join(REPOSITORY, 'apps'), examples: join(REPOSITORY, 'examples'), ...links })) symlinkSync(target, join(dir, name));
  return dir;
}

export interface WalkthroughStep {
  /** Which block this is: a text the block contains. */
  runs: string;
  /** What must hold before the block shows what it documents (proxies take a moment to connect). */
  awaits?: () => Promise<unknown>;
  /** Checks the block's output against what it documents (its trailing `# ` lines); `cwd` is where it ran. */
  check: (output: string, documented: string, cwd: string) => void | Promise<void>;
}

/** A step's check: the block prints what it documents, exactly. */
export const printsAsDocumented = (output: string, documented: string): void => expect(output).toBe(documented);

/** A step's check of a block that writes tokens to these files and starts processes in the background: it prints nothing. */
export const startsInBackground =
  (...tokenFiles: string[]) =>
  (output: string, _documented: string, cwd: string): void => {
    expect(output).toBe('');
    for (const file of tokenFiles) expect(readFileSync(join(cwd, file), 'utf8'), file).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
  };

/**
 * Runs the blocks in order, one step each, on this test's ports: each after what its step awaits,
 * each exiting 0 with nothing on stderr and printing what its step checks.
 */
export async function runSteps(session: ShellSession, blocks: readonly string[], steps: readonly WalkthroughStep[], ports: ReadonlyMap<number, number>): Promise<void> {
  expect(blocks.map((block, i) => block.includes(steps[i]?.runs ?? '\0'))).toEqual(blocks.map(() => true));
  expect(blocks).toHaveLength(steps.length);
  for (const [i, block] of blocks.entries()) {
    const step = steps[i]!;
    await step.awaits?.();
    const { code, stdout, stderr } = await session.run(withPorts(block, ports));
    expect({ block: step.runs, code, stderr }).toEqual({ block: step.runs, code: 0, stderr: '' });
    await step.check(stdout, withPorts(documentedOutput(block), ports), session.cwd);
  }
}

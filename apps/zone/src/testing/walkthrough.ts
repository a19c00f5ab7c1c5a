// Runs the repository's walkthroughs as written: a Markdown section's `sh` blocks, by bash, as a
// fresh shell would run them. Tests point the documented addresses at their own free ports.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const REPOSITORY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/**
 * The text of the section a heading opens (`## Running proxies`), up to the next heading of the
 * same or a higher level, from a Markdown file given relative to the repository's root. Lines in
 * code blocks are not headings (`# prints ...` comments in a shell block).
 */
export function markdownSection(file: string, heading: string): string {
  const lines = readFileSync(join(REPOSITORY, file), 'utf8').split('\n');
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const endsSection = new RegExp(`^#{1,${level}} `);
  let inCode = false;
  let start = -1;
  for (const [i, line] of lines.entries()) {
    if (line.startsWith('```')) inCode = !inCode;
    if (inCode) continue;
    if (start === -1 && line === heading) start = i;
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
 * The shell leads a process group of its own (`processGroup`, known at once): what the script
 * leaves running in the background stays in it for `stopProcessGroup` to stop, even when the
 * script does not end. The result waits for the script's output to close, so a command left in
 * the background must send its output elsewhere.
 */
export function runShell(script: string, cwd: string, env: Record<string, string> = {}): Promise<ShellResult> & { processGroup: number } {
  const shell = spawn('bash', ['--noprofile', '--norc', '-e', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env }, detached: true });
  const result = new Promise<ShellResult>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    shell.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    shell.once('error', reject);
    shell.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
  return Object.assign(result, { processGroup: shell.pid! });
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

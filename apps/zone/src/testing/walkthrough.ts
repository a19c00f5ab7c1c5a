// Runs the repository's walkthroughs as written: a Markdown section's `sh` blocks, by bash, as a
// fresh shell would run them. Tests point the documented addresses at their own free ports.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const REPOSITORY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/**
 * The text of the section a heading opens (`## Running proxies`), up to the next heading of the
 * same or a higher level, from a Markdown file given relative to the repository's root.
 */
export function markdownSection(file: string, heading: string): string {
  const text = readFileSync(join(REPOSITORY, file), 'utf8');
  const start = text.indexOf(`${heading}\n`);
  if (start === -1 || (start > 0 && text[start - 1] !== '\n')) throw new Error(`${file} has no "${heading}" section`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const next = new RegExp(`\\n#{1,${level}} `, 'g');
  next.lastIndex = start + heading.length;
  const end = next.exec(text)?.index;
  return text.slice(start, end);
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
 */
export function runShell(script: string, cwd: string, env: Record<string, string> = {}): Promise<ShellResult> {
  return new Promise((resolve) => {
    execFile('bash', ['--noprofile', '--norc', '-e', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

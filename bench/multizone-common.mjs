// What the multi-zone benches share: requests to a control plane of a topology, polling, figures
// of a process from /proc, and the resources they write.
import { readFileSync } from 'node:fs';
import { quantile, sleep } from './common.mjs';

const json = { 'content-type': 'application/json' };

/** A PUT, sent again when its connection fails (a kept-alive connection closed by the server as it was reused). */
export async function put(cp, path, body, attempts = 3) {
  let res;
  try {
    res = await fetch(`${cp.api}${path}`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
  } catch (error) {
    if (attempts > 1) return put(cp, path, body, attempts - 1);
    throw error;
  }
  if (res.status >= 300) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
}

export const status = async (cp, path) => (await fetch(`${cp.api}${path}`)).status;

export const total = async (cp, path) => (await (await fetch(`${cp.api}${path}${path.includes('?') ? '&' : '?'}size=1`)).json()).total;

/** Resolves once `check` holds, checking again every `everyMs`. */
export async function until(check, everyMs = 1) {
  while (!(await check())) await sleep(everyMs);
}

export const percentile = (values, p) => quantile([...values].sort((a, b) => a - b), p / 100);
export const ms = (n) => `${n.toFixed(1)} ms`;

/** Resident memory of a process, in MB. */
export const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** CPU time (user and system) a process has used so far, in ms (clock ticks of 10 ms). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Runs `task(0..count-1)` with `concurrency` in flight. */
export async function inParallel(count, concurrency, task) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await task(next++);
  }));
}

const ALL = [{ match: { 'mesh.io/service': '*' } }];
export const route = (name, service = 'backend') => ({ type: 'TrafficRoute', mesh: 'default', name, sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': service } } });
export const dataplane = (name, i) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, inbound: [{ port: 8080, tags: { 'mesh.io/service': `svc-${i % 100}`, 'mesh.io/protocol': 'http' } }] },
});

/**
 * `hcs-testbed status`: what a running `hcs-testbed serve` holds now, as
 * text: every pool entry (hostname) with the machine that holds it, its
 * phase and version and its persistent disk, and "why is it waiting?" (the
 * stalls of src/harness/status/why.ts, the same as the dashboard's panel), from
 * GET /_testbed/status. One HTTP call: it runs from the small `lite` bundle
 * (src/harness/cli/lite.ts) without loading the testbed.
 */
import { parseArgs } from 'node:util';
import { errorMessage } from '../../core/errors.js';
import type { Stall } from '../status/why.js';
import { stallLines } from '../status/why.js';
import { call, resolveTarget } from '../dashboard/time-client.js';

export const STATUS_HELP = `hcs-testbed status — what a running hcs-testbed serve holds now

Usage:
  hcs-testbed status [--kubeconfig FILE | --server URL --token T] [--json]

Prints every pool entry (hostname) with the machine that holds it, its phase,
version and persistent disk (free entries and entries that keep a disk but no
machine are marked), then "why is it waiting?": every object that is not
progressing, with the reason read from its conditions and the SPEC rule.

  --json      the server's answer as JSON
  -h, --help  this text

Exit codes: 0 done (also with stalls), 1 the server could not be reached, 2 bad usage.
`;

export interface StatusAnswer {
  time: { iso?: string; paused?: boolean; speed?: number };
  hosts: { pool: string; role: string; hostname: string; ip: string; status: string; machine: string; phase: string; version: string; disks: { slot: number; state: string; volume: string; server?: string }[] }[];
  why: Stall[];
}

/** The text `hcs-testbed status` prints for an answer. */
export function statusText(a: StatusAnswer): string {
  const lines: string[] = [];
  const t = a.time;
  lines.push(`virtual time ${t.iso ?? '?'}: ${t.paused || t.speed === 0 ? 'paused' : `running at ${t.speed}x`}`);
  let pool = '';
  const w = { host: Math.max(8, ...a.hosts.map((h) => h.hostname.length)), ip: Math.max(2, ...a.hosts.map((h) => h.ip.length)), machine: Math.max(7, ...a.hosts.map((h) => h.machine.length)) };
  for (const h of a.hosts) {
    if (h.pool !== pool) {
      pool = h.pool;
      lines.push(`${h.pool} (${h.role}):`);
      lines.push(`  ${'HOSTNAME'.padEnd(w.host)}  ${'IP'.padEnd(w.ip)}  ${'MACHINE'.padEnd(w.machine)}  ${'PHASE'.padEnd(12)}  ${'VERSION'.padEnd(8)}  DISK`);
    }
    const who = h.status === 'serving' ? h.machine : h.status === 'kept' ? '(free, disk kept)' : '(free)';
    const disk = h.disks.length ? h.disks.map((d) => `pd${d.slot} ${d.volume} ${d.state}${d.server ? ` on ${d.server}` : ''}`).join('; ') : '-';
    lines.push(`  ${h.hostname.padEnd(w.host)}  ${h.ip.padEnd(w.ip)}  ${who.padEnd(w.machine)}  ${(h.phase || '-').padEnd(12)}  ${(h.version || '-').padEnd(8)}  ${disk}`);
  }
  lines.push('why is it waiting?');
  if (a.why.length === 0) lines.push('  nothing is waiting');
  else lines.push(...stallLines(a.why));
  return lines.join('\n') + '\n';
}

export async function statusMain(argv: string[], write: (s: string) => void): Promise<number> {
  let values;
  try {
    values = parseArgs({ args: argv, allowPositionals: false, options: { kubeconfig: { type: 'string' }, server: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } }).values;
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed status --help)\n`);
    return 2;
  }
  if (values.help) {
    write(STATUS_HELP);
    return 0;
  }
  let target;
  try {
    target = resolveTarget(values);
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed status --help)\n`);
    return 2;
  }
  try {
    const r = await call(target, 'GET', '_testbed/status');
    if (r.code !== 200) {
      write(`error: ${target.server} answered ${r.code}: ${typeof r.json === 'string' ? r.json : JSON.stringify(r.json)}\n`);
      return 1;
    }
    write(values.json ? `${JSON.stringify(r.json, null, 2)}\n` : statusText(r.json as StatusAnswer));
    return 0;
  } catch (e) {
    write(`error: ${target.server}: ${errorMessage(e)}\n`);
    return 1;
  }
}

/**
 * CPU time from Linux /proc (0, or none, elsewhere): what a process and its
 * children cost, whatever else the machine is doing (bench/explore.ts,
 * bench/cli.ts).
 */
import { readFileSync } from 'node:fs';

/** Fields of /proc/<pid>/stat after the command name: utime and stime at 11/12, cutime and cstime at 13/14 (clock ticks). */
function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds a process has used so far. */
export function cpuOf(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / 100 : 0;
}

/** CPU seconds of this process's exited (and waited-for) children so far: cutime + cstime, which include their own children. */
export function childrenCpu(): number {
  const f = statFields('self');
  return f ? (Number(f[13]) + Number(f[14])) / 100 : 0;
}

/** This process's child processes. */
export function children(): number[] {
  try {
    return readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

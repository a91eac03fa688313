/**
 * How the kind path runs its tools (kind, kubectl, docker): a synchronous
 * runner that tests replace with a fake. Shared by `hcs-testbed kind`
 * (src/harness/cli/kind.ts) and the in-cluster install (install.ts).
 */
import { spawnSync } from 'node:child_process';

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Set when the program could not be started (e.g. ENOENT: not installed). */
  error?: string;
}

export type Runner = (cmd: string, args: string[], opts?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }) => RunResult;

export const spawnRunner: Runner = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 600_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ...(r.error ? { error: (r.error as NodeJS.ErrnoException).code ?? r.error.message } : {}) };
};


/**
 * Runs a scenario's `kubectl` command line with the real kubectl binary
 * against the testbed's HTTP facade (steps with `real: true`). The command
 * string goes through /bin/sh exactly as a user would type it (quotes,
 * backslash continuations). Watches (`-w`) are stopped after `watchMs` of wall
 * time: virtual time does not move while the command runs, so a watch shows the
 * current state.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface RealKubectlOptions {
  kubeconfig: string;
  cwd: string;
  /** The kubectl binary (default $KUBECTL or /usr/bin/kubectl). */
  binary?: string;
  /** Stop a `-w` command after this long (default 3 s). */
  watchMs?: number;
  /** Give up on any other command after this long (default 30 s). */
  timeoutMs?: number;
}

export interface RealKubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function kubectlBinary(explicit?: string): string {
  return explicit ?? process.env.KUBECTL ?? '/usr/bin/kubectl';
}

export async function runRealKubectl(command: string, o: RealKubectlOptions): Promise<RealKubectlResult> {
  const bin = kubectlBinary(o.binary);
  if (!existsSync(bin)) throw new Error(`the real kubectl is not installed at ${bin} (set KUBECTL, or drop "real: true" to use the built-in interpreter)`);
  const isWatch = /(^|\s)(-w|--watch)(\s|$|=)/.test(command);
  // Make "kubectl" in the command line resolve to the chosen binary.
  const script = `kubectl() { "${bin}" "$@"; }\n${command}`;
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', script], { cwd: o.cwd, env: { ...process.env, KUBECONFIG: o.kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let stoppedWatch = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const stop = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      if (isWatch) stoppedWatch = true;
      else stderr += `\n(kubectl did not finish within ${(o.timeoutMs ?? 30_000) / 1000}s and was stopped)`;
      stop();
    }, isWatch ? o.watchMs ?? 3000 : o.timeoutMs ?? 30_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: stoppedWatch ? 0 : code ?? 1, stdout, stderr });
    });
  });
}

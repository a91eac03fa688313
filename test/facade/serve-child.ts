/**
 * `hcs-testbed serve` as a child process (the real CLI), for the tests that
 * must measure it from outside: a serve that blocks its event loop, runs out
 * of file descriptors or ignores a signal cannot report it itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './fixture.js';

export interface ServeChild {
  child: ChildProcess;
  dir: string;
  url: string;
  ca: string;
  kubeconfig: string;
  /** SIGTERM, then the wall ms until it exited and its exit code (SIGKILL after `killAfterMs`). */
  stop(killAfterMs?: number): Promise<{ ms: number; code: number | null; signal: NodeJS.Signals | null }>;
  /** The child's resident set size (MB), from /proc. */
  rssMb(): number;
}

/** Start serve with `args` (after `serve --port 0 --kubeconfig-dir <tmp>`); `prefix`: a command to run it under (e.g. prlimit). */
export async function startServeChild(args: string[], opts: { prefix?: string[]; upWithinMs?: number } = {}): Promise<ServeChild> {
  const dir = mkdtempSync(join(tmpdir(), 'serve-child-'));
  const cmd = [...(opts.prefix ?? []), process.execPath, join(REPO, 'bin/hcs-testbed.mjs'), 'serve', '--port', '0', '--kubeconfig-dir', dir, ...args];
  const child = spawn(cmd[0]!, cmd.slice(1), { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not come up within ${opts.upWithinMs ?? 90_000} ms: ${out} ${err}`)), opts.upWithinMs ?? 90_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.includes('Ctrl-C stops.')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${out} ${err}`));
    });
  });
  const url = /API:\s+(https:\/\/\S+)/.exec(out)![1]!;
  const kubeconfig = join(dir, 'kubeconfig');
  const kc = JSON.parse(readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: { 'certificate-authority-data': string } }[] };
  const ca = Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8');
  return {
    child,
    dir,
    url,
    ca,
    kubeconfig,
    rssMb: () => {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : NaN;
    },
    stop: async (killAfterMs = 20_000) => {
      const t0 = performance.now();
      if (child.exitCode !== null || child.signalCode !== null) return { ms: 0, code: child.exitCode, signal: child.signalCode };
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const e = await exited;
      clearTimeout(t);
      const ms = performance.now() - t0;
      rmSync(dir, { recursive: true, force: true });
      return { ms, ...e };
    },
  };
}

/** GET `path` on serve with a fresh connection; resolves with the status and the wall ms it took (rejects after `timeoutMs`). */
export function timedGet(url: string, path: string, ca: string, timeoutMs: number): Promise<{ code: number; ms: number }> {
  const u = new URL(url);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method: 'GET', path, ca, timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ code: res.statusCode ?? 0, ms: performance.now() - t0 }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to GET ${path} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

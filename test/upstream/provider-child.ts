/**
 * `hcs-testbed provider` as a separate OS process, started the way
 * docs/real-clusters.md §7 tells a user to: from the run's `provider.env`
 * (`set -a; . provider.env; set +a`), its stdout appended to the run's
 * provider log (what `controllerLog` checks, `kubectl logs
 * deployment/hcs-controller-manager` and the run's provider events read:
 * src/product/provider/process.ts). Used by test/upstream/scenarios.test.ts
 * and test/realcluster/provider-process-upstream.test.ts.
 *
 * Every wait here is bounded: ready within `readyMs`, stopped within
 * `stopMs` (then SIGKILL, reported).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';

export interface ProviderChild {
  child: ChildProcess;
  /** http://127.0.0.1:PORT of /healthz and /readyz (from the "informers synced" line). */
  healthUrl: string;
  /** What the process wrote on stderr so far. */
  stderr(): string;
  /** SIGTERM, then its exit (SIGKILL after `stopMs`: `killed: true`). */
  stop(stopMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean; wallMs: number }>;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * `healthAddr` (default 127.0.0.1:0: a free port) is its --health-addr.
 * Resolves once it logged "informers synced" and its /readyz answered 200,
 * or at once with `waitReady: false` (the run waits itself:
 * --provider-health; `healthUrl` is then derived from `healthAddr`).
 */
export async function startProviderChild(o: { envFile: string; logFile: string; speed: number | string; healthAddr?: string; waitReady?: boolean; readyMs?: number }): Promise<ProviderChild> {
  const before = sizeOf(o.logFile);
  const fd = openSync(o.logFile, 'a');
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const child = spawn('sh', ['-c', `set -a; . ${q(o.envFile)}; set +a; exec ${q(process.execPath)} bin/hcs-testbed.mjs provider --health-addr ${o.healthAddr ?? '127.0.0.1:0'} --speed ${o.speed}`], { stdio: ['ignore', fd, 'pipe'] });
  closeSync(fd);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  const stop: ProviderChild['stop'] = async (stopMs = 30_000) => {
    const t0 = Date.now();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), stopMs)));
    const first = await Promise.race([exit, late]);
    clearTimeout(timer);
    if (first !== 'late') return { ...first, killed: false, wallMs: Date.now() - t0 };
    child.kill('SIGKILL');
    return { ...(await exit), killed: true, wallMs: Date.now() - t0 };
  };
  if (o.waitReady === false) return { child, healthUrl: `http://${o.healthAddr ?? '127.0.0.1:0'}`, stderr: () => stderr, stop };
  const deadline = Date.now() + (o.readyMs ?? 60_000);
  for (;;) {
    const m = /"msg":"informers synced; reconciling","health":"([^"]+)"/.exec(readFileSync(o.logFile).subarray(before).toString('utf8'));
    if (m) {
      const healthUrl = m[1]!;
      // The health endpoint says so too (what --provider-health waits for).
      const r = await fetch(`${healthUrl}/readyz`);
      if (r.status !== 200) {
        await stop();
        throw new Error(`the provider logged "informers synced" but ${healthUrl}/readyz answered ${r.status}`);
      }
      return { child, healthUrl, stderr: () => stderr, stop };
    }
    if (child.exitCode !== null) throw new Error(`the provider exited ${child.exitCode} before it was ready: ${stderr}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the provider did not get ready within ${(o.readyMs ?? 60_000) / 1000} s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A provider log's `level: error` lines and its last lines, for a failure message. */
export function logDigest(text: string, tail = 40): string {
  const lines = text.split('\n').filter(Boolean);
  const errors = lines.filter((l) => l.includes('"level":"error"'));
  return [`provider log: ${lines.length} lines, ${errors.length} errors`, ...errors.slice(-20).map((l) => `  ERROR ${l}`), `last ${Math.min(tail, lines.length)} lines:`, ...lines.slice(-tail).map((l) => `  ${l}`)].join('\n');
}

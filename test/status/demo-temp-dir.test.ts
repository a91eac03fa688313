/**
 * Issue 32: `hcs-testbed demo` left a 0644 kubeconfig holding serve's token in a temporary directory
 * it never removed. Now the workload kubeconfig is 0600 (writeSecretFile) and the directory
 * (src/harness/demo/temp-dir.ts) goes when the demo ends: done, failed, or stopped by SIGINT / SIGTERM.
 * The demo runs against a server that refuses or never answers (no testbed needed); every wait is bounded.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runDemo } from '../../src/harness/cli/demo.js';
import { kubeconfigWithContext } from '../../src/harness/demo/run.js';

const root = mkdtempSync(join(tmpdir(), 'demo-temp-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (p: string): number => statSync(p).mode & 0o777;
const TOKEN = 'demo-secret-token-0123456789';

function kubeconfig(dir: string, server: string): string {
  const file = join(dir, 'kubeconfig');
  const cluster = { name: 'testbed', cluster: { server } };
  const user = { name: 'admin', user: { token: TOKEN } };
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'management',
      clusters: [cluster],
      users: [user],
      contexts: [
        { name: 'management', context: { cluster: 'testbed', user: 'admin' } },
        { name: 'demo', context: { cluster: 'testbed', user: 'admin' } },
      ],
    }),
  );
  return file;
}

let n = 0;
function freshDir(): string {
  const d = join(root, String(++n));
  mkdirSync(d);
  return d;
}

const demoDirs = (tmp: string) => readdirSync(tmp).filter((f) => f.startsWith('hcs-demo-'));

describe('issue 32: the demo kubeconfig is 0600 and its directory is removed', () => {
  it('kubeconfigWithContext: 0600 over an existing 0644 file; a symbolic link there is replaced, its target untouched', () => {
    const d = freshDir();
    const src = kubeconfig(d, 'https://127.0.0.1:1');
    const out = join(d, 'workload.kubeconfig');
    writeFileSync(out, 'old\n');
    chmodSync(out, 0o644);
    kubeconfigWithContext(src, 'demo', out);
    expect(mode(out)).toBe(0o600);
    expect(JSON.parse(readFileSync(out, 'utf8'))['current-context']).toBe('demo');
    const target = join(d, 'victim');
    writeFileSync(target, 'precious\n');
    chmodSync(target, 0o644);
    const link = join(d, 'linked.kubeconfig');
    symlinkSync(target, link);
    kubeconfigWithContext(src, 'demo', link);
    expect(lstatSync(link).isSymbolicLink()).toBe(false);
    expect(mode(link)).toBe(0o600);
    expect([readFileSync(target, 'utf8'), mode(target)]).toEqual(['precious\n', 0o644]);
  });

  it('a demo that fails (the server refuses) leaves no directory behind', { timeout: 30_000 }, async () => {
    const d = freshDir();
    const tmp = freshDir();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp; // os.tmpdir() reads it at each call
    try {
      await expect(runDemo({ doc: 'worker-nodes', kubeconfig: kubeconfig(d, 'http://127.0.0.1:1'), io: { write: () => undefined } })).rejects.toThrow();
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(demoDirs(tmp)).toEqual([]);
  });

  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    it(`${sig} while the demo waits on the server: the directory is removed and the process ends by the signal`, { timeout: 60_000 }, async () => {
      // A server that accepts and never answers: the demo's first request waits (its own timeout is 60 s).
      const held: Socket[] = [];
      const server: Server = createServer((s) => held.push(s));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as { port: number }).port;
      const d = freshDir();
      const tmp = freshDir();
      const kc = kubeconfig(d, `http://127.0.0.1:${port}`);
      const demo = fileURLToPath(new URL('../../src/harness/cli/demo.ts', import.meta.url));
      const script = `const { runDemo } = await import(${JSON.stringify(demo)}); await runDemo({ doc: 'worker-nodes', kubeconfig: ${JSON.stringify(kc)}, io: { write: () => undefined } });`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, TMPDIR: tmp }, stdio: 'ignore' });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
      try {
        // Wait (bounded) for the demo's directory, with its kubeconfig, and the server's connection.
        const t0 = Date.now();
        while ((demoDirs(tmp).length === 0 || held.length === 0) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 50));
        const [dir] = demoDirs(tmp);
        expect(dir, 'the demo made its directory').toBeDefined();
        expect(mode(join(tmp, dir!))).toBe(0o700);
        expect(mode(join(tmp, dir!, 'workload.kubeconfig'))).toBe(0o600);
        child.kill(sig);
        const end = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
        expect(end).toEqual({ code: null, signal: sig });
        expect(existsSync(join(tmp, dir!))).toBe(false);
      } finally {
        child.kill('SIGKILL');
        for (const s of held) s.destroy();
        server.close();
      }
    });
  }
});

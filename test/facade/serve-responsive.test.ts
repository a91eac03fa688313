/**
 * A valid write cannot hang `hcs-testbed serve` (issues 24 and 32): a
 * MachineDeployment's spec.replicas is bounded by the testbed's limit
 * (MAX_REPLICAS = 5,000, Kubernetes' largest supported cluster;
 * src/world/capi/admission.ts): 2147483647 is a 422 naming spec.replicas,
 * 2147483648 a 400 from the webhook's int32 decode (src/world/webhook-decode.ts),
 * 1e308 a 422 from the CRD's integer schema; nothing is written. At the limit
 * the MachineSet creates Machines in bursts of MACHINESET_BURST, the next
 * burst paced by the manager's client rate (src/world/capi/machineset.ts), and
 * the drain lets the event loop run every SERVE_YIELD_SLICE_MS: /healthz keeps
 * answering within 1 s, the virtual clock moves, and SIGTERM stops serve.
 *
 * serve runs as a child process (the real CLI), measured from this process:
 * a serve that blocks its event loop cannot answer, whatever it would say.
 * Figures (RSS, SIGTERM latency): npm run bench -- facade-load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from './fixture.js';
import { haveKubectl, KubectlRunner } from './kubectl.js';

interface Kubeconfig {
  clusters: { cluster: { 'certificate-authority-data': string } }[];
}

/** GET `path` on serve; resolves with the status and the wall ms it took (rejects after `timeoutMs`). */
function timedGet(url: string, path: string, ca: string, timeoutMs: number): Promise<{ code: number; ms: number }> {
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

describe.skipIf(!haveKubectl)('issue 24: a valid write cannot hang serve (the real CLI and kubectl)', () => {
  let child: ChildProcess | undefined;
  let dir: string;
  let url = '';
  let ca = '';
  let k: KubectlRunner;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'serve-responsive-'));
    child = spawn(process.execPath, [join(REPO, 'bin/hcs-testbed.mjs'), 'serve', '--preset', 'worker-cluster', '--port', '0', '--speed', '60', '--kubeconfig-dir', dir], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not come up within 90 s: ${out} ${err}`)), 90_000);
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        if (out.includes('Ctrl-C stops.')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child!.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited (${code}): ${out} ${err}`));
      });
    });
    url = /API:\s+(https:\/\/\S+)/.exec(out)![1]!;
    const kc = JSON.parse(readFileSync(join(dir, 'kubeconfig'), 'utf8')) as Kubeconfig;
    ca = Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8');
    k = new KubectlRunner(join(dir, 'kubeconfig'));
  }, 120_000);

  afterAll(async () => {
    const c = child;
    if (c && c.exitCode === null) {
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGTERM');
      const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('1e308 is refused by the int32 schema (422, type integer), the MachineDeployment unchanged', async () => {
    const r = await k.run(`kubectl -n cpaas-system patch machinedeployment demo-md-0 --type=merge -p '{"spec":{"replicas":1e308}}'`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.replicas.*must be of type integer: "number"/);
    const g = await k.run(`kubectl -n cpaas-system get machinedeployment demo-md-0 -o jsonpath='{.spec.replicas}'`);
    expect(g.stdout).toBe('3');
  }, 60_000);

  it('2147483647 is refused (422, spec.replicas, the testbed limit), 2147483648 by the webhook decode (400); the MachineDeployment unchanged', async () => {
    const big = await k.run(`kubectl -n cpaas-system patch machinedeployment demo-md-0 --type=merge -p '{"spec":{"replicas":2147483647}}'`);
    expect(big.code).not.toBe(0);
    expect(big.stderr).toMatch(/spec\.replicas: Invalid value: 2147483647: must be less than or equal to 5000/);
    const over = await k.run(`kubectl -n cpaas-system patch machinedeployment demo-md-0 --type=merge -p '{"spec":{"replicas":2147483648}}'`);
    expect(over.code).not.toBe(0);
    expect(over.stderr).toMatch(/BadRequest|cannot unmarshal number 2147483648 into Go struct field MachineDeploymentSpec\.spec\.replicas of type int32/);
    const scale = await k.run(`kubectl -n cpaas-system scale machinedeployment demo-md-0 --replicas=2147483647`);
    expect(scale.code).not.toBe(0);
    const g = await k.run(`kubectl -n cpaas-system get machinedeployment demo-md-0 -o jsonpath='{.spec.replicas}'`);
    expect(g.stdout).toBe('3');
  }, 60_000);

  it('replicas 5000 (the limit) is accepted; /healthz answers within 1 s for 8 s after, the virtual clock moves, kubectl still works', async () => {
    const timeNow = async (): Promise<number> => {
      const r = await k.run(`kubectl get --raw /_testbed/time`);
      return (JSON.parse(r.stdout) as { now: number }).now;
    };
    const r = await k.run(`kubectl -n cpaas-system patch machinedeployment demo-md-0 --type=merge -p '{"spec":{"replicas":5000}}'`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const t0 = await timeNow();
    const samples: number[] = [];
    const until = Date.now() + 8_000;
    while (Date.now() < until) {
      const h = await timedGet(url, '/healthz', ca, 1_000);
      expect(h.code).toBe(200);
      samples.push(h.ms);
      await new Promise((res) => setTimeout(res, 100));
    }
    const worst = Math.max(...samples);
    console.log(`/healthz during the scale-up: ${samples.length} answers, worst ${worst.toFixed(0)} ms, median ${samples.sort((a, b) => a - b)[samples.length >> 1]!.toFixed(0)} ms`);
    expect(samples.length).toBeGreaterThan(10);
    expect(worst).toBeLessThan(1_000);
    // The clock is not held at one instant by the backlog (--speed 60: about a minute of virtual time per wall second).
    expect(await timeNow()).toBeGreaterThan(t0);
    const n = await k.run(`kubectl -n cpaas-system get machinedeployment demo-md-0 -o jsonpath='{.spec.replicas}'`);
    expect(n.stdout).toBe('5000');
  }, 90_000);

  it('SIGTERM during the backlog stops serve (exit 0)', async () => {
    const c = child!;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => c.once('exit', (code, signal) => r({ code, signal })));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 20_000);
    const e = await exited;
    clearTimeout(t);
    expect(e).toEqual({ code: 0, signal: null });
  }, 30_000);
});

/**
 * The HCS provider as a separate OS process (`hcs-testbed provider`) is the
 * "external" provider of `run --provider external` on the apiserver backend
 * (issue 16): scenarios pass with the same step verdicts as with the
 * in-process provider, the process talks to the run's mock-hcs only over
 * signed HTTPS, reaches the workload clusters through their
 * `<cluster>-kubeconfig` Secrets (the Kube-OVN AppRelease, OVN-1), serves
 * /healthz, /readyz and /metrics on loopback, logs one JSON line per
 * decision (OPS-3), and stops on SIGTERM with exit 0. Stopping it with
 * SIGTERM, and killing it with SIGKILL, while a persistent disk is
 * attaching loses nothing: a new process carries on from the cluster's and
 * the cloud's state and the scenario's invariants (DISK-3: never attached
 * twice, DISK-9, POOL-4, no orphans) hold.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult, type TestbedHandle } from '../../src/harness/scenario/runner.js';
import { openBackend, type OpenBackend } from '../../src/harness/realcluster/backends.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/testbed.js';
import type { RemoteTestbed } from '../../src/harness/realcluster/remote.js';
import { skipReason, suiteSuffix } from './env.js';

const SPEED = 10;
const dir = mkdtempSync(join(tmpdir(), 'hcs-provider-process-'));
const logFile = join(dir, 'provider.log');

interface Proc {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  healthUrl: string;
}

let backend: OpenBackend;

/** Start `hcs-testbed provider` from the run's provider.env values, stdout appended to the run's provider log. */
async function startProvider(): Promise<Proc> {
  const x = backend.external!.info;
  const before = (() => {
    try {
      return readFileSync(logFile, 'utf8').length;
    } catch {
      return 0;
    }
  })();
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['bin/hcs-testbed.mjs', 'provider', '--health-addr', '127.0.0.1:0', '--speed', String(SPEED), '--ca-file', x.caFile], {
    env: { ...process.env, KUBECONFIG: x.kubeconfig, HCS_CLOUD_URL: x.cloudUrl, HCS_AK: x.ak, HCS_SK: x.sk, HCS_PROJECT_ID: x.projectId, HCS_REGION: x.region, HCS_NAMESPACE: x.namespace },
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const m = /"msg":"informers synced; reconciling","health":"([^"]+)"/.exec(readFileSync(logFile, 'utf8').slice(before));
    if (m) return { child, exit, healthUrl: m[1]! };
    if (child.exitCode !== null) throw new Error(`the provider exited ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`the provider did not get ready within 60 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Step verdicts, comparable between backends (titles and pass/fail). */
function verdicts(r: ScenarioResult): string[] {
  return r.steps.map((s) => `${s.index} ${s.ok ? 'ok' : 'FAIL'} ${s.title}`);
}

describe.skipIf(!!skipReason)(`hcs-testbed provider as the external provider of run --provider external (apiserver backend)${suiteSuffix}`, () => {
  let proc: Proc;

  beforeAll(async () => {
    backend = await openBackend({ backend: 'apiserver', provider: 'external', speed: SPEED, externalDir: join(dir, 'external'), providerLog: logFile });
    proc = await startProvider();
  }, 120_000);

  afterAll(async () => {
    if (proc && proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    await backend?.close();
  }, 60_000);

  it('serves /healthz, /readyz and /metrics on loopback', async () => {
    expect(proc.healthUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${proc.healthUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${proc.healthUrl}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${proc.healthUrl}/metrics`)).text()).toContain('# TYPE hcs_provider_reconcile_total counter');
  });

  for (const file of ['scenarios/scale-out-workers.yaml', 'scenarios/maxsurge-disk-reuse.yaml']) {
    it(`${file}: same step verdicts as with the in-process provider`, async () => {
      const s = loadScenario(file);
      const embedded = await runScenario(s, embeddedTestbedFactory());
      const wall0 = performance.now();
      const external = await runScenario(s, backend.factory);
      const failed = external.steps.filter((x) => !x.ok).map((x) => `${x.index} ${x.title}: ${x.error}\n${x.detail.join('\n')}`);
      console.log(`${file}: external provider process, ${((performance.now() - wall0) / 1000).toFixed(1)} s wall (paced ${SPEED}x), ${external.steps.length} steps`);
      expect(failed, failed.join('\n\n')).toEqual([]);
      expect(verdicts(external)).toEqual(verdicts(embedded));
      expect(external.ok).toBe(embedded.ok);
      expect([...external.rulesExercised].sort()).toEqual([...embedded.rulesExercised].sort());
    }, 600_000);
  }

  it('the process reached the cloud only over HTTPS and the workload cluster through its kubeconfig Secret (OVN-1)', () => {
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('created AppRelease cpaas-system/cni-kube-ovn in workload cluster demo');
    expect(log).toMatch(/"msg":"hcs provider started".*"cloud":"https:\/\/127\.0\.0\.1:\d+"/);
    // Every line is one JSON object (structured logs).
    for (const line of log.split('\n').filter(Boolean)) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  });

  it('stopping with SIGTERM and killing with SIGKILL while a persistent disk attaches loses nothing', async () => {
    const s = loadScenario('scenarios/scale-out-workers.yaml');
    let tb: RemoteTestbed | undefined;
    const factory = async (seed: number): Promise<TestbedHandle> => (tb = (await backend.factory(seed)) as RemoteTestbed);
    const kills: { signal: NodeJS.Signals; volume: string; status: string; exit: { code: number | null; signal: NodeJS.Signals | null } }[] = [];
    let busy = false;
    let done = false;
    // Watch the scenario's cloud; at the first attach stop the provider with SIGTERM, at the next one kill it with SIGKILL.
    const watcher = (async () => {
      while (!done && kills.length < 2) {
        await new Promise((r) => setTimeout(r, 10));
        if (busy || !tb) continue;
        const v = tb.world.cloud.listVolumes().find((x) => x.status === 'attaching');
        if (!v) continue;
        busy = true;
        const signal: NodeJS.Signals = kills.length === 0 ? 'SIGTERM' : 'SIGKILL';
        proc.child.kill(signal);
        const exit = await proc.exit;
        kills.push({ signal, volume: v.name, status: v.status, exit });
        proc = await startProvider();
        // The next kill only once the new process has attached something itself.
        while (!done && tb.world.cloud.listVolumes().some((x) => x.status === 'attaching')) await new Promise((r) => setTimeout(r, 10));
        busy = false;
      }
    })();
    const r = await runScenario(s, factory);
    done = true;
    await watcher;
    const failed = r.steps.filter((x) => !x.ok).map((x) => `${x.index} ${x.title}: ${x.error}\n${x.detail.join('\n')}`);
    expect(failed, failed.join('\n\n')).toEqual([]);
    expect(r.ok).toBe(true);
    expect(kills.map((k) => k.signal)).toEqual(['SIGTERM', 'SIGKILL']);
    expect(kills.every((k) => k.status === 'attaching')).toBe(true);
    // SIGTERM: graceful, exit 0; SIGKILL: no chance to finish anything.
    expect(kills[0]!.exit).toEqual({ code: 0, signal: null });
    expect(kills[1]!.exit).toEqual({ code: null, signal: 'SIGKILL' });
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('"msg":"SIGTERM: finishing the reconcile in flight, starting no new one"');
    expect(log).toContain('"msg":"stopped"');
    console.log(`restarts: ${kills.map((k) => `${k.signal} while ${k.volume} was ${k.status}`).join('; ')}`);
  }, 600_000);

  it('SIGTERM: exit 0 after the reconcile in flight', async () => {
    proc.child.kill('SIGTERM');
    expect(await proc.exit).toEqual({ code: 0, signal: null });
  }, 60_000);
});

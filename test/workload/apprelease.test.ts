import { describe, expect, it } from 'vitest';
import { APPRELEASE_API_VERSION, type AppRelease, type AppReleasePhase } from '../../src/product/api/apprelease.js';
import { runKubectl } from '../../src/harness/kubectl/index.js';
import { createEmbeddedEnv, type EmbeddedEnv } from '../../src/world/embedded.js';
import {
  ANN_APPRELEASE_FAIL,
  APPRELEASE_CONTROLLER,
  AppReleaseController,
  KUBE_OVN_CHART,
  defaultOsSupportMatrix,
  installedRevisionTrap,
  judgeDoneClaim,
  ovnUpgradeDone,
  setupAppReleaseController,
} from '../../src/world/workload/index.js';

const NS = 'cpaas-system';
const REF = { kind: 'AppRelease', namespace: NS, name: 'cni-kube-ovn' };

async function setup(revision = 'v4.1.6', annotations?: Record<string, string>): Promise<{ env: EmbeddedEnv; ar: () => Promise<AppRelease> }> {
  const env = createEmbeddedEnv({ seed: 3 });
  const wl = env.workloads.client(NS, 'demo');
  setupAppReleaseController(env.ctx, { matrix: defaultOsSupportMatrix() });
  await wl.create<AppRelease>({
    apiVersion: APPRELEASE_API_VERSION,
    kind: 'AppRelease',
    metadata: { name: 'cni-kube-ovn', namespace: NS, ...(annotations ? { annotations } : {}) },
    spec: { source: { charts: [{ name: KUBE_OVN_CHART, releaseName: 'cpaas-kube-ovn', targetRevision: revision }] }, values: { clusterName: 'demo' } },
  });
  return { env, ar: async () => (await wl.get<AppRelease>(REF))! };
}

const chart = (ar: AppRelease) => ar.status!.charts![KUBE_OVN_CHART]!;
const cond = (ar: AppRelease, type: string) => ar.status!.conditions!.find((c) => c.type === type);
const patchTarget = (env: EmbeddedEnv, v: string) =>
  runKubectl(
    `kubectl patch apprelease cni-kube-ovn -n cpaas-system --type='json' -p='[{"op":"replace","path":"/spec/source/charts/0/targetRevision","value":"${v}"}]'`,
    { mgmt: env.mgmt, workloads: env.workloads, clock: env.clock, logs: () => '', cwd: '.' },
  );

/** Record the phase sequence (with installedRevision) while the simulation runs. */
async function trace(env: EmbeddedEnv, ar: () => Promise<AppRelease>, until: AppReleasePhase[], ms = 5 * 60_000): Promise<{ phase: string; installed?: string; sync?: string; t: number }[]> {
  const seen: { phase: string; installed?: string; sync?: string; t: number }[] = [];
  const t0 = env.clock.now();
  await env.sim.runUntil(async () => {
    const a = await ar();
    const c = a.status?.charts?.[KUBE_OVN_CHART];
    if (c && seen.at(-1)?.phase !== c.phase) seen.push({ phase: c.phase, ...(c.installedRevision ? { installed: c.installedRevision } : {}), sync: `${cond(a, 'Sync')?.status}/${cond(a, 'Sync')?.reason}`, t: env.clock.now() - t0 });
    return !!c && until.includes(c.phase) && seen.length > 1;
  }, ms);
  return seen;
}

describe('AppRelease controller', () => {
  it('OVN-4: first install goes Downloading -> Installing -> HealthChecking -> Success', async () => {
    const { env, ar } = await setup();
    const seen = await trace(env, ar, ['Success']);
    expect(seen.map((s) => s.phase)).toEqual(['Downloading', 'Installing', 'HealthChecking', 'Success']);
    const a = await ar();
    expect(chart(a).installedRevision).toBe('v4.1.6');
    expect(['Validate', 'Sync', 'Health'].map((t) => cond(a, t)?.status)).toEqual(['True', 'True', 'True']);
  });

  it('OVN-4, OVN-6: a targetRevision patch goes Upgrading (old revision, Sync Unknown/Syncing) -> HealthChecking (new revision, Sync True/Synced) -> Success in about a minute', async () => {
    const { env, ar } = await setup();
    await env.sim.runUntil(async () => chart(await ar())?.phase === 'Success', 5 * 60_000).catch(() => undefined);
    expect((await patchTarget(env, 'v4.2.4')).stdout).toMatch(/patched/);
    const seen = await trace(env, ar, ['Success']);
    expect(seen.map((s) => [s.phase, s.installed, s.sync])).toEqual([
      ['Upgrading', 'v4.1.6', 'Unknown/Syncing'],
      ['HealthChecking', 'v4.2.4', 'True/Synced'],
      ['Success', 'v4.2.4', 'True/Synced'],
    ]);
    const total = seen.at(-1)!.t;
    expect(total).toBeGreaterThanOrEqual(45_000);
    expect(total).toBeLessThanOrEqual(90_000);
    // The document's command works as written.
    const out = await runKubectl(`kubectl get apprelease cni-kube-ovn -n cpaas-system -o jsonpath='Installed: {.status.charts.*.installedRevision}{"\\n"}Phase: {.status.charts.*.phase}{"\\n"}'`, {
      mgmt: env.mgmt,
      workloads: env.workloads,
      clock: env.clock,
      logs: () => '',
      cwd: '.',
    });
    expect(out.stdout).toBe('Installed: v4.2.4\nPhase: Success\n');
    // OVN-6: HealthChecking already showed the target revision; the detector flagged it.
    const flagged = env.events.all().filter((e) => e.type === 'apprelease.installed-revision-not-done');
    expect(flagged.length).toBeGreaterThan(0);
    expect(flagged[0]!.rules).toEqual(['OVN-6']);
  });

  it('OVN-6: ovnUpgradeDone needs phase Success AND installedRevision = target; trusting installedRevision alone is flagged', async () => {
    const { env, ar } = await setup();
    await env.sim.runUntil(async () => chart(await ar())?.phase === 'Success', 5 * 60_000);
    await patchTarget(env, 'v4.2.4');
    await env.sim.runUntil(async () => chart(await ar()).phase === 'HealthChecking', 5 * 60_000);
    const mid = await ar();
    expect(chart(mid).installedRevision).toBe('v4.2.4');
    expect(ovnUpgradeDone(mid, 'v4.2.4')).toBe(false);
    expect(installedRevisionTrap(mid, 'v4.2.4')).toMatch(/OVN-6: .*installedRevision v4\.2\.4 but phase is HealthChecking/);
    const naive = chart(mid).installedRevision === 'v4.2.4';
    expect(judgeDoneClaim(mid, 'v4.2.4', naive)).toMatchObject({ ok: false, message: expect.stringMatching(/OVN-6/) });
    await env.sim.runUntil(async () => chart(await ar()).phase === 'Success', 5 * 60_000);
    const done = await ar();
    expect(ovnUpgradeDone(done, 'v4.2.4')).toBe(true);
    expect(ovnUpgradeDone(done, 'v4.1.6')).toBe(false);
    expect(installedRevisionTrap(done, 'v4.2.4')).toBeUndefined();
    expect(judgeDoneClaim(done, 'v4.2.4', true)).toEqual({ ok: true });
  });

  it('OVN-5: a revision missing from the chart repository ends in DownloadFailed with the reason in the Sync condition', async () => {
    const { env, ar } = await setup();
    await env.sim.runUntil(async () => chart(await ar())?.phase === 'Success', 5 * 60_000);
    await patchTarget(env, 'v9.9.9');
    await env.sim.advance(5 * 60_000);
    const a = await ar();
    expect(chart(a)).toMatchObject({ phase: 'DownloadFailed', installedRevision: 'v4.1.6' });
    expect(cond(a, 'Sync')).toMatchObject({ status: 'False', reason: 'DownloadFailed', message: expect.stringMatching(/version v9\.9\.9 not found in the chart repository \(available: .*v4\.2\.4/) });
    const ev = (await env.workloads.client(NS, 'demo').list<{ reason: string; type: string } & AppRelease>('Event')).map((e) => [e.type, e.reason]);
    expect(ev).toContainEqual(['Warning', 'DownloadFailed']);
    // Intervention: a served revision moves it on.
    await patchTarget(env, 'v4.2.4');
    await env.sim.runUntil(async () => chart(await ar()).phase === 'Success', 5 * 60_000);
    expect(ovnUpgradeDone(await ar(), 'v4.2.4')).toBe(true);
  });

  it('OVN-5: DeployFailed keeps the old revision, NotReady the new one; both wait for intervention, then retry', async () => {
    for (const [fail, installed] of [
      ['DeployFailed', 'v4.1.6'],
      ['NotReady', 'v4.2.4'],
    ] as const) {
      const { env, ar } = await setup();
      await env.sim.runUntil(async () => chart(await ar())?.phase === 'Success', 5 * 60_000);
      await env.workloads.client(NS, 'demo').patch(REF, 'merge', { metadata: { annotations: { [ANN_APPRELEASE_FAIL]: fail } } });
      await patchTarget(env, 'v4.2.4');
      await env.sim.advance(10 * 60_000);
      const a = await ar();
      expect(chart(a), fail).toMatchObject({ phase: fail, installedRevision: installed });
      const c = fail === 'DeployFailed' ? cond(a, 'Sync') : cond(a, 'Health');
      expect(c).toMatchObject({ status: 'False', reason: fail, message: expect.stringMatching(/injected by annotation testbed\.hcs\/fail/) });
      expect(ovnUpgradeDone(a, 'v4.2.4')).toBe(false);
      // The operator fixes it (here: the injected fault goes away).
      await env.workloads.client(NS, 'demo').patch(REF, 'merge', { metadata: { annotations: { [ANN_APPRELEASE_FAIL]: null } } });
      expect((await env.sim.runUntil(async () => chart(await ar()).phase === 'Success', 5 * 60_000)).ok).toBe(true);
      expect(ovnUpgradeDone(await ar(), 'v4.2.4')).toBe(true);
    }
  });

  it('OVN-4: a restarted controller (fresh instance, queue lost) continues the upgrade from the status', async () => {
    const { env, ar } = await setup();
    await env.sim.runUntil(async () => chart(await ar())?.phase === 'Success', 5 * 60_000);
    await patchTarget(env, 'v4.2.4');
    await env.sim.runUntil(async () => chart(await ar()).phase === 'Upgrading', 60_000);
    env.manager.crash(APPRELEASE_CONTROLLER);
    await env.sim.advance(10 * 60_000);
    expect(chart(await ar()).phase).toBe('Upgrading');
    const fresh = new AppReleaseController(env.ctx, { matrix: defaultOsSupportMatrix() });
    await fresh.reconcile(`${NS}/demo|${NS}/cni-kube-ovn`); // what the new process's resync does
    env.manager.restart(APPRELEASE_CONTROLLER, [`${NS}/demo|${NS}/cni-kube-ovn`]);
    expect((await env.sim.runUntil(async () => chart(await ar()).phase === 'Success', 5 * 60_000)).ok).toBe(true);
    expect(chart(await ar()).installedRevision).toBe('v4.2.4');
  });
});

/**
 * Negative test of the KCP-2 scale-down invariant (src/harness/scenario/kcp-scale-down.ts, issue 22):
 * a KubeadmControlPlane that removes the newest control plane Machine instead of the oldest
 * outdated one (upstream selectMachineForScaleDown) fails control-plane-upgrade with KCP-2. The bug
 * is planted by redirecting, in this test's testbed only, the model's deletion of a control plane
 * Machine to the newest one. A KCP that removes the oldest machine whatever its template fails
 * control-plane-rollback-midway (a rollback started in the middle of a control plane upgrade: the old
 * template's machines are up to date again and the oldest) with KCP-2, planted the same way; so does one
 * that scales in from the failure domain with the fewest machines, on control-plane-failure-domains. The pure
 * choice is covered on hand-built machine sets below.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABEL_CONTROL_PLANE, type Machine } from '../../src/product/api/capi.js';
import type { KubeClient } from '../../src/core/kube/client.js';
import { scaleDownChoices } from '../../src/harness/scenario/kcp-scale-down.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type TestbedFactory } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type Testbed } from '../../src/harness/testbed/index.js';

/** Live control plane Machines, oldest first (ties by name). */
const byAge = (ms: Machine[]): Machine[] => [...ms].sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name));

/**
 * A planted KCP bug: whenever a live control plane Machine is deleted, `pick` chooses among the live control
 * plane Machines which one is deleted instead (the KCP's own choice is ignored).
 */
function kcpDeletes(pick: (liveControlPlane: Machine[]) => Machine | undefined): TestbedFactory {
  const base = embeddedTestbedFactory({});
  return async (seed) => {
    const tb = (await base(seed)) as Testbed;
    const mgmt = tb.env.mgmt as KubeClient;
    const del = mgmt.delete.bind(mgmt);
    mgmt.delete = (async (ref: Parameters<KubeClient['delete']>[0], opts?: Parameters<KubeClient['delete']>[1]) => {
      const target = ref.kind === 'Machine' ? await mgmt.get<Machine>(ref) : undefined;
      if (target?.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined && !target.metadata.deletionTimestamp) {
        const cps = (await mgmt.list<Machine>('Machine', { namespace: ref.namespace })).filter((m) => m.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined && !m.metadata.deletionTimestamp);
        const victim = pick(cps);
        if (victim) return del({ ...ref, name: victim.metadata.name }, opts);
      }
      return del(ref, opts);
    }) as KubeClient['delete'];
    return tb;
  };
}

describe('KCP-2: the control plane removes the machine upstream removes', () => {
  it('a KCP that deletes the newest control plane machine first fails control-plane-upgrade', { timeout: 180_000 }, async () => {
    const factory = kcpDeletes((cps) => byAge(cps).reverse()[0]);
    const path = join(resolve('scenarios'), 'control-plane-upgrade.yaml');
    const r = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), factory);
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)!.error).toMatch(/KCP-2: KubeadmControlPlane cpaas-system\/demo-control-plane removed control plane Machine \S+ \(created [^)]*, outdated\), but upstream removes \S+ \(created [^)]*, outdated\)/);
  });

  it('a KCP that removes the oldest machine, outdated or not, fails control-plane-rollback-midway', { timeout: 180_000 }, async () => {
    // The bug: whatever the KCP picks, the oldest live control plane Machine is deleted (outdatedness ignored). After the
    // rollback midway the old template's machines are up to date again and the oldest: the bug removes one of them.
    const factory = kcpDeletes((cps) => byAge(cps)[0]);
    const path = join(resolve('scenarios'), 'control-plane-rollback-midway.yaml');
    const clean = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
    expect(clean.steps.filter((s) => !s.ok).map((s) => `${s.title}: ${s.error}`)).toEqual([]);
    const r = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), factory);
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)!.error).toMatch(/KCP-2: KubeadmControlPlane cpaas-system\/demo-control-plane removed control plane Machine \S+ \(created [^)]*, up to date\), but upstream removes \S+ \(created [^)]*, outdated\)/);
  });

  it('a KCP that scales in from the failure domain with the fewest machines fails control-plane-failure-domains', { timeout: 180_000 }, async () => {
    // The bug: whatever the KCP picks, the oldest control plane Machine of the failure domain holding the fewest is deleted.
    const factory = kcpDeletes((cps) => {
      const count = (fd: string | undefined): number => cps.filter((m) => m.spec.failureDomain === fd).length;
      const fewest = [...new Set(cps.map((m) => m.spec.failureDomain))].sort((a, b) => count(a) - count(b))[0];
      return byAge(cps.filter((m) => m.spec.failureDomain === fewest))[0];
    });
    const path = join(resolve('scenarios'), 'control-plane-failure-domains.yaml');
    const clean = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
    expect(clean.steps.filter((s) => !s.ok).map((s) => `${s.title}: ${s.error}`)).toEqual([]);
    const r = await runScenario(loadScenario(path, readFileSync(path, 'utf8')), factory);
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)!.error).toMatch(/KCP-2: KubeadmControlPlane cpaas-system\/demo-control-plane removed control plane Machine \S+ \(created [^)]*, failure domain az2, up to date\), but upstream removes \S+ \(created [^)]*, failure domain az1, up to date\)/);
  });

  it('the choice: delete annotation, then outdated, then the failure domain with the most machines, then the oldest', { timeout: 10_000 }, () => {
    const m = (name: string, created: number, o: { fd?: string; outdated?: boolean; del?: boolean; healthy?: boolean } = {}) => ({
      name,
      version: 'v1.31.6',
      created,
      ...(o.fd ? { failureDomain: o.fd } : {}),
      outdated: o.outdated ?? false,
      deleteAnnotation: o.del ?? false,
      healthy: o.healthy ?? true,
    });
    const names = (xs: { name: string }[] | undefined): string[] | undefined => xs?.map((x) => x.name).sort();
    expect(names(scaleDownChoices([m('a', 1), m('b', 2), m('c', 3)], undefined))).toEqual(['a']);
    expect(names(scaleDownChoices([m('a', 1), m('b', 2, { outdated: true }), m('c', 3, { outdated: true })], undefined))).toEqual(['b']);
    expect(names(scaleDownChoices([m('a', 1, { outdated: true }), m('b', 2, { del: true })], undefined))).toEqual(['b']);
    // fd2 holds two machines: its oldest goes, although a (fd1) is older.
    expect(names(scaleDownChoices([m('a', 1, { fd: 'fd1' }), m('b', 2, { fd: 'fd2' }), m('c', 3, { fd: 'fd2' })], ['fd1', 'fd2']))).toEqual(['b']);
    // A machine in a failure domain the cluster no longer has goes first.
    expect(names(scaleDownChoices([m('a', 1, { fd: 'fd1' }), m('b', 2, { fd: 'gone' }), m('c', 3, { fd: 'fd1' })], ['fd1', 'fd2']))).toEqual(['b']);
    // A tie between failure domains: either's oldest is upstream's pick.
    expect(names(scaleDownChoices([m('a', 1, { fd: 'fd1' }), m('b', 2, { fd: 'fd2' })], ['fd1', 'fd2']))).toEqual(['a', 'b']);
    // An outdated machine whose Node is not Ready: upstream reads component conditions the objects do not show — no assertion.
    expect(scaleDownChoices([m('a', 1), m('b', 2, { outdated: true, healthy: false })], undefined)).toBeUndefined();
    // Upstream filters only the outdated machines by health: an up-to-date machine's NotReady Node changes nothing.
    expect(names(scaleDownChoices([m('a', 1, { healthy: false }), m('b', 2), m('c', 3, { outdated: true })], undefined))).toEqual(['c']);
    // A rollback midway: the old template's machines are up to date again and the oldest; the outdated newest one goes.
    expect(names(scaleDownChoices([m('a', 1), m('b', 2), m('d', 4, { outdated: true })], undefined))).toEqual(['d']);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { Cluster } from '../../src/product/api/capi.js';
import type { HCSCluster } from '../../src/product/api/hcs.js';
import { COND_KUBE_OVN, DEFAULT_REGISTRY } from '../../src/product/provider/index.js';
import type { Testbed } from '../../src/harness/testbed/index.js';
import type { AppRelease } from '../../src/product/api/apprelease.js';
import { KUBE_OVN_CHART, ovnUpgradeDone } from '../../src/world/workload/index.js';
import { NS, bootWorkerCluster, kubectl } from './fixture.js';

let tb: Testbed | undefined;
afterEach(async () => {
  await tb?.close();
  tb = undefined;
});

const REF = { kind: 'AppRelease', namespace: NS, name: 'cni-kube-ovn' };
const appRelease = (t: Testbed) => t.env.workloads.client(NS, 'demo').get<AppRelease>(REF);
const hcsCluster = async (t: Testbed) => (await t.env.mgmt.get<HCSCluster>({ kind: 'HCSCluster', namespace: NS, name: 'demo' }))!;
const kubeOvnCond = async (t: Testbed) => (await hcsCluster(t)).status?.conditions?.find((c) => c.type === COND_KUBE_OVN);

describe('Kube-OVN AppRelease (provider side)', () => {
  it('OVN-1: the provider creates cni-kube-ovn in cpaas-system of the workload cluster when the cluster is first built', async () => {
    tb = await bootWorkerCluster();
    const ar = (await appRelease(tb))!;
    expect(ar).toBeDefined();
    expect(ar.apiVersion).toBe('app.alauda.io/v1');
    expect(ar.spec.source.charts).toEqual([{ name: 'acp/chart-cpaas-kube-ovn', releaseName: 'cpaas-kube-ovn', targetRevision: 'v4.1.6' }]);
    expect(ar.spec.values).toEqual({ clusterName: 'demo', cidr: { pods: ['10.3.0.0/16'], services: ['10.4.0.0/16'] }, registry: DEFAULT_REGISTRY, controlPlaneNodes: [] });
    // The workload cluster's AppRelease controller installs it.
    expect((await tb.env.sim.runUntil(async () => ovnUpgradeDone(await appRelease(tb!), 'v4.1.6'), 10 * 60_000)).ok).toBe(true);
    expect((await kubeOvnCond(tb))?.status).toBe('True');
    expect(tb.env.events.all().filter((e) => e.type === 'hcscluster.kube-ovn-created')).toHaveLength(1);
  });

  it('OVN-2, OVN-3: the annotation alone does not move the chart; the provider reconciles only spec.values and never writes targetRevision', async () => {
    tb = await bootWorkerCluster();
    await tb.env.sim.runUntil(async () => ovnUpgradeDone(await appRelease(tb!), 'v4.1.6'), 10 * 60_000);

    // Step 3.1: annotate the Cluster. The chart stays where it is; the provider says why.
    expect((await kubectl(tb, 'kubectl annotate cluster demo -n cpaas-system cpaas.io/kube-ovn-version=v4.2.4 --overwrite')).code).toBe(0);
    await tb.env.sim.advance(5 * 60_000);
    expect((await appRelease(tb))!.spec.source.charts[0]!.targetRevision).toBe('v4.1.6');
    expect(await kubeOvnCond(tb)).toMatchObject({ status: 'True', reason: 'AnnotationNotApplied', message: expect.stringMatching(/OVN-3/) });
    const evs = await tb.env.mgmt.list<{ reason: string } & Cluster>('Event', { namespace: NS });
    expect(evs.map((e) => e.reason)).toContain('KubeOvnAnnotationNotApplied');

    // Step 3.2: patch the AppRelease on the workload cluster: that drives the upgrade (OVN-4).
    const out = await kubectl(tb, `kubectl patch apprelease cni-kube-ovn -n cpaas-system --type='json' -p='[{"op":"replace","path":"/spec/source/charts/0/targetRevision","value":"v4.2.4"}]'`);
    expect(out.stdout).toMatch(/patched/);
    expect((await tb.env.sim.runUntil(async () => ovnUpgradeDone(await appRelease(tb!), 'v4.2.4'), 10 * 60_000)).ok).toBe(true);

    // A later values change (registry) is applied; the operator's targetRevision stays, even though the annotation now says otherwise.
    await kubectl(tb, 'kubectl annotate cluster demo -n cpaas-system cpaas.io/kube-ovn-version=v4.1.6 cpaas.io/registry-address=registry.example:5000 --overwrite');
    await tb.env.sim.advance(2 * 60_000);
    const ar = (await appRelease(tb))!;
    expect(ar.spec.values?.registry).toBe('registry.example:5000');
    expect(ar.spec.source.charts[0]!.targetRevision).toBe('v4.2.4');
    expect(ar.status?.charts?.[KUBE_OVN_CHART]).toMatchObject({ installedRevision: 'v4.2.4', phase: 'Success' });
    expect(tb.env.events.all().some((e) => e.type === 'hcscluster.kube-ovn-values' && e.rules?.includes('OVN-2'))).toBe(true);
    // The document's check.
    const jp = await kubectl(tb, `kubectl get apprelease cni-kube-ovn -n cpaas-system -o jsonpath='Installed: {.status.charts.*.installedRevision}{"\\n"}Phase: {.status.charts.*.phase}{"\\n"}'`);
    expect(jp.stdout).toBe('Installed: v4.2.4\nPhase: Success\n');
  });

  it('OVN-1: a deleted cni-kube-ovn is re-created from the annotation (the record for rebuilds)', async () => {
    tb = await bootWorkerCluster();
    await kubectl(tb, 'kubectl annotate cluster demo -n cpaas-system cpaas.io/kube-ovn-version=v4.2.4 --overwrite');
    await tb.env.workloads.client(NS, 'demo').delete(REF);
    await tb.env.sim.advance(60_000);
    expect((await appRelease(tb))?.spec.source.charts[0]!.targetRevision).toBe('v4.2.4');
  });
});

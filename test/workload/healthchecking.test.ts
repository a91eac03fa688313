/**
 * OVN-4: HealthChecking really verifies the Kube-OVN pods of the workload cluster (kube-ovn-health.ts):
 * a kube-ovn-cni pod that is not Ready keeps the AppRelease in HealthChecking, naming the pod; once it is
 * Ready again the release reaches Success.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Testbed } from '../../src/harness/testbed/index.js';
import type { AppRelease } from '../../src/product/api/apprelease.js';
import { kubeOvnHealth } from '../../src/world/workload/kube-ovn-health.js';
import { ANN_POD_NOT_READY, podReady, type Pod } from '../../src/world/workload/pods.js';
import { daemonSetPodName } from '../../src/world/workload/system-pods.js';
import { bootWorkerCluster, NS } from './fixture.js';

const CHART = 'acp/chart-cpaas-kube-ovn';

describe('HealthChecking waits for the Kube-OVN pods', () => {
  let tb: Testbed;
  beforeAll(async () => {
    tb = await bootWorkerCluster(31);
    const ok = await tb.sim.runUntil(async () => phase() === 'Success', 10 * 60_000);
    expect(ok.ok).toBe(true);
  });
  afterAll(async () => tb?.close());

  const wl = () => tb.env.workloads.store(NS, 'demo');
  const ar = () => wl().getSync<AppRelease>({ kind: 'AppRelease', namespace: NS, name: 'cni-kube-ovn' });
  const phase = () => ar()?.status?.charts?.[CHART]?.phase;

  it('every Ready Node has Ready kube-ovn-cni and ovs-ovn pods: healthy', async () => {
    const h = await kubeOvnHealth(wl());
    expect(h).toMatchObject({ ready: true, notReady: [] });
    expect(h.summary).toBe('kube-ovn-cni 3/3, ovs-ovn 3/3, ovn-central 0/0, kube-ovn-controller 0/0');
  });

  it('a kube-ovn-cni pod not Ready keeps the upgrade in HealthChecking; Ready again → Success', async () => {
    const podName = daemonSetPodName('kube-ovn-cni', 'demo-worker-2');
    const pod = wl().getSync<Pod>({ kind: 'Pod', namespace: 'kube-system', name: podName })!;
    await wl().update<Pod>({ ...pod, metadata: { ...pod.metadata, annotations: { ...(pod.metadata.annotations ?? {}), [ANN_POD_NOT_READY]: 'crash-loop' } } });
    await tb.sim.advance(1_000);
    expect(podReady(wl().getSync<Pod>({ kind: 'Pod', namespace: 'kube-system', name: podName })!)).toBe(false);

    const cur = ar()!;
    await wl().patch({ kind: 'AppRelease', namespace: NS, name: 'cni-kube-ovn' }, 'json', [{ op: 'replace', path: '/spec/source/charts/0/targetRevision', value: 'v4.2.4' }]);
    expect(cur.status?.charts?.[CHART]?.installedRevision).toBe('v4.1.6');
    // Upgrading 25 s + HealthChecking 30 s would be done; 5 minutes later it still waits for the pod.
    await tb.sim.advance(5 * 60_000);
    expect(phase()).toBe('HealthChecking');
    const st = ar()!.status!.charts![CHART]!;
    expect(st.installedRevision).toBe('v4.2.4');
    expect(st.message).toContain(`kube-system/${podName} (node demo-worker-2)`);
    expect(st.message).toContain('kube-ovn-cni 2/3');
    expect(tb.env.events.all().some((e) => e.type === 'apprelease.pods-not-ready')).toBe(true);

    const bad = wl().getSync<Pod>({ kind: 'Pod', namespace: 'kube-system', name: podName })!;
    const ann = { ...(bad.metadata.annotations ?? {}) };
    delete ann[ANN_POD_NOT_READY];
    await wl().update<Pod>({ ...bad, metadata: { ...bad.metadata, annotations: ann } });
    const ok = await tb.sim.runUntil(async () => phase() === 'Success', 60_000);
    expect(ok.ok).toBe(true);
    expect(ar()!.status!.charts![CHART]!.installedRevision).toBe('v4.2.4');
  });
});

/**
 * Issue #15 must-show, the upgrade document (seeds/004, "在 Huawei Cloud Stack
 * 上升级集群"): `hcs-testbed serve --preset cluster` (the KubeadmControlPlane
 * the control-plane steps need) started as a user starts it, and every kubectl
 * command of the document typed with the real kubectl, in the document's
 * order, as written (taken from the document's text; only the placeholders
 * below are filled in): the control plane's infrastructure image update, the
 * Kubernetes version upgrade with `kubectl edit kubeadmcontrolplane` driven by
 * an EDITOR script, the two-step Kube-OVN chart upgrade on the workload
 * cluster with the jsonpath phase check, the verification, and the rollback.
 * Each step checks kubectl's output and the resulting state: control plane
 * machines replaced one at a time on their hostnames and persistent disks
 * (KCP-1, DISK-3), versions and image tags (KCP-3), AppRelease phases
 * (OVN-4, OVN-6), the rollback's new machines (RB-1, RB-2).
 * Virtual time moves only through serve's time API; every wait is bounded.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveKubectl, KubectlRunner } from '../facade/kubectl.js';
import { editTemplateCopy, SeedDocument, UPGRADE_DOC, WORKER_DOC } from './document.js';
import { items, startServeCli, type ServeProcess } from './served.js';

/**
 * The placeholders of seeds/004 and what this test types for them (`all`
 * everywhere, the other rows per procedure). Versions: the v4.1 → v4.2 rows
 * of data/os-support-matrix.yaml (UPG-4).
 */
const VALUES = {
  all: { '<cluster-name>': 'demo', '<kcp-name>': 'demo-control-plane' },
  'infrastructure image update': { '<current-template-name>': 'demo-cp-template', '<new-template-name>': 'demo-cp-template-v2' },
  'Kubernetes version upgrade': { '<current-cp-template-name>': 'demo-cp-template-v2', '<new-template-name>': 'demo-cp-template-v4.2', '<kube-ovn-version-from-matrix>': 'v4.2.4' },
  rollback: { '<previous-kube-ovn-version>': 'v4.1.6' },
  /** Step 4 of the upgrade order, workers, and their rollback: the worker document's (seeds/000) commands and placeholders. */
  'worker upgrade (seeds/000)': { '<current-template>': 'demo-worker-template', '<new-template>': 'demo-worker-template-v4.2', '<kubernetes-version>': 'v1.32.3' },
  'worker rollback (seeds/000)': { '<new-template>': 'demo-worker-template', '<kubernetes-version>': 'v1.31.6' },
};
/** The values of the edits the document asks for in words. */
const EDITS = {
  infraFlavor: 's6.2xlarge.2',
  /** The v4.2 row: Alauda OS image, Kubernetes, CoreDNS, etcd. */
  v42: { image: 'alauda-os-v4.2-k8s-v1.32.3', version: 'v1.32.3', coredns: 'v1.11.3', etcd: '3.5.16-0' },
  v41: { version: 'v1.31.6', coredns: 'v1.11.3', etcd: '3.5.15-0' },
};

/** What step 1 of the version upgrade lists as server-generated (the image update says "metadata and status"). */
const SERVER_GENERATED = ['metadata.resourceVersion', 'metadata.uid', 'metadata.generation', 'metadata.creationTimestamp', 'metadata.managedFields', 'kubectl.kubernetes.io/last-applied-configuration', 'status'];

const NS = 'cpaas-system';
const M = `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}`;
const I = `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${NS}`;
const KCP = `/apis/controlplane.cluster.x-k8s.io/v1beta1/namespaces/${NS}/kubeadmcontrolplanes/demo-control-plane`;

interface Obj {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: Record<string, unknown> & { version?: string; flavorName?: string; imageName?: string; infrastructureRef?: { name: string } };
  status?: { phase?: string; nodeRef?: { name: string }; entries?: { hostname: string; persistentDisks?: { slot: number; volumeId?: string }[] }[] };
}
interface Kcp {
  spec: { version: string; machineTemplate: { infrastructureRef: { name: string } }; kubeadmConfigSpec: { clusterConfiguration: { dns: { imageTag: string }; etcd: { local: { imageTag: string } } } } };
  status?: { replicas?: number; updatedReplicas?: number; readyReplicas?: number; version?: string };
}

describe.skipIf(!haveKubectl)('OPS-1: seeds/004 typed verbatim with the real kubectl against hcs-testbed serve --preset cluster', () => {
  let s: ServeProcess;
  let k: KubectlRunner;
  /** The workload cluster: the kubeconfig serve printed for it ("run against the workload cluster's API server"). */
  let wenv: Record<string, string>;
  const doc = new SeedDocument(UPGRADE_DOC);
  /** The worker document, whose MachineDeployment commands the upgrade document's worker steps mean. */
  const workerDoc = new SeedDocument(WORKER_DOC);
  const workers = async () => (await items<Obj>(s, `${M}/machines?labelSelector=${encodeURIComponent('cluster.x-k8s.io/deployment-name=demo-md-0')}`)).filter((m) => !m.metadata.deletionTimestamp);
  const workerDisks = async (): Promise<Record<string, string | undefined>> => {
    const pool = (await s.api('GET', `${I}/hcsmachineconfigpools/demo-worker-pool`)).json as unknown as Obj;
    return Object.fromEntries((pool.status?.entries ?? []).map((e) => [e.hostname, e.persistentDisks?.find((d) => d.slot === 0)?.volumeId]));
  };
  /** The workers rolled: 3 Running at `version`, none of `old`. */
  const workersRolled = (old: string[], version: string) => async () => {
    const ms = await workers();
    return ms.length === 3 && ms.every((m) => m.status?.phase === 'Running' && !old.includes(m.metadata.name) && m.spec.version === version);
  };
  const v = <K extends keyof typeof VALUES>(step: K) => ({ ...VALUES.all, ...VALUES[step] }) as typeof VALUES.all & (typeof VALUES)[K];
  const cpMachines = async () => (await items<Obj>(s, `${M}/machines?labelSelector=${encodeURIComponent('cluster.x-k8s.io/control-plane')}`)).filter((m) => !m.metadata.deletionTimestamp);
  const kcp = async () => (await s.api('GET', KCP)).json as unknown as Kcp;
  const cpDisks = async (): Promise<Record<string, string | undefined>> => {
    const pool = (await s.api('GET', `${I}/hcsmachineconfigpools/demo-cp-pool`)).json as unknown as Obj;
    return Object.fromEntries((pool.status?.entries ?? []).map((e) => [e.hostname, e.persistentDisks?.find((d) => d.slot === 0)?.volumeId]));
  };
  /** The control plane rolled: 3 Running machines, none of `old`, KCP status caught up. */
  const rolled = (old: string[], version: string) => async () => {
    const ms = await cpMachines();
    const st = (await kcp()).status;
    return ms.length === 3 && ms.every((m) => m.status?.phase === 'Running' && !old.includes(m.metadata.name) && m.spec.version === version) && st?.updatedReplicas === 3 && st.readyReplicas === 3 && st.replicas === 3;
  };
  let disks: Record<string, string | undefined> = {};
  /** The control plane machines before the version edit. */
  let beforeVersionEdit: string[] = [];

  beforeAll(async () => {
    s = await startServeCli(['--preset', 'cluster']);
    k = new KubectlRunner(s.banner.kubeconfig);
    wenv = { KUBECONFIG: s.banner.workloads.demo!.file };
    disks = await cpDisks();
  }, 90_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('serve --preset cluster brings up the KubeadmControlPlane of 3 and the workers', async () => {
    expect(s.banner.text).toMatch(/brought up: 6\/6 machines Running/);
    expect(Object.keys(disks).sort()).toEqual(['demo-cp-1', 'demo-cp-2', 'demo-cp-3']);
    expect(Object.values(disks).every((d) => typeof d === 'string')).toBe(true);
  });

  it('infrastructure image update: copy the template, apply, the merge patch of the KCP, get -w, get machines -l control-plane (KCP-1, KCP-2, DISK-3)', async () => {
    const vals = v('infrastructure image update');
    const before = (await cpMachines()).map((m) => m.metadata.name);
    await k.clean(doc.next('kubectl get hcsmachinetemplate <current-template-name> -n cpaas-system -o yaml > new-cp-template.yaml', vals));
    // "将 metadata.name 设置为 <new-template-name>; 从复制的 manifest 中移除服务器生成的 metadata 和 status 字段 … 按需更新 flavorName"
    editTemplateCopy(join(k.cwd, 'new-cp-template.yaml'), vals['<new-template-name>'], SERVER_GENERATED, (spec) => (spec.flavorName = EDITS.infraFlavor));
    expect(await k.clean(doc.next('kubectl apply -f new-cp-template.yaml -n cpaas-system', vals))).toBe('hcsmachinetemplate.infrastructure.cluster.x-k8s.io/demo-cp-template-v2 created\n');
    expect(await k.clean(doc.next('kubectl patch kubeadmcontrolplane <kcp-name> -n cpaas-system --type=\'merge\'', vals))).toBe('kubeadmcontrolplane.controlplane.cluster.x-k8s.io/demo-control-plane patched\n');

    const watch = k.spawn(doc.next('kubectl get kubeadmcontrolplane <kcp-name> -n cpaas-system -w', vals));
    await watch.waitFor(/^demo-control-plane\s+demo\s/m);
    let most = 0;
    await s.advanceUntil(async () => {
      most = Math.max(most, (await items<Obj>(s, `${M}/machines?labelSelector=cluster.x-k8s.io%2Fcontrol-plane`)).length);
      return rolled(before, 'v1.31.6')();
    }, 'the control plane rolled to the new template');
    await watch.waitFor(/^demo-control-plane\s+demo\s+true\s+true\s+3\s+3\s+3\s+3\s+0\s+\S+\s+v1\.31\.6$/m);
    watch.child.kill('SIGTERM');
    await watch.exited;
    expect(watch.out().split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+INITIALIZED\s+API SERVER AVAILABLE\s+DESIRED\s+REPLICAS\s+READY\s+UPDATED\s+UNAVAILABLE\s+AGE\s+VERSION$/);
    expect(watch.out()).toMatch(/^demo-control-plane\s+demo\s+true\s+true\s+3\s+\d\s+2\s+0\s+1\s/m); // an old one removed before any new one is up (maxSurge 0) ...
    expect(most).toBeLessThanOrEqual(3); // ... never a fourth control plane machine (KCP-1)

    const cp = await k.clean(doc.next('kubectl get machines -n cpaas-system -l cluster.x-k8s.io/control-plane', vals));
    for (const h of ['demo-cp-1', 'demo-cp-2', 'demo-cp-3']) expect(cp).toMatch(new RegExp(`^demo-control-plane-\\S+\\s+demo\\s+${h}\\s+\\S+\\s+Running\\s+\\S+\\s+v1\\.31\\.6$`, 'm'));
    for (const n of before) expect(cp).not.toContain(n);
    expect(await cpDisks()).toEqual(disks); // same hostnames, same persistent disks
    const hms = (await items<Obj>(s, `${I}/hcsmachines`)).filter((h) => h.metadata.name.startsWith('demo-control-plane-'));
    expect(hms.map((h) => h.spec.flavorName)).toEqual([EDITS.infraFlavor, EDITS.infraFlavor, EDITS.infraFlavor]);
  });

  it('Kubernetes version upgrade: the v4.2 template, then kubectl edit kubeadmcontrolplane with an EDITOR script: version, dns and etcd tags, template in one edit (KCP-3, UPG-4)', async () => {
    const vals = v('Kubernetes version upgrade');
    await k.clean(doc.next('kubectl get hcsmachinetemplate <current-cp-template-name> -n cpaas-system -o yaml > new-cp-template.yaml', vals));
    const copied = readFileSync(join(k.cwd, 'new-cp-template.yaml'), 'utf8');
    expect(copied).toContain('kubectl.kubernetes.io/last-applied-configuration'); // what the document says to delete is there
    editTemplateCopy(join(k.cwd, 'new-cp-template.yaml'), vals['<new-template-name>'], SERVER_GENERATED, (spec) => (spec.imageName = EDITS.v42.image));
    expect(await k.clean(doc.next('kubectl apply -f new-cp-template.yaml -n cpaas-system', vals))).toBe('hcsmachinetemplate.infrastructure.cluster.x-k8s.io/demo-cp-template-v4.2 created\n');

    // The editor kubectl starts: a sed script over the file it is given (the four fields of the v4.2 row).
    const editor = join(k.home, 'edit-kcp.sh');
    writeFileSync(
      editor,
      [
        '#!/bin/sh',
        'exec sed -i \\',
        `  -e '/^spec:$/,/^status:$/s/^  version: ${EDITS.v41.version}$/  version: ${EDITS.v42.version}/' \\`,
        `  -e '/^      dns:$/,/imageTag:/s/imageTag: .*/imageTag: ${EDITS.v42.coredns}/' \\`,
        `  -e '/^        local:$/,/imageTag:/s/imageTag: .*/imageTag: ${EDITS.v42.etcd}/' \\`,
        `  -e 's/^      name: demo-cp-template-v2$/      name: demo-cp-template-v4.2/' \\`,
        '  "$1"',
        '',
      ].join('\n'),
    );
    chmodSync(editor, 0o755);
    beforeVersionEdit = (await cpMachines()).map((m) => m.metadata.name);
    const edited = await k.clean(doc.next('kubectl edit kubeadmcontrolplane <kcp-name> -n cpaas-system', vals), { EDITOR: editor, KUBE_EDITOR: editor });
    expect(edited).toBe('kubeadmcontrolplane.controlplane.cluster.x-k8s.io/demo-control-plane edited\n');
    const spec = (await kcp()).spec;
    expect(spec.version).toBe(EDITS.v42.version);
    expect(spec.kubeadmConfigSpec.clusterConfiguration.dns.imageTag).toBe(EDITS.v42.coredns);
    expect(spec.kubeadmConfigSpec.clusterConfiguration.etcd.local.imageTag).toBe(EDITS.v42.etcd);
    expect(spec.machineTemplate.infrastructureRef.name).toBe('demo-cp-template-v4.2');
  });

  it('Kube-OVN: annotate the Cluster, patch the AppRelease on the workload cluster, watch the phases with the jsonpath check (OVN-3, OVN-4, OVN-6)', async () => {
    const vals = v('Kubernetes version upgrade');
    expect(await k.clean(doc.next('kubectl annotate cluster <cluster-name> -n cpaas-system \\', vals))).toBe('cluster.cluster.x-k8s.io/demo annotated\n');
    expect(await k.clean(doc.next('kubectl patch apprelease cni-kube-ovn -n cpaas-system --type=\'json\' \\', vals), wenv)).toBe('apprelease.app.alauda.io/cni-kube-ovn patched\n');
    const get = doc.next('kubectl get apprelease cni-kube-ovn -n cpaas-system', vals);
    expect((await k.clean(get, wenv)).split('\n')[0]).toMatch(/^NAME\s+SYNC\s+HEALTH\s+AGE$/);
    const jsonpath = doc.next('kubectl get apprelease cni-kube-ovn -n cpaas-system \\', vals);
    const seen: string[] = [];
    await s.advanceUntil(async () => {
      const out = await k.clean(jsonpath, wenv);
      if (seen[seen.length - 1] !== out) seen.push(out);
      return out.endsWith('Phase: Success\n') && out.startsWith('Installed: v4.2.4\n');
    }, 'the chart upgraded', { step: '5s', maxVirtualMs: 30 * 60_000 });
    // Upgrading (old revision) → HealthChecking (installedRevision already the target, pods not yet checked: OVN-6) → Success.
    expect(seen).toEqual(['Installed: v4.1.6\nPhase: Success\n', 'Installed: v4.1.6\nPhase: Upgrading\n', 'Installed: v4.2.4\nPhase: HealthChecking\n', 'Installed: v4.2.4\nPhase: Success\n']);
    expect(await k.clean(get, wenv)).toMatch(/^cni-kube-ovn\s+Synced\s+Healthy\s/m);
    const described = await k.clean(doc.inline('kubectl describe apprelease cni-kube-ovn -n cpaas-system', vals), wenv);
    expect(described).toMatch(/Type:\s+Health/);
    // On the management context (not the workload cluster) the AppRelease is not there, as the document warns.
    expect(await k.fails(get)).toMatch(/the server doesn't have a resource type "apprelease"|not found/);
  });

  it('verification: get kubeadmcontrolplane, get machines -l control-plane, kubectl get nodes on the workload cluster: the control plane on v1.32.3 (KCP-3, KCP-4)', async () => {
    const vals = v('all');
    await s.advanceUntil(rolled(beforeVersionEdit, EDITS.v42.version), 'the control plane at v1.32.3');
    const got = await k.clean(doc.next('kubectl get kubeadmcontrolplane <kcp-name> -n cpaas-system', vals));
    expect(got).toMatch(/^demo-control-plane\s+demo\s+true\s+true\s+3\s+3\s+3\s+3\s+0\s+\S+\s+v1\.32\.3$/m);
    const cp = await k.clean(doc.next('kubectl get machines -n cpaas-system -l cluster.x-k8s.io/control-plane', vals));
    expect(cp.match(/^demo-control-plane-\S+\s+demo\s+demo-cp-\d\s+\S+\s+Running\s+\S+\s+v1\.32\.3$/gm)).toHaveLength(3);
    const nodes = await k.clean(doc.next('kubectl get nodes', vals), wenv);
    for (const h of ['demo-cp-1', 'demo-cp-2', 'demo-cp-3']) expect(nodes).toMatch(new RegExp(`^${h}\\s+Ready\\s+control-plane\\s+\\S+\\s+v1\\.32\\.3$`, 'm'));
    for (const h of ['demo-worker-1', 'demo-worker-2', 'demo-worker-3']) expect(nodes).toMatch(new RegExp(`^${h}\\s+Ready\\s+<none>\\s+\\S+\\s+v1\\.31\\.6$`, 'm'));
    expect(await k.clean(s.banner.workloads.demo!.getNodes)).toBe(nodes); // the context serve printed: the same cluster
    expect(await cpDisks()).toEqual(disks);
    const hms = (await items<Obj>(s, `${I}/hcsmachines`)).filter((h) => h.metadata.name.startsWith('demo-control-plane-'));
    expect(hms.map((h) => h.spec.imageName)).toEqual([EDITS.v42.image, EDITS.v42.image, EDITS.v42.image]);
  });

  it('workers to the target version (upgrade order step 4, the worker document\'s procedure): template copy, the merge patch of version and template (UPG-1, MD-5, DISK-3)', async () => {
    const vals = v('worker upgrade (seeds/000)');
    const before = (await workers()).map((m) => m.metadata.name);
    const disksBefore = await workerDisks();
    await k.clean(workerDoc.lookup('-o yaml > new-template.yaml', vals));
    editTemplateCopy(join(k.cwd, 'new-template.yaml'), vals['<new-template>'], SERVER_GENERATED, (spec) => (spec.imageName = EDITS.v42.image));
    expect(await k.clean(workerDoc.lookup('kubectl apply -f new-template.yaml', vals))).toBe('hcsmachinetemplate.infrastructure.cluster.x-k8s.io/demo-worker-template-v4.2 created\n');
    expect(await k.clean(workerDoc.lookup('"version":"<kubernetes-version>"', vals))).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 patched\n');
    await s.advanceUntil(workersRolled(before, EDITS.v42.version), 'every worker at v1.32.3');
    const nodes = await k.clean(s.banner.workloads.demo!.getNodes);
    expect(nodes.match(/^demo-worker-\d\s+Ready\s+<none>\s+\S+\s+v1\.32\.3$/gm)).toHaveLength(3);
    expect(nodes.match(/^demo-cp-\d\s+Ready\s+control-plane\s+\S+\s+v1\.32\.3$/gm)).toHaveLength(3);
    expect(await workerDisks()).toEqual(disksBefore);
  });

  it('rollback: the KCP patched back to its previous four fields, the workers with the merge patch, Kube-OVN back with the same two steps and the same check (RB-1, RB-2, RB-4, RB-5)', async () => {
    const vals = v('rollback');
    const upgraded = (await cpMachines()).map((m) => m.metadata.name);
    // "补丁 KubeadmControlPlane，恢复之前的 …": the document gives no command line; this is its merge patch of the four fields.
    const restore = {
      spec: {
        version: EDITS.v41.version,
        machineTemplate: { infrastructureRef: { name: 'demo-cp-template-v2' } },
        kubeadmConfigSpec: { clusterConfiguration: { dns: { imageTag: EDITS.v41.coredns }, etcd: { local: { imageTag: EDITS.v41.etcd } } } },
      },
    };
    expect(await k.clean(`kubectl patch kubeadmcontrolplane demo-control-plane -n cpaas-system --type='merge' -p='${JSON.stringify(restore)}'`)).toContain('patched');
    // "工作节点：补丁每个 MachineDeployment，恢复之前的 infrastructureRef.name 和 version": the worker document's merge patch, previous values.
    const upgradedWorkers = (await workers()).map((m) => m.metadata.name);
    const workerDisksBefore = await workerDisks();
    expect(await k.clean(workerDoc.lookup('"version":"<kubernetes-version>"', v('worker rollback (seeds/000)')))).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 patched\n');

    expect(await k.clean(doc.next('kubectl annotate cluster <cluster-name> -n cpaas-system \\', vals))).toBe('cluster.cluster.x-k8s.io/demo annotated\n');
    expect(await k.clean(doc.next('kubectl patch apprelease cni-kube-ovn -n cpaas-system --type=\'json\' \\', vals), wenv)).toBe('apprelease.app.alauda.io/cni-kube-ovn patched\n');
    const jsonpath = doc.again('kubectl get apprelease cni-kube-ovn -n cpaas-system \\', vals);
    await s.advanceUntil(async () => (await k.clean(jsonpath, wenv)) === 'Installed: v4.1.6\nPhase: Success\n', 'the chart rolled back', { step: '10s', maxVirtualMs: 30 * 60_000 });

    await s.advanceUntil(rolled(upgraded, EDITS.v41.version), 'the control plane rolled back to v1.31.6');
    const k2 = await kcp();
    expect(k2.status?.version).toBe(EDITS.v41.version);
    const cp = await cpMachines();
    expect(cp.every((m) => !upgraded.includes(m.metadata.name))).toBe(true); // new machines from the old template (RB-2)
    const hms = (await items<Obj>(s, `${I}/hcsmachines`)).filter((h) => h.metadata.name.startsWith('demo-control-plane-'));
    expect(hms.map((h) => h.spec.imageName)).toEqual(['alauda-os-v4.1-k8s-v1.31.6', 'alauda-os-v4.1-k8s-v1.31.6', 'alauda-os-v4.1-k8s-v1.31.6']);
    expect(await cpDisks()).toEqual(disks); // node-local state stayed on the pool's disks (RB-4)
    await s.advanceUntil(workersRolled(upgradedWorkers, EDITS.v41.version), 'the workers rolled back to v1.31.6');
    const workerHms = (await items<Obj>(s, `${I}/hcsmachines`)).filter((h) => h.metadata.name.startsWith('demo-md-0-'));
    expect(workerHms.map((h) => h.spec.imageName)).toEqual(['alauda-os-v4.1-k8s-v1.31.6', 'alauda-os-v4.1-k8s-v1.31.6', 'alauda-os-v4.1-k8s-v1.31.6']);
    expect(await workerDisks()).toEqual(workerDisksBefore);
    const nodes = await k.clean(s.banner.workloads.demo!.getNodes);
    expect(nodes.match(/^demo-cp-\d\s+Ready\s+control-plane\s+\S+\s+v1\.31\.6$/gm)).toHaveLength(3);
    expect(nodes.match(/^demo-worker-\d\s+Ready\s+<none>\s+\S+\s+v1\.31\.6$/gm)).toHaveLength(3);
  });

  it('every command of the document was typed', () => {
    expect(doc.untyped()).toEqual([]);
  });
});

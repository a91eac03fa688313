import { describe, expect, it } from 'vitest';
import { CAPI_VERSION, CONTROLPLANE_VERSION, type Cluster, type KubeadmControlPlane, type MachineDeployment } from '../../src/product/api/capi.js';
import { INFRA_VERSION, type HCSCluster, type HCSMachineTemplate } from '../../src/product/api/hcs.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { COND_VERSIONS, HCSClusterWorkloadController } from '../../src/product/provider/index.js';
import { createEmbeddedEnv, type EmbeddedEnv } from '../../src/world/embedded.js';
import { checkControlPlaneSpec, checkDeployedControlPlane, checkWorkerVersions, defaultOsSupportMatrix, parseOsSupportMatrix, workerImagesFor } from '../../src/world/workload/index.js';

const NS = 'cpaas-system';
const matrix = defaultOsSupportMatrix();

function template(name: string, imageName: string): HCSMachineTemplate {
  return {
    apiVersion: INFRA_VERSION,
    kind: 'HCSMachineTemplate',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { imageName, flavorName: 's6.large.2', availabilityZone: 'az1', configPoolRef: { name: 'cp-pool' } } } },
  };
}

function kcp(version: string, dns: string, etcd: string, tpl: string): KubeadmControlPlane {
  return {
    apiVersion: CONTROLPLANE_VERSION,
    kind: 'KubeadmControlPlane',
    metadata: { name: 'demo-cp', namespace: NS },
    spec: {
      replicas: 3,
      version,
      machineTemplate: { infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachineTemplate', name: tpl } },
      kubeadmConfigSpec: { clusterConfiguration: { dns: { imageTag: dns }, etcd: { local: { imageTag: etcd } } } },
      rolloutStrategy: { rollingUpdate: { maxSurge: 0 } },
    },
  };
}

function md(version: string, tpl: string): MachineDeployment {
  return {
    apiVersion: CAPI_VERSION,
    kind: 'MachineDeployment',
    metadata: { name: 'demo-md-0', namespace: NS },
    spec: {
      clusterName: 'demo',
      replicas: 3,
      template: { spec: { clusterName: 'demo', version, bootstrap: { configRef: { name: 'kct' } }, infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachineTemplate', name: tpl } } },
    },
  };
}

describe('version checks against the OS Support Matrix', () => {
  it('KCP-3: one edit from one matrix row passes; only spec.version updated leaves etcd (and the template image) on the old row', () => {
    expect(checkControlPlaneSpec(kcp('v1.32.3', 'v1.11.3', '3.5.16-0', 'cp-132'), template('cp-132', 'alauda-os-v4.2-k8s-v1.32.3'), matrix)).toEqual([]);
    const problems = checkControlPlaneSpec(kcp('v1.32.3', 'v1.11.3', '3.5.15-0', 'cp-131'), template('cp-131', 'alauda-os-v4.1-k8s-v1.31.6'), matrix);
    expect(problems.map((p) => [p.rule, p.field])).toEqual([
      ['KCP-3', 'spec.kubeadmConfigSpec.clusterConfiguration.etcd.local.imageTag'],
      ['KCP-3', 'spec.machineTemplate.infrastructureRef.name'],
    ]);
    expect(problems[0]!.message).toMatch(/etcd image tag 3\.5\.15-0 \(row of v1\.30\.10\) does not match spec\.version v1\.32\.3, which needs 3\.5\.16-0/);
    expect(problems[1]!.message).toMatch(/needs image alauda-os-v4\.2-k8s-v1\.32\.3/);
  });

  it('KCP-3: a CoreDNS tag from another row is reported (matrix whose rows differ in CoreDNS)', () => {
    const m = parseOsSupportMatrix(`rows:
  - {acpVersion: v3.18, alaudaOSImage: alauda-os-v3.18-k8s-v1.28.15, kubernetesVersion: v1.28.15, coredns: v1.10.1, etcd: 3.5.15-0, kubeOvn: v3.18.2}
  - {acpVersion: v4.0, alaudaOSImage: alauda-os-v4.0-k8s-v1.30.10, kubernetesVersion: v1.30.10, coredns: v1.11.3, etcd: 3.5.15-0, kubeOvn: v4.0.9}
`);
    const p = checkControlPlaneSpec(kcp('v1.30.10', 'v1.10.1', '3.5.15-0', 'x'), undefined, m);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ rule: 'KCP-3', field: 'spec.kubeadmConfigSpec.clusterConfiguration.dns.imageTag', message: expect.stringMatching(/CoreDNS image tag v1\.10\.1 \(row of v1\.28\.15\) .* needs v1\.11\.3/) });
  });

  it('UPG-4: a version or image outside the matrix is reported', () => {
    expect(checkControlPlaneSpec(kcp('v1.33.0', 'v1.12.0', '3.5.21-0', 'x'), undefined, matrix)[0]).toMatchObject({ rule: 'UPG-4', field: 'spec.version' });
    expect(checkWorkerVersions(md('v1.31.6', 't'), template('t', 'ubuntu-22.04'), matrix)[0]).toMatchObject({ rule: 'UPG-4', message: expect.stringMatching(/use alauda-os-v4\.1-k8s-v1\.31\.6/) });
  });

  it('KCP-3: what the control plane actually runs (kube-system/testbed-control-plane) is checked per etcd member', () => {
    expect(checkDeployedControlPlane('demo-cp', { kubernetesVersion: 'v1.32.3', dnsImageTag: 'v1.11.3', etcdMembers: [{ name: 'cp-a', imageTag: '3.5.16-0', version: 'v1.32.3' }] }, matrix)).toEqual([]);
    const p = checkDeployedControlPlane('demo-cp', { kubernetesVersion: 'v1.32.3', dnsImageTag: 'v1.11.3', etcdMembers: [{ name: 'cp-a', imageTag: '3.5.15-0', version: 'v1.32.3' }, { name: 'cp-b', imageTag: '3.5.15-0', version: 'v1.31.6' }] }, matrix);
    expect(p.map((x) => x.field)).toEqual(['etcd member cp-a']);
  });

  it('KCP-4: a MachineDeployment has no dns/etcd tags; its workers take container images from the VM template image row', () => {
    const m = md('v1.32.3', 'w');
    expect(JSON.stringify(m.spec)).not.toMatch(/imageTag|dns|etcd/);
    expect(checkWorkerVersions(m, template('w', 'alauda-os-v4.2-k8s-v1.32.3'), matrix)).toEqual([]);
    const p = checkWorkerVersions(m, template('w', 'alauda-os-v4.1-k8s-v1.31.6'), matrix);
    expect(p[0]).toMatchObject({ rule: 'KCP-4', message: expect.stringMatching(/inherit their container images from the VM template.*use image alauda-os-v4\.2-k8s-v1\.32\.3/) });
    expect(workerImagesFor('alauda-os-v4.2-k8s-v1.32.3', matrix)).toEqual({ kubernetesVersion: 'v1.32.3', images: ['kube-proxy:v1.32.3'] });
  });
});

describe('provider reports version mismatches (condition + event)', () => {
  async function env(): Promise<{ env: EmbeddedEnv; ctl: HCSClusterWorkloadController; cond: () => Promise<{ status: string; reason?: string; message?: string } | undefined> }> {
    const e = createEmbeddedEnv({ seed: 5 });
    await e.mgmt.create<HCSCluster>({ apiVersion: INFRA_VERSION, kind: 'HCSCluster', metadata: { name: 'demo', namespace: NS }, spec: {} });
    await e.mgmt.create<Cluster>({
      apiVersion: CAPI_VERSION,
      kind: 'Cluster',
      metadata: { name: 'demo', namespace: NS },
      spec: { infrastructureRef: { kind: 'HCSCluster', name: 'demo' }, controlPlaneRef: { kind: 'KubeadmControlPlane', name: 'demo-cp' } },
    });
    await e.mgmt.create(template('cp-131', 'alauda-os-v4.1-k8s-v1.31.6'));
    await e.mgmt.create(template('cp-132', 'alauda-os-v4.2-k8s-v1.32.3'));
    await e.mgmt.create(kcp('v1.31.6', 'v1.11.3', '3.5.15-0', 'cp-131'));
    const ctl = new HCSClusterWorkloadController(e.ctx, matrix);
    return {
      env: e,
      ctl,
      cond: async () => (await e.mgmt.get<HCSCluster>({ kind: 'HCSCluster', namespace: NS, name: 'demo' }))?.status?.conditions?.find((c) => c.type === COND_VERSIONS),
    };
  }

  it('KCP-3: updating only spec.version sets VersionsConsistent=False and a Warning event on the KubeadmControlPlane; the full edit clears it', async () => {
    const { env: e, ctl, cond } = await env();
    await ctl.reconcile(`${NS}/demo`);
    expect(await cond()).toMatchObject({ status: 'True' });
    await e.mgmt.patch({ kind: 'KubeadmControlPlane', namespace: NS, name: 'demo-cp' }, 'merge', { spec: { version: 'v1.32.3' } });
    await ctl.reconcile(`${NS}/demo`);
    expect(await cond()).toMatchObject({ status: 'False', reason: 'VersionMismatch', message: expect.stringMatching(/KCP-3: KubeadmControlPlane cpaas-system\/demo-cp: spec\.kubeadmConfigSpec\.clusterConfiguration\.etcd\.local\.imageTag/) });
    const events = (await e.mgmt.list<KubeObject & { reason: string; type: string; involvedObject: { kind: string } }>('Event', { namespace: NS })).filter((x) => x.reason === 'VersionMismatch');
    expect(events.map((x) => x.involvedObject.kind)).toEqual(['KubeadmControlPlane', 'KubeadmControlPlane']);
    expect(e.events.all().find((x) => x.type === 'hcscluster.version-mismatch')?.rules).toEqual(['KCP-3']);
    // Reconciling again does not repeat the events.
    await ctl.reconcile(`${NS}/demo`);
    expect((await e.mgmt.list<KubeObject & { reason: string }>('Event', { namespace: NS })).filter((x) => x.reason === 'VersionMismatch')).toHaveLength(2);
    // The documented single edit: version, dns, etcd and the template from one row.
    await e.mgmt.patch({ kind: 'KubeadmControlPlane', namespace: NS, name: 'demo-cp' }, 'merge', {
      spec: { machineTemplate: { infrastructureRef: { name: 'cp-132' } }, kubeadmConfigSpec: { clusterConfiguration: { dns: { imageTag: 'v1.11.3' }, etcd: { local: { imageTag: '3.5.16-0' } } } } },
    });
    await ctl.reconcile(`${NS}/demo`);
    expect(await cond()).toMatchObject({ status: 'True', reason: 'MatchesOSSupportMatrix' });
  });

  it('KCP-3: a deployed etcd member on the wrong tag (workload ConfigMap) is reported', async () => {
    const { env: e, ctl, cond } = await env();
    await e.workloads.client(NS, 'demo').create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'testbed-control-plane', namespace: 'kube-system' },
      data: { controlPlaneName: 'demo-cp', kubernetesVersion: 'v1.31.6', dnsImageTag: 'v1.11.3', etcdMembers: JSON.stringify([{ name: 'cp-a', node: 'cp-a', imageTag: '3.5.16-0', version: 'v1.31.6' }]) },
    } as KubeObject);
    await ctl.reconcile(`${NS}/demo`);
    expect(await cond()).toMatchObject({ status: 'False', message: expect.stringMatching(/etcd member cp-a runs 3\.5\.16-0 on a v1\.31\.6 control plane machine, which needs 3\.5\.15-0/) });
  });

  it('KCP-4: a MachineDeployment whose template image carries another Kubernetes version is reported on the MachineDeployment', async () => {
    const { env: e, ctl, cond } = await env();
    await e.mgmt.create(template('w-131', 'alauda-os-v4.1-k8s-v1.31.6'));
    await e.mgmt.create(md('v1.32.3', 'w-131'));
    await ctl.reconcile(`${NS}/demo`);
    expect(await cond()).toMatchObject({ status: 'False', message: expect.stringMatching(/KCP-4: MachineDeployment cpaas-system\/demo-md-0/) });
    const events = (await e.mgmt.list<KubeObject & { reason: string; involvedObject: { kind: string } }>('Event', { namespace: NS })).filter((x) => x.reason === 'VersionMismatch');
    expect(events.map((x) => x.involvedObject.kind)).toEqual(['MachineDeployment']);
  });
});

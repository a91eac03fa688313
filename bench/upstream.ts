/**
 * `npm run bench -- upstream`: a MachineDeployment of N workers (default 50)
 * with pool-managed persistent disks rolled to a new HCSMachineTemplate with
 * maxSurge 0 / maxUnavailable 1 — one replacement at a time, each re-using
 * the pool entry and persistent disk of the Machine it replaces — on the
 * upstream Cluster API v1.10.10 managers (`run --capi upstream`: real
 * kube-apiserver, the testbed's cloud, provider and guests on paced time),
 * and the same rollout on the model (embedded, virtual time). Prints
 * seconds of wall time per replacement on both, and the virtual time the
 * testbed's parts took.
 *
 * The managers' webhook servers bind every interface, so the upstream part
 * runs only in a network namespace with only lo:
 *   unshare -n sh -c 'ip link set lo up && exec npm run bench -- upstream'
 * Elsewhere, or without the binaries (tools/kube/build.sh, tools/capi/build.sh),
 * it prints why and measures the model only. BENCH_UPSTREAM_N (default 50),
 * BENCH_UPSTREAM_SPEED (virtual seconds per wall second, default 50).
 */
import type { MachineDeployment } from '../src/product/api/capi.js';
import type { KubeClient } from '../src/core/kube/client.js';
import type { KubeObject } from '../src/core/kube/types.js';
import { applyObject } from '../src/harness/manifests/index.js';
import type { TestbedHandle } from '../src/harness/scenario/runner.js';
import { openBackend } from '../src/harness/realcluster/backends.js';
import { createTestbed } from '../src/harness/testbed/index.js';
import { upstreamProblem } from '../src/harness/realcluster/upstream/upstream.js';
import type { BenchResult } from './scale.js';

const NS = 'cpaas-system';
const MD = { kind: 'MachineDeployment', namespace: NS, name: 'bench-md-0' };

/** The rollout's objects: N pool entries on the default cloud's worker-subnet (192.168.10.0/24), each with a persistent disk. */
export function upstreamBenchManifests(n: number): KubeObject[] {
  if (n > 200) throw new Error(`at most 200 workers fit the worker subnet (got ${n})`);
  const configs = Array.from({ length: n }, (_, i) => ({
    hostname: `bench-w-${String(i + 1).padStart(3, '0')}`,
    networks: [{ subnetName: 'worker-subnet', ipAddress: `192.168.10.${20 + i}` }],
    persistentDisks: [{ slot: 0, size: 100, type: 'SSD', mountPath: '/var/cpaas', format: 'xfs' }],
  }));
  const template = (name: string, flavorName: string): KubeObject => ({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'HCSMachineTemplate',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { imageName: 'alauda-os-v4.1-k8s-v1.31.6', flavorName, availabilityZone: 'az1', rootVolume: { type: 'SSD', size: 100 }, configPoolRef: { name: 'bench-worker-pool' } } } },
  });
  return [
    { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name: 'bench', namespace: NS }, spec: { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSCluster', name: 'bench' } } },
    { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSCluster', metadata: { name: 'bench', namespace: NS }, spec: { controlPlaneEndpoint: { host: '192.168.1.10', port: 6443 }, network: { subnets: [{ name: 'cp-subnet' }, { name: 'worker-subnet' }] } } },
    { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachineConfigPool', metadata: { name: 'bench-worker-pool', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'bench' } }, spec: { configs } },
    template('bench-worker-v1', 's6.large.2'),
    template('bench-worker-v2', 's6.xlarge.2'),
    {
      apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
      kind: 'KubeadmConfigTemplate',
      metadata: { name: 'bench-worker-kct', namespace: NS },
      spec: {
        template: {
          spec: {
            files: [{ path: '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json', owner: 'root:root', permissions: '0644', content: JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', tlsCertFile: '/etc/kubernetes/pki/kubelet.crt', tlsPrivateKeyFile: '/etc/kubernetes/pki/kubelet.key', clientCAFile: '/etc/kubernetes/pki/ca.crt' }) }],
            joinConfiguration: { patches: { directory: '/etc/kubernetes/patches' }, nodeRegistration: { kubeletExtraArgs: {} } },
          },
        },
      },
    },
    {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'MachineDeployment',
      metadata: { name: 'bench-md-0', namespace: NS },
      spec: {
        clusterName: 'bench',
        replicas: n,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
        template: {
          spec: {
            clusterName: 'bench',
            version: 'v1.31.6',
            bootstrap: { configRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfigTemplate', name: 'bench-worker-kct' } },
            infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachineTemplate', name: 'bench-worker-v1' },
          },
        },
      },
    },
  ];
}

interface Rollout {
  provisionS: number;
  rolloutS: number;
  rolloutVirtualS: number;
}

/** Provision N workers, then roll them to the v2 template; wall and virtual times. */
async function rollout(tb: TestbedHandle, mgmt: KubeClient, n: number): Promise<Rollout> {
  const settled = async (): Promise<boolean> => {
    const m = await mgmt.get<MachineDeployment>(MD);
    const s = m?.status;
    return !!m && s?.replicas === n && s.updatedReplicas === n && s.readyReplicas === n && s.availableReplicas === n && (s.observedGeneration ?? 0) >= (m.metadata.generation ?? 0);
  };
  const status = async (): Promise<string> => JSON.stringify((await mgmt.get<MachineDeployment>(MD))?.status ?? {});
  const t0 = performance.now();
  for (const o of upstreamBenchManifests(n)) await applyObject(mgmt, o);
  const up = await tb.sim.runUntil(settled, n * 10 * 60_000);
  const t1 = performance.now();
  if (!up.ok) throw new Error(`provisioning ${n} workers did not settle: ${await status()}`);
  const v0 = tb.clock.now();
  await mgmt.patch(MD, 'merge', { spec: { template: { spec: { infrastructureRef: { name: 'bench-worker-v2' } } } } });
  const rolled = await tb.sim.runUntil(settled, n * 10 * 60_000);
  const t2 = performance.now();
  if (!rolled.ok) throw new Error(`the rollout of ${n} workers did not finish: ${await status()}`);
  return { provisionS: (t1 - t0) / 1000, rolloutS: (t2 - t1) / 1000, rolloutVirtualS: (tb.clock.now() - v0) / 1000 };
}

export async function benchUpstream(): Promise<BenchResult[]> {
  const n = Number(process.env.BENCH_UPSTREAM_N ?? 50);
  const speed = Number(process.env.BENCH_UPSTREAM_SPEED ?? 50);
  const out: BenchResult[] = [];
  const model = await createTestbed({ seed: 1 });
  try {
    const r = await rollout(model, model.env.mgmt, n);
    out.push({ name: `upstream: model, roll ${n} workers with persistent disks (maxSurge 0, maxUnavailable 1)`, value: r.rolloutS / n, unit: 's wall per replacement', note: `${r.rolloutS.toFixed(2)} s wall, ${(r.rolloutVirtualS / n).toFixed(0)} s virtual per replacement` });
  } finally {
    await model.close();
  }
  const problem = upstreamProblem();
  if (problem) {
    out.push({ name: `upstream: upstream v1.10.10 managers, the same rollout`, value: 0, unit: 'skipped', note: problem });
    return out;
  }
  const backend = await openBackend({ backend: 'apiserver', capi: 'upstream', speed });
  try {
    const tb = (await backend.factory(1)) as TestbedHandle;
    try {
      const r = await rollout(tb, tb.world.mgmt, n);
      out.push({ name: `upstream: upstream v1.10.10 managers, roll ${n} workers with persistent disks (maxSurge 0, maxUnavailable 1)`, value: r.rolloutS / n, unit: 's wall per replacement', note: `${r.rolloutS.toFixed(0)} s wall, testbed at ${speed}x: ${(r.rolloutVirtualS / n).toFixed(0)} s virtual per replacement; provisioning ${r.provisionS.toFixed(0)} s` });
    } finally {
      await tb.close();
    }
  } finally {
    await backend.close();
  }
  return out;
}

/**
 * Test fixtures for the CAPI controllers in isolation: a tiny fake
 * infrastructure provider (honouring the HCS provider contract) and the
 * documented worker manifests (seeds/000: KubeadmConfigTemplate, MachineDeployment).
 */
import { FINALIZER_HCSMACHINE, INFRA_VERSION } from '../../src/product/api/hcs.js';
import type { HCSCluster, HCSMachine, HCSMachineTemplate } from '../../src/product/api/hcs.js';
import { BOOTSTRAP_VERSION, CAPI_VERSION, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE } from '../../src/product/api/capi.js';
import { CONTROLPLANE_VERSION } from '../../src/product/api/capi.js';
import type { Cluster, KubeadmConfigTemplate, KubeadmControlPlane, Machine, MachineDeployment } from '../../src/product/api/capi.js';
import type { Node } from '../../src/product/api/core.js';
import { rfc3339 } from '../../src/core/clock.js';
import { isDeleting } from '../../src/core/kube/types.js';
import type { Controller, Result } from '../../src/core/runtime/manager.js';
import type { ControllerContext } from '../../src/core/runtime/context.js';
import { createEmbeddedEnv, type EmbeddedEnv } from '../../src/world/embedded.js';
import { setupCapiControllers } from '../../src/world/capi/index.js';

export const NS = 'cpaas-system';
export const CLUSTER = 'demo';

export interface FakeInfraOptions {
  /** Virtual ms from "bootstrap data available" to "server ACTIVE + Node Ready". */
  provisionMs: number;
  /** Virtual ms the server takes to delete. */
  deleteMs: number;
  /** Virtual ms from "server ACTIVE" to the Node registering (kubelet join). */
  joinMs?: number;
  /** Volumes reported attached to each new Node. */
  volumes?: boolean;
}

/** Fake HCSMachine controller: providerID hcs://<cluster>/<machine>, Node in the workload store, finalizer removed after the server is gone. */
export class FakeInfra implements Controller {
  readonly name = 'fake-infra';
  private readonly waitingSince = new Map<string, number>();
  private readonly activeAt = new Map<string, number>();
  private seq = 0;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: FakeInfraOptions,
  ) {}

  async reconcile(key: string): Promise<Result | void> {
    const [namespace, name] = key.split('/') as [string, string];
    const hm = await this.ctx.mgmt.get<HCSMachine>({ kind: 'HCSMachine', namespace, name });
    if (!hm) return;
    const now = this.ctx.clock.now();
    if (isDeleting(hm)) {
      const since = Date.parse(hm.metadata.deletionTimestamp!);
      if (now - since < this.opts.deleteMs) return { requeueAfter: this.opts.deleteMs - (now - since) };
      hm.metadata.finalizers = (hm.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_HCSMACHINE);
      await this.ctx.mgmt.update(hm);
      return;
    }
    if (!hm.metadata.finalizers?.includes(FINALIZER_HCSMACHINE)) {
      hm.metadata.finalizers = [...(hm.metadata.finalizers ?? []), FINALIZER_HCSMACHINE];
      await this.ctx.mgmt.update(hm);
      return;
    }
    const owner = hm.metadata.ownerReferences?.find((r) => r.kind === 'Machine');
    if (!owner) return;
    const machine = await this.ctx.mgmt.get<Machine>({ kind: 'Machine', namespace, name: owner.name });
    if (!machine?.spec.bootstrap.dataSecretName) return;
    if (hm.status?.ready) return this.join(hm, machine, now);
    const since = this.waitingSince.get(key) ?? now;
    this.waitingSince.set(key, since);
    if (now - since < this.opts.provisionMs) return { requeueAfter: this.opts.provisionMs - (now - since) };
    const cluster = machine.spec.clusterName;
    const providerID = `hcs://${cluster}/${machine.metadata.name}`;
    const ip = `192.168.0.${10 + ++this.seq}`;
    const updated = await this.ctx.mgmt.update<HCSMachine>({ ...hm, spec: { ...hm.spec, providerID, serverId: `srv-${this.seq}` } });
    await this.ctx.mgmt.updateStatus<HCSMachine>({ ...updated, status: { ready: true, addresses: [{ type: 'InternalIP', address: ip }], serverStatus: 'ACTIVE' } });
    this.activeAt.set(key, now);
    return { requeueAfter: this.opts.joinMs ?? 20_000 };
  }

  /** The guest joins: the Node appears in the workload cluster joinMs after the server is ACTIVE. */
  private async join(hm: HCSMachine, machine: Machine, now: number): Promise<Result | void> {
    const key = `${hm.metadata.namespace}/${hm.metadata.name}`;
    const activeAt = this.activeAt.get(key) ?? now;
    const wait = (this.opts.joinMs ?? 20_000) - (now - activeAt);
    if (wait > 0) return { requeueAfter: wait };
    const cluster = machine.spec.clusterName;
    const wl = this.ctx.workloads.client(hm.metadata.namespace ?? 'default', cluster);
    const providerID = hm.spec.providerID!;
    if ((await wl.list<Node>('Node')).some((n) => n.spec.providerID === providerID)) return;
    const ip = hm.status?.addresses?.[0]?.address ?? '0.0.0.0';
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `worker-${machine.metadata.name.slice(-5)}` },
      spec: { providerID },
      status: {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339(now) }],
        nodeInfo: { kubeletVersion: machine.spec.version ?? 'v0.0.0' },
        addresses: [{ type: 'InternalIP', address: ip }],
        ...(this.opts.volumes ? { volumesAttached: [{ name: 'kubernetes.io/csi/evs^vol-1', devicePath: '/dev/vdb' }] } : {}),
      },
    };
    await wl.create(node);
  }
}

export function setupFakeInfra(ctx: ControllerContext, opts: FakeInfraOptions): FakeInfra {
  const c = new FakeInfra(ctx, opts);
  ctx.manager.register(c);
  ctx.mgmt.watch<HCSMachine>('HCSMachine', (e) => ctx.manager.enqueue(c.name, `${e.object.metadata.namespace}/${e.object.metadata.name}`));
  ctx.mgmt.watch<Machine>('Machine', (e) => {
    const ir = e.object.spec.infrastructureRef;
    if (ir?.kind === 'HCSMachine') ctx.manager.enqueue(c.name, `${e.object.metadata.namespace}/${ir.name}`);
  });
  return c;
}

export const KUBELET_PATCH = `{
  "apiVersion": "kubelet.config.k8s.io/v1beta1",
  "kind": "KubeletConfiguration",
  "protectKernelDefaults": true,
  "staticPodPath": null,
  "tlsCertFile": "/etc/kubernetes/pki/kubelet.crt",
  "tlsPrivateKeyFile": "/etc/kubernetes/pki/kubelet.key",
  "streamingConnectionIdleTimeout": "5m",
  "clientCAFile": "/etc/kubernetes/pki/ca.crt"
}
`;

export function machineTemplate(name: string, imageName: string): HCSMachineTemplate {
  return {
    apiVersion: INFRA_VERSION,
    kind: 'HCSMachineTemplate',
    metadata: { name, namespace: NS },
    spec: {
      template: {
        spec: {
          imageName,
          flavorName: 's6.large.2',
          availabilityZone: 'az1.dc1',
          rootVolume: { type: 'SSD', size: 100 },
          configPoolRef: { name: `${CLUSTER}-worker-pool` },
          dataVolumes: [{ size: 50, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' }],
        },
      },
    },
  };
}

export function kubeadmConfigTemplate(): KubeadmConfigTemplate {
  return {
    apiVersion: BOOTSTRAP_VERSION,
    kind: 'KubeadmConfigTemplate',
    metadata: { name: `${CLUSTER}-worker-kct`, namespace: NS },
    spec: {
      template: {
        spec: {
          files: [{ path: '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json', owner: 'root:root', permissions: '0644', content: KUBELET_PATCH }],
          postKubeadmCommands: ['chmod 600 /var/lib/kubelet/config.yaml'],
          joinConfiguration: {
            patches: { directory: '/etc/kubernetes/patches' },
            nodeRegistration: { kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/kubernetes/kubelet-plugins/volume/exec/' } },
          },
        },
      },
    },
  };
}

export function machineDeployment(replicas: number, strategy: { maxSurge: number | string; maxUnavailable: number | string }, templateName = `${CLUSTER}-worker-template`): MachineDeployment {
  return {
    apiVersion: CAPI_VERSION,
    kind: 'MachineDeployment',
    metadata: { name: `${CLUSTER}-md-0`, namespace: NS },
    spec: {
      clusterName: CLUSTER,
      replicas,
      strategy: { type: 'RollingUpdate', rollingUpdate: { ...strategy } },
      template: {
        spec: {
          clusterName: CLUSTER,
          version: 'v1.30.4',
          nodeDrainTimeout: '1m',
          nodeDeletionTimeout: '5m',
          bootstrap: { configRef: { apiVersion: BOOTSTRAP_VERSION, kind: 'KubeadmConfigTemplate', name: `${CLUSTER}-worker-kct` } },
          infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachineTemplate', name: templateName },
        },
      },
    },
  };
}

export interface World extends EmbeddedEnv {
  infra: FakeInfra;
}

export const KCP = `${CLUSTER}-control-plane`;

/** A KubeadmControlPlane as in seeds/004 (version, dns / etcd image tags, infrastructure template, maxSurge). */
export function kubeadmControlPlane(replicas: number, maxSurge: 0 | 1, opts: { version?: string; template?: string; dns?: string; etcd?: string } = {}): KubeadmControlPlane {
  return {
    apiVersion: CONTROLPLANE_VERSION,
    kind: 'KubeadmControlPlane',
    metadata: { name: KCP, namespace: NS },
    spec: {
      replicas,
      version: opts.version ?? 'v1.30.4',
      machineTemplate: { infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachineTemplate', name: opts.template ?? `${CLUSTER}-cp-template` }, nodeDrainTimeout: '1m' },
      kubeadmConfigSpec: {
        clusterConfiguration: { dns: { imageTag: opts.dns ?? 'v1.11.1' }, etcd: { local: { imageTag: opts.etcd ?? '3.5.15-0', dataDir: '/var/lib/etcd' } } },
        initConfiguration: { nodeRegistration: { kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/kubernetes/kubelet-plugins/volume/exec/' } } },
        joinConfiguration: { nodeRegistration: { kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/kubernetes/kubelet-plugins/volume/exec/' } } },
        files: [{ path: '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json', owner: 'root:root', permissions: '0644', content: KUBELET_PATCH }],
      },
      rolloutStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge } },
    },
  };
}

/**
 * The one control plane Machine of a world without KubeadmControlPlane: a
 * stand-alone Machine labelled `cluster.x-k8s.io/control-plane` whose
 * infrastructure machine never exists (it stays Provisioning). Upstream
 * drains and deletes a worker's Node only while the cluster has an active
 * control plane Machine (machine_controller.go isDeleteNodeAllowed counts
 * Machines, not their readiness; src/world/capi/machine-delete-gate.ts), so the
 * worlds that test drain and Node deletion carry one. `machines(w)` leaves it out.
 */
export const CP_MACHINE = `${CLUSTER}-cp-0`;

export function controlPlaneMachine(name = CP_MACHINE): Machine {
  return {
    apiVersion: CAPI_VERSION,
    kind: 'Machine',
    metadata: { name, namespace: NS, labels: { [LABEL_CLUSTER_NAME]: CLUSTER, [LABEL_CONTROL_PLANE]: '' } },
    spec: {
      clusterName: CLUSTER,
      version: 'v1.30.4',
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachine', name },
    },
  };
}

export interface WorldOptions {
  /** A KubeadmControlPlane cluster (spec.controlPlaneRef; the test creates the KCP). */
  controlPlane?: boolean;
  /** Without KCP: create the stand-alone control plane Machine CP_MACHINE (default true). */
  controlPlaneMachine?: boolean;
}

/** Management objects for one cluster "demo" whose infrastructure is ready, plus the CAPI controllers and the fake provider. */
export async function createWorld(seed: number, infraOpts: FakeInfraOptions = { provisionMs: 30_000, deleteMs: 20_000 }, opts: WorldOptions = {}): Promise<World> {
  const env = createEmbeddedEnv({ seed });
  setupCapiControllers(env.ctx);
  const infra = setupFakeInfra(env.ctx, infraOpts);
  const hcsCluster: HCSCluster = {
    apiVersion: INFRA_VERSION,
    kind: 'HCSCluster',
    metadata: { name: CLUSTER, namespace: NS },
    spec: { controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 }, network: { subnets: [{ name: 'worker-subnet', id: 'subnet-1' }] } },
  };
  const hc = await env.mgmt.create(hcsCluster);
  await env.mgmt.updateStatus<HCSCluster>({ ...hc, status: { ready: true } });
  const cluster: Cluster = {
    apiVersion: CAPI_VERSION,
    kind: 'Cluster',
    metadata: { name: CLUSTER, namespace: NS },
    spec: {
      clusterNetwork: { pods: { cidrBlocks: ['10.3.0.0/16'] }, services: { cidrBlocks: ['10.4.0.0/16'] } },
      infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSCluster', name: CLUSTER, namespace: NS },
      ...(opts.controlPlane ? { controlPlaneRef: { apiVersion: CONTROLPLANE_VERSION, kind: 'KubeadmControlPlane', name: KCP, namespace: NS } } : {}),
    },
  };
  await env.mgmt.create(cluster);
  await env.mgmt.create(machineTemplate(`${CLUSTER}-worker-template`, 'alauda-os-k8s-v1.30.4'));
  await env.mgmt.create(kubeadmConfigTemplate());
  if (opts.controlPlane) await env.mgmt.create({ ...machineTemplate(`${CLUSTER}-cp-template`, 'alauda-os-k8s-v1.30.4'), metadata: { name: `${CLUSTER}-cp-template`, namespace: NS } });
  else if (opts.controlPlaneMachine !== false) await env.mgmt.create(controlPlaneMachine());
  return { ...env, infra };
}

/** The cluster's Machines, without the stand-alone control plane Machine CP_MACHINE. */
export function machines(w: World): Machine[] {
  return w.mgmt.listSync<Machine>('Machine', { namespace: NS }).filter((m) => m.metadata.name !== CP_MACHINE);
}

export function runningCount(w: World): number {
  return machines(w).filter((m) => m.status?.phase === 'Running' && !m.metadata.deletionTimestamp).length;
}

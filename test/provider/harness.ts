/**
 * Test harness for the provider and guest: embedded management cluster on
 * virtual time, a real mock-hcs reached over signed in-process HTTP, the
 * provider controllers and the guest fleet. Machines are created by hand
 * (Machine + HCSMachine + bootstrap secret) so the tests do not depend on the
 * simulated Cluster API controllers.
 */
import { createMockHcs, defaultCloudConfig, type CloudConfig, type MockHcs } from '../../mock-hcs/src/index.js';
import { CAPI_VERSION, LABEL_CLUSTER_NAME, type Cluster, type Machine } from '../../src/product/api/capi.js';
import type { Node, Secret } from '../../src/product/api/core.js';
import { INFRA_VERSION, type HCSCluster, type HCSMachine, type HCSMachineConfigPool, type HCSMachineSpec, type PoolConfig } from '../../src/product/api/hcs.js';
import { renderJoinCloudInit } from '../../src/world/capi/cloudinit.js';
import { HcsClient, injectTransport } from '../../src/product/cloud/index.js';
import { GuestFleet } from '../../src/world/guest/index.js';
import { ownerRef } from '../../src/core/kube/types.js';
import { generateCA, type CertKeyPair } from '../../src/core/pki/index.js';
import { setupProviderControllers, type DiskClaimer, type ProviderControllers } from '../../src/product/provider/index.js';
import { createEmbeddedEnv, type EmbeddedEnv } from '../../src/world/embedded.js';

export const NS = 'cpaas-system';
export const CLUSTER = 'demo';
export const POOL = 'demo-worker-pool';
export const IMAGE_131 = 'alauda-os-v4.1-k8s-v1.31.6';
export const IMAGE_130 = 'alauda-os-v4.0-k8s-v1.30.10';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** The worker KubeadmConfigTemplate of seeds/000 (BOOT-1). */
export { KUBELET_PATCH } from '../capi/fixtures.js';
import { KUBELET_PATCH } from '../capi/fixtures.js';

export function workerPoolConfigs(n: number, opts: { disks?: boolean } = {}): PoolConfig[] {
  return Array.from({ length: n }, (_, i) => ({
    hostname: `worker-${i + 1}`,
    networks: [{ subnetName: 'worker-subnet', ipAddress: `192.168.10.${11 + i}` }],
    ...(opts.disks === false ? {} : { persistentDisks: [{ slot: 0, size: 100, type: 'SSD', mountPath: '/var/cpaas', format: 'xfs' }] }),
  }));
}

export interface Harness {
  env: EmbeddedEnv;
  cloud: MockHcs;
  hcs: HcsClient;
  guests: GuestFleet;
  provider: ProviderControllers;
  ca: CertKeyPair;
  close(): Promise<void>;
  createMachine(name: string, opts?: { version?: string; spec?: Partial<HCSMachineSpec>; kubeletPatch?: string | null }): Promise<void>;
  deleteMachine(name: string): Promise<void>;
  hcsMachine(name: string): Promise<HCSMachine | undefined>;
  pool(): Promise<HCSMachineConfigPool>;
  node(name: string): Promise<Node | undefined>;
  runUntil(done: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<boolean>;
}

export async function createHarness(opts: { seed?: number; configs?: PoolConfig[]; diskClaimer?: DiskClaimer; cloudConfig?: CloudConfig; subnets?: { name?: string; id?: string }[]; secretKey?: string } = {}): Promise<Harness> {
  const env = createEmbeddedEnv({ seed: opts.seed ?? 7 });
  const cloud = await createMockHcs({ clock: env.clock, rng: env.rng.fork('cloud'), events: env.events, config: opts.cloudConfig ?? defaultCloudConfig() });
  const project = cloud.config.projects[0]!;
  const hcs = new HcsClient({ transport: injectTransport(cloud.app), ak: project.ak, sk: opts.secretKey ?? project.sk, projectId: project.id, clock: env.clock });
  const provider = setupProviderControllers(env.ctx, { cloud: hcs, ...(opts.diskClaimer ? { diskClaimer: opts.diskClaimer } : {}) });
  const guests = new GuestFleet(env.ctx, { hypervisor: cloud.hypervisor, onServerChange: (fn) => cloud.onServerChange(fn) });
  guests.setup();
  const { mgmt } = env;
  const ca = await generateCA(env.rng.fork('ca'), env.clock.now());

  await mgmt.create<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${CLUSTER}-ca`, namespace: NS }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) } });
  await mgmt.create<Cluster>({
    apiVersion: CAPI_VERSION,
    kind: 'Cluster',
    metadata: { name: CLUSTER, namespace: NS },
    spec: { infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSCluster', name: CLUSTER }, controlPlaneEndpoint: { host: '192.168.1.10', port: 6443 } },
  });
  await mgmt.create<HCSCluster>({
    apiVersion: INFRA_VERSION,
    kind: 'HCSCluster',
    metadata: { name: CLUSTER, namespace: NS, labels: { [LABEL_CLUSTER_NAME]: CLUSTER } },
    spec: { network: { subnets: opts.subnets ?? [{ name: 'cp-subnet' }, { name: 'worker-subnet' }] }, controlPlaneEndpoint: { host: '192.168.1.10', port: 6443 } },
  });
  await mgmt.create<HCSMachineConfigPool>({
    apiVersion: INFRA_VERSION,
    kind: 'HCSMachineConfigPool',
    metadata: { name: POOL, namespace: NS, labels: { [LABEL_CLUSTER_NAME]: CLUSTER } },
    spec: { configs: opts.configs ?? workerPoolConfigs(3) },
  });

  const h: Harness = {
    env,
    cloud,
    hcs,
    guests,
    provider,
    ca,
    close: () => cloud.close(),
    async createMachine(name, o = {}) {
      const version = o.version ?? 'v1.31.6';
      const files = o.kubeletPatch === null ? [] : [{ path: '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json', owner: 'root:root', permissions: '0644', content: o.kubeletPatch ?? KUBELET_PATCH }];
      const userData = renderJoinCloudInit({
        spec: {
          files,
          postKubeadmCommands: ['chmod 600 /var/lib/kubelet/config.yaml'],
          joinConfiguration: { patches: { directory: '/etc/kubernetes/patches' }, nodeRegistration: { kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/kubernetes/kubelet-plugins/volume/exec/' } } },
        },
        apiServerEndpoint: '192.168.1.10:6443',
        token: 'abcdef.0123456789abcdef',
        caCertHashes: ['sha256:00'],
        caCertPem: ca.certPem,
      });
      await mgmt.create<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-bootstrap`, namespace: NS }, type: 'cluster.x-k8s.io/secret', data: { value: b64(userData), format: b64('cloud-config') } });
      const machine = await mgmt.create<Machine>({
        apiVersion: CAPI_VERSION,
        kind: 'Machine',
        metadata: { name, namespace: NS, labels: { [LABEL_CLUSTER_NAME]: CLUSTER } },
        spec: {
          clusterName: CLUSTER,
          version,
          bootstrap: { dataSecretName: `${name}-bootstrap` },
          infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachine', name },
        },
      });
      await mgmt.create<HCSMachine>({
        apiVersion: INFRA_VERSION,
        kind: 'HCSMachine',
        metadata: { name, namespace: NS, labels: { [LABEL_CLUSTER_NAME]: CLUSTER }, ownerReferences: [ownerRef(machine)] },
        spec: {
          imageName: IMAGE_131,
          flavorName: 's6.large.2',
          availabilityZone: 'az1',
          rootVolume: { type: 'SSD', size: 100 },
          configPoolRef: { name: POOL },
          dataVolumes: [
            { size: 20, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' },
            { size: 20, type: 'SSD', mountPath: '/var/lib/containerd', format: 'xfs' },
          ],
          ...(o.spec ?? {}),
        },
      });
    },
    async deleteMachine(name) {
      // What the CAPI Machine controller does: delete the infrastructure machine, wait for it, then the Machine.
      await mgmt.delete({ kind: 'HCSMachine', namespace: NS, name }, { ignoreNotFound: true });
      await h.runUntil(async () => !(await mgmt.get({ kind: 'HCSMachine', namespace: NS, name })), 30 * 60_000);
      await mgmt.delete({ kind: 'Machine', namespace: NS, name }, { ignoreNotFound: true });
      await mgmt.delete({ kind: 'Secret', namespace: NS, name: `${name}-bootstrap` }, { ignoreNotFound: true });
    },
    hcsMachine: (name) => mgmt.get<HCSMachine>({ kind: 'HCSMachine', namespace: NS, name }),
    pool: async () => (await mgmt.get<HCSMachineConfigPool>({ kind: 'HCSMachineConfigPool', namespace: NS, name: POOL }))!,
    node: (name) => env.workloads.client(NS, CLUSTER).get<Node>({ kind: 'Node', name }),
    async runUntil(done, timeoutMs = 30 * 60_000) {
      return (await env.sim.runUntil(done, timeoutMs)).ok;
    },
  };
  return h;
}

export function nodeReadyStatus(n: Node | undefined): string | undefined {
  return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

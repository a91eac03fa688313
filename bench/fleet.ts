/**
 * Fleet benchmark (issue 36): C clusters of M worker machines each, in D
 * MachineDeployments per cluster, each with its own HCSMachineConfigPool of
 * M/D entries (a pool holds at most 1,024: its CEL rule) with a persistent
 * disk per entry, all in one management cluster. Every cluster is
 * provisioned at once, then every MachineDeployment is rolled to a new
 * HCSMachineTemplate at once (maxSurge 0, maxUnavailable 10 %). Prints wall
 * time, CPU seconds, reconciles and peak memory with the load average;
 * asserts nothing about speed (target: 100 × 100 provisioned and rolled in
 * under 60 s and 4 GiB on a quiet 2-core machine; docs/performance.md).
 *
 *   npm run bench -- fleet                     # BENCH_FLEET=100x100 (clusters x machines per cluster), 2 deployments each
 *   BENCH_FLEET=20x50 npm run bench -- fleet
 *   npx tsx bench/fleet.ts 20 50 [D]           # alone; BENCH_PROFILE=out.cpuprofile profiles the rollout, BENCH_PROFILE_PROVISION the provisioning,
 *                                              # BENCH_HEAP_SNAPSHOT=F.heapsnapshot writes the heap once provisioned
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { defaultCloudConfig, type CloudConfig } from '../mock-hcs/src/index.js';
import type { MachineDeployment } from '../src/product/api/capi.js';
import type { KubeObject } from '../src/core/kube/types.js';
import { applyObject } from '../src/harness/manifests/index.js';
import { createTestbed } from '../src/harness/testbed/index.js';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

export interface FleetShape {
  clusters: number;
  /** Worker machines per cluster. */
  machines: number;
  /** MachineDeployments (and pools) per cluster; the machines are spread over them. */
  deployments: number;
}

const NS = 'cpaas-system';
const API_CAPI = 'cluster.x-k8s.io/v1beta1';
const API_HCS = 'infrastructure.cluster.x-k8s.io/v1beta1';
const API_BOOTSTRAP = 'bootstrap.cluster.x-k8s.io/v1beta1';
/** Clusters get 192.168.100.0/24, 192.168.101.0/24, … inside the default VPC (192.168.0.0/16). */
const MAX_CLUSTERS = 150;
/** Host addresses .10 to .249 of a cluster's /24. */
const MAX_MACHINES = 240;
const POOL_LIMIT = 1024;

const hex12 = (n: number): string => n.toString(16).padStart(12, '0');
const clusterName = (c: number): string => `fleet-${String(c).padStart(3, '0')}`;
/** Machines of deployment d of a cluster (the first ones take the remainder). */
const sizeOf = (s: FleetShape, d: number): number => Math.floor(s.machines / s.deployments) + (d < s.machines % s.deployments ? 1 : 0);

/** The default cloud with one /24 subnet per cluster. */
export function fleetCloud(s: FleetShape): CloudConfig {
  const cloud = defaultCloudConfig();
  const vpc = cloud.vpcs[0]!;
  for (let c = 0; c < s.clusters; c++) {
    cloud.subnets.push({
      id: `8a1f0c2e-1b1a-4c8e-9f2d-${hex12(0xf1ee7000 + c)}`,
      name: `${clusterName(c)}-subnet`,
      cidr: `192.168.${100 + c}.0/24`,
      gateway_ip: `192.168.${100 + c}.1`,
      vpc_id: vpc.id,
      neutron_subnet_id: `5c2e9d1a-1b1a-4c8e-9f2d-${hex12(0xf1ee7000 + c)}`,
      neutron_network_id: `8a1f0c2e-1b1a-4c8e-9f2d-${hex12(0xf1ee7000 + c)}`,
    });
  }
  return cloud;
}

/** The manifests of cluster `c`: Cluster, HCSCluster, a pool, two templates and a MachineDeployment per deployment, one KubeadmConfigTemplate. */
export function clusterManifests(s: FleetShape, c: number): KubeObject[] {
  const name = clusterName(c);
  const labels = { 'cluster.x-k8s.io/cluster-name': name };
  const out: KubeObject[] = [
    { apiVersion: API_CAPI, kind: 'Cluster', metadata: { name, namespace: NS }, spec: { infrastructureRef: { apiVersion: API_HCS, kind: 'HCSCluster', name } } },
    { apiVersion: API_HCS, kind: 'HCSCluster', metadata: { name, namespace: NS }, spec: { controlPlaneEndpoint: { host: `192.168.${100 + c}.5`, port: 6443 }, network: { subnets: [{ name: `${name}-subnet` }] } } },
    {
      apiVersion: API_BOOTSTRAP,
      kind: 'KubeadmConfigTemplate',
      metadata: { name: `${name}-kct`, namespace: NS },
      spec: {
        template: {
          spec: {
            files: [
              {
                path: '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json',
                owner: 'root:root',
                permissions: '0644',
                content: JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', tlsCertFile: '/etc/kubernetes/pki/kubelet.crt', tlsPrivateKeyFile: '/etc/kubernetes/pki/kubelet.key', clientCAFile: '/etc/kubernetes/pki/ca.crt' }),
              },
            ],
            joinConfiguration: { patches: { directory: '/etc/kubernetes/patches' }, nodeRegistration: { kubeletExtraArgs: {} } },
          },
        },
      },
    },
  ];
  let host = 0;
  for (let d = 0; d < s.deployments; d++) {
    const n = sizeOf(s, d);
    const pool = `${name}-pool-${d}`;
    const configs = Array.from({ length: n }, () => {
      const i = host++;
      return {
        hostname: `${name}-w-${String(i + 1).padStart(3, '0')}`,
        networks: [{ subnetName: `${name}-subnet`, ipAddress: `192.168.${100 + c}.${10 + i}` }],
        persistentDisks: [{ slot: 0, size: 100, type: 'SSD', mountPath: '/var/cpaas', format: 'xfs' }],
      };
    });
    const template = (version: string, flavorName: string): KubeObject => ({
      apiVersion: API_HCS,
      kind: 'HCSMachineTemplate',
      metadata: { name: `${name}-md-${d}-${version}`, namespace: NS },
      spec: {
        template: {
          spec: {
            imageName: 'alauda-os-v4.1-k8s-v1.31.6',
            flavorName,
            availabilityZone: d % 2 === 0 ? 'az1' : 'az2',
            rootVolume: { type: 'SSD', size: 100 },
            configPoolRef: { name: pool },
            dataVolumes: [{ size: 20, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' }],
          },
        },
      },
    });
    out.push(
      { apiVersion: API_HCS, kind: 'HCSMachineConfigPool', metadata: { name: pool, namespace: NS, labels }, spec: { configs } },
      template('v1', 's6.large.2'),
      template('v2', 's6.xlarge.2'),
      {
        apiVersion: API_CAPI,
        kind: 'MachineDeployment',
        metadata: { name: `${name}-md-${d}`, namespace: NS },
        spec: {
          clusterName: name,
          replicas: n,
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '10%' } },
          template: {
            spec: {
              clusterName: name,
              version: 'v1.31.6',
              nodeDrainTimeout: '1m',
              nodeDeletionTimeout: '5m',
              bootstrap: { configRef: { apiVersion: API_BOOTSTRAP, kind: 'KubeadmConfigTemplate', name: `${name}-kct` } },
              infrastructureRef: { apiVersion: API_HCS, kind: 'HCSMachineTemplate', name: `${name}-md-${d}-v1` },
            },
          },
        },
      },
    );
  }
  return out;
}

function checkShape(s: FleetShape): void {
  if (!Number.isInteger(s.clusters) || s.clusters < 1 || s.clusters > MAX_CLUSTERS) throw new Error(`fleet: clusters must be 1..${MAX_CLUSTERS} (one /24 each in the default VPC), got ${s.clusters}`);
  if (!Number.isInteger(s.machines) || s.machines < 1 || s.machines > MAX_MACHINES) throw new Error(`fleet: machines per cluster must be 1..${MAX_MACHINES} (hosts .10-.249 of the cluster's /24), got ${s.machines}`);
  if (!Number.isInteger(s.deployments) || s.deployments < 1 || s.deployments > s.machines) throw new Error(`fleet: deployments per cluster must be 1..machines, got ${s.deployments}`);
  if (sizeOf(s, 0) > POOL_LIMIT) throw new Error(`fleet: a pool holds at most ${POOL_LIMIT} entries`);
}

export async function benchFleet(s: FleetShape): Promise<BenchResult[]> {
  checkShape(s);
  const total = s.clusters * s.machines;
  const tb = await createTestbed({ seed: 1, cloudConfig: fleetCloud(s) });
  const mds: { name: string; replicas: number }[] = [];
  for (let c = 0; c < s.clusters; c++) for (let d = 0; d < s.deployments; d++) mds.push({ name: `${clusterName(c)}-md-${d}`, replicas: sizeOf(s, d) });
  // Settled: every MachineDeployment has all its replicas updated, ready and available for its current generation.
  const settled = async (): Promise<boolean> =>
    mds.every(({ name, replicas }) => {
      const m = tb.env.mgmt.getSharedSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name });
      const st = m?.status;
      return !!m && st?.replicas === replicas && st.updatedReplicas === replicas && st.readyReplicas === replicas && st.availableReplicas === replicas && (st.observedGeneration ?? 0) >= (m.metadata.generation ?? 0);
    });
  const behind = (): string =>
    mds
      .map(({ name }) => ({ name, st: tb.env.mgmt.getSharedSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name })?.status }))
      .filter(({ st }, i) => st?.updatedReplicas !== mds[i]!.replicas || st?.availableReplicas !== mds[i]!.replicas)
      .slice(0, 3)
      .map(({ name, st }) => `${name}: ${JSON.stringify(st ?? {})}`)
      .join('; ');
  const cpuSince = (c0: NodeJS.CpuUsage): number => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1e6;
  };
  const load = (): string => `load ${loadavg()[0]!.toFixed(1)}`;

  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const load0 = load();
  // BENCH_PROFILE_PROVISION=F.cpuprofile: a CPU profile of the provisioning phase (BENCH_PROFILE: of the rollout).
  const upProfiler = process.env.BENCH_PROFILE_PROVISION ? new Session() : undefined;
  if (upProfiler) {
    upProfiler.connect();
    await upProfiler.post('Profiler.enable');
    await upProfiler.post('Profiler.start');
  }
  for (let c = 0; c < s.clusters; c++) for (const o of clusterManifests(s, c)) await applyObject(tb.env.mgmt, o);
  const up = await tb.sim.runUntil(settled, 12 * 3_600_000);
  if (upProfiler) {
    const { profile } = await upProfiler.post('Profiler.stop');
    writeFileSync(process.env.BENCH_PROFILE_PROVISION!, JSON.stringify(profile));
    upProfiler.disconnect();
  }
  const t1 = performance.now();
  const cpuUp = cpuSince(cpu0);
  const reconcilesUp = tb.env.manager.reconcileCount();
  if (!up.ok) throw new Error(`provisioning ${s.clusters} x ${s.machines} did not settle: ${behind()}`);
  const rssUp = process.resourceUsage().maxRSS / 1024;
  if (process.env.BENCH_HEAP_SNAPSHOT) (await import('node:v8')).writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);

  const virtual0 = tb.clock.now();
  for (const { name } of mds) {
    const v2 = name.replace(/-md-(\d+)$/, '-md-$1-v2');
    await tb.env.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name }, 'merge', { spec: { template: { spec: { infrastructureRef: { name: v2 } } } } });
  }
  const profiler = process.env.BENCH_PROFILE ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const cpu1 = process.cpuUsage();
  const rolled = await tb.sim.runUntil(settled, 48 * 3_600_000);
  const t2 = performance.now();
  const cpuRoll = cpuSince(cpu1);
  const load1 = load();
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
    profiler.disconnect();
  }
  if (!rolled.ok) throw new Error(`the rollout of ${s.clusters} x ${s.machines} did not finish: ${behind()}`);
  const reconcilesRoll = tb.env.manager.reconcileCount() - reconcilesUp;
  const virtualH = (tb.clock.now() - virtual0) / 3_600_000;
  const servers = tb.cloud.hypervisor.listServers().length;
  const volumes = tb.cloud.hypervisor.listVolumes().filter((v) => v.metadata['hcs.io/persistent'] === 'true').length;
  const events = tb.events.size();
  await tb.close();
  if (servers !== total || volumes !== total) throw new Error(`after the rollout: ${servers} servers and ${volumes} persistent volumes, expected ${total} of each`);
  const shape = `${s.clusters} clusters x ${s.machines} machines (${s.deployments} deployments and pools each)`;
  const each = (cpu: number, n: number): string => `${((cpu * 1e6) / n).toFixed(0)} µs CPU each`;
  return [
    { name: `fleet: provision ${shape}`, value: (t1 - t0) / 1000, unit: 's wall', note: `${cpuUp.toFixed(1)} s CPU, ${reconcilesUp} reconciles, ${each(cpuUp, reconcilesUp)}; ${load0}` },
    {
      name: `fleet: roll all ${mds.length} deployments to a new template (maxSurge 0, maxUnavailable 10%)`,
      value: (t2 - t1) / 1000,
      unit: 's wall',
      note: `${cpuRoll.toFixed(1)} s CPU, ${reconcilesRoll} reconciles, ${each(cpuRoll, reconcilesRoll)}, ${virtualH.toFixed(1)} h virtual; ${load1}`,
    },
    { name: 'fleet: provisioned and rolled', value: (t2 - t0) / 1000, unit: 's wall', note: `target < 60 s for 100 x 100 on a quiet 2-core machine; ${(cpuUp + cpuRoll).toFixed(1)} s CPU` },
    { name: 'fleet: peak memory (max RSS of the process)', value: Math.round(process.resourceUsage().maxRSS / 1024), unit: 'MiB', note: `${Math.round(rssUp)} MiB once provisioned; target < 4096 MiB for 100 x 100` },
    { name: 'fleet: events recorded', value: events, unit: 'events' },
  ];
}

/** "100x100" (clusters x machines per cluster), the deployments per cluster from the third number or 2. */
export function parseShape(text: string, deployments?: string): FleetShape {
  const m = /^(\d+)x(\d+)(?:x(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`fleet: expected CLUSTERSxMACHINES[xDEPLOYMENTS] such as 100x100, got "${text}"`);
  return { clusters: Number(m[1]), machines: Number(m[2]), deployments: Number(m[3] ?? deployments ?? 2) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const shape = args.length >= 2 ? { clusters: Number(args[0]), machines: Number(args[1]), deployments: Number(args[2] ?? 2) } : parseShape(args[0] ?? process.env.BENCH_FLEET ?? '100x100');
  const results = await benchFleet(shape);
  // --json: one line for bench/run.ts, which runs this file in a fresh process (peak RSS of this benchmark alone).
  if (process.argv.includes('--json')) console.log(JSON.stringify(results));
  else for (const r of results) console.log(`${r.name}: ${Number.isInteger(r.value) ? r.value : r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}

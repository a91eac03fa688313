import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ANNOTATION_CERTIFICATES_EXPIRY, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE } from '../../src/product/api/capi.js';
import type { Cluster, KubeadmConfig, KubeadmControlPlane, Machine } from '../../src/product/api/capi.js';
import type { Secret } from '../../src/product/api/core.js';
import { secretValue } from '../../src/product/api/core.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import {
  ANN_CONTROL_PLANE_COMPONENTS_UNHEALTHY,
  ANN_ETCD_MEMBER_UNHEALTHY,
  ANN_RESTORE_ETCD_QUORUM,
  CONTROL_PLANE_CONFIGMAP,
  LABEL_CONTROL_PLANE_NAME,
  decideKcp,
  aggregateMessage,
  minorSkipError,
  selectMachineForScaleDown,
  validateKcp,
  type EtcdMemberRecord,
  type KcpMachineView,
} from '../../src/world/capi/index.js';
import { CLUSTER, KCP, NS, createWorld, kubeadmControlPlane, machineTemplate, machines, type World } from './fixtures.js';
import { pickFewestFailureDomain, pickMostFailureDomain } from '../../src/world/capi/failure-domains.js';

const MIN = 60_000;

function cpMachines(w: World): Machine[] {
  return machines(w).filter((m) => m.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined);
}
function kcp(w: World): KubeadmControlPlane {
  return w.mgmt.getSync<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: NS, name: KCP })!;
}
function cm(w: World): Record<string, string> {
  return (w.workloads.store(NS, CLUSTER).getSync<KubeObject & { data?: Record<string, string> }>({ kind: 'ConfigMap', ...CONTROL_PLANE_CONFIGMAP })?.data ?? {}) as Record<string, string>;
}
function members(w: World): EtcdMemberRecord[] {
  return JSON.parse(cm(w).etcdMembers ?? '[]') as EtcdMemberRecord[];
}
function cond(w: World, type: string): { status?: string; reason?: string; message?: string } | undefined {
  return kcp(w).status?.conditions?.find((c) => c.type === type);
}
async function patchKcp(w: World, patch: unknown): Promise<void> {
  await w.mgmt.patch({ kind: 'KubeadmControlPlane', namespace: NS, name: KCP }, 'merge', patch);
}

/** All control plane machines Running at `version` from `template`, `replicas` of them, KCP status caught up. */
async function settled(w: World, replicas: number, version = 'v1.30.4', template = `${CLUSTER}-cp-template`, timeoutMs = 60 * MIN, onInstant?: () => void): Promise<void> {
  const r = await w.sim.runUntil(
    () => {
      const ms = cpMachines(w);
      const k = kcp(w);
      return (
        ms.length === replicas &&
        ms.every((m) => m.status?.phase === 'Running' && m.spec.version === version && !m.metadata.deletionTimestamp) &&
        ms.every((m) => w.mgmt.getSync({ kind: 'HCSMachine', namespace: NS, name: m.metadata.name })?.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name'] === template) &&
        k.status?.readyReplicas === replicas &&
        k.status.updatedReplicas === replicas &&
        k.status.replicas === replicas
      );
    },
    timeoutMs,
    onInstant,
  );
  expect(r.ok, `control plane not settled: ${cpMachines(w).map((m) => `${m.metadata.name}:${m.status?.phase}:${m.spec.version}`).join(', ')}; ${JSON.stringify(kcp(w).status?.conditions?.filter((c) => c.status === 'False'))}`).toBe(true);
}

async function upgrade(w: World): Promise<void> {
  await w.mgmt.create({ ...machineTemplate(`${CLUSTER}-cp-template-v2`, 'alauda-os-k8s-v1.31.2'), metadata: { name: `${CLUSTER}-cp-template-v2`, namespace: NS } });
  // One edit: version, CoreDNS tag, etcd tag and template (seeds/004, KCP-3).
  await patchKcp(w, {
    spec: {
      version: 'v1.31.2',
      machineTemplate: { infrastructureRef: { name: `${CLUSTER}-cp-template-v2` } },
      kubeadmConfigSpec: { clusterConfiguration: { dns: { imageTag: 'v1.11.3' }, etcd: { local: { imageTag: '3.5.16-0' } } } },
    },
  });
}

async function cpWorld(seed: number, replicas: number, maxSurge: 0 | 1): Promise<World> {
  const w = await createWorld(seed, { provisionMs: 30_000, deleteMs: 20_000 }, { controlPlane: true });
  await w.mgmt.create(kubeadmControlPlane(replicas, maxSurge));
  return w;
}

describe('KubeadmControlPlane: initialization and scale up', () => {
  it('creates the init machine first, then joins one control plane machine at a time (preflight), and drives the Cluster', async () => {
    const w = await cpWorld(21, 3, 0);
    // Before the first node is up the Cluster's control plane is not initialized.
    await w.sim.advance(10_000);
    let c = w.mgmt.getSync<Cluster>({ kind: 'Cluster', namespace: NS, name: CLUSTER })!;
    expect(c.status?.conditions?.find((x) => x.type === 'ControlPlaneInitialized')?.status).toBe('False');
    expect(cpMachines(w)).toHaveLength(1);
    await settled(w, 3);

    const created = w.events.all().filter((e) => e.type === 'kcp.machine-created');
    expect(created.map((e) => e.data?.init)).toEqual([true, false, false]);
    // Preflight: a join is only created once every existing machine has a Node (nodeRef).
    const nodeRefAt = (name: string): number => w.events.all().find((e) => e.type === 'machine.phase' && e.data?.machine === name && e.data?.phase === 'Running')!.t;
    expect(created[1]!.t).toBeGreaterThanOrEqual(nodeRefAt(String(created[0]!.data?.machine)));
    expect(created[2]!.t).toBeGreaterThanOrEqual(nodeRefAt(String(created[1]!.data?.machine)));

    const [first, ...rest] = created.map((e) => String(e.data?.machine));
    for (const m of cpMachines(w)) {
      expect(m.metadata.labels).toMatchObject({ [LABEL_CLUSTER_NAME]: CLUSTER, [LABEL_CONTROL_PLANE]: '', [LABEL_CONTROL_PLANE_NAME]: KCP });
      expect(m.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'KubeadmControlPlane', name: KCP, controller: true });
      expect(m.metadata.name).toMatch(new RegExp(`^${KCP}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
      const hm = w.mgmt.getSync({ kind: 'HCSMachine', namespace: NS, name: m.metadata.name })!;
      expect(hm.metadata.ownerReferences?.find((r) => r.controller)).toMatchObject({ kind: 'Machine', name: m.metadata.name });
    }
    const initCfg = w.mgmt.getSync<KubeadmConfig>({ kind: 'KubeadmConfig', namespace: NS, name: first! })!;
    expect(initCfg.spec.joinConfiguration).toBeUndefined();
    expect(initCfg.spec.initConfiguration).toBeDefined();
    const initData = secretValue(w.mgmt.getSync<Secret>({ kind: 'Secret', namespace: NS, name: first! })!, 'value')!;
    const ci = parse(initData) as { runcmd: string[]; write_files: { path: string; content: string }[] };
    expect(ci.runcmd.some((x) => x.startsWith('kubeadm init --config /run/kubeadm/kubeadm.yaml'))).toBe(true);
    const kubeadmYaml = ci.write_files.find((f) => f.path === '/run/kubeadm/kubeadm.yaml')!.content;
    expect(kubeadmYaml).toContain('kind: ClusterConfiguration');
    expect(kubeadmYaml).toContain('imageTag: v1.11.1');
    expect(kubeadmYaml).toContain('kubernetesVersion: v1.30.4');
    for (const j of rest) {
      const cfg = w.mgmt.getSync<KubeadmConfig>({ kind: 'KubeadmConfig', namespace: NS, name: j })!;
      expect(cfg.spec.joinConfiguration?.controlPlane).toEqual({});
      expect(cfg.spec.initConfiguration).toBeUndefined();
      const jd = parse(secretValue(w.mgmt.getSync<Secret>({ kind: 'Secret', namespace: NS, name: j })!, 'value')!) as { runcmd: string[]; write_files: { path: string; content: string }[] };
      expect(jd.runcmd.some((x) => x.startsWith('kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml'))).toBe(true);
      expect(jd.write_files.find((f) => f.path === '/run/kubeadm/kubeadm-join-config.yaml')!.content).toContain('controlPlane: {}');
    }

    const k = kcp(w);
    expect(k.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, unavailableReplicas: 0, initialized: true, ready: true, version: 'v1.30.4' });
    expect(k.status?.selector).toBe(`${LABEL_CLUSTER_NAME}=${CLUSTER},${LABEL_CONTROL_PLANE}`);
    await w.sim.advance(MIN);
    c = w.mgmt.getSync<Cluster>({ kind: 'Cluster', namespace: NS, name: CLUSTER })!;
    expect(c.status?.controlPlaneReady).toBe(true);
    expect(c.status?.conditions?.find((x) => x.type === 'ControlPlaneInitialized')?.status).toBe('True');
    // etcd: one member per machine, tags recorded in the workload cluster (KCP-3).
    expect(members(w).map((m) => m.name).sort()).toEqual(cpMachines(w).map((m) => m.metadata.name).sort());
    expect(cm(w)).toMatchObject({ controlPlaneName: KCP, kubernetesVersion: 'v1.30.4', dnsImageTag: 'v1.11.1', etcdImageTags: '3.5.15-0', etcdQuorum: 'true' });
    expect(cond(w, 'EtcdClusterHealthy')?.status).toBe('True');
  });
});

describe('KubeadmControlPlane rollout (KCP-1, KCP-2, KCP-3)', () => {

  it('maxSurge 0 removes an old machine before creating each replacement (hostname / disks can be reused)', async () => {
    const w = await cpWorld(22, 3, 0);
    await settled(w, 3);
    const old = cpMachines(w)
      .sort((a, b) => Date.parse(a.metadata.creationTimestamp!) - Date.parse(b.metadata.creationTimestamp!))
      .map((m) => m.metadata.name);
    const t0 = w.events.size();
    let maxMachines = 0;
    await upgrade(w);
    await settled(w, 3, 'v1.31.2', `${CLUSTER}-cp-template-v2`, 60 * MIN, () => {
      maxMachines = Math.max(maxMachines, cpMachines(w).length);
    });
    expect(maxMachines).toBe(3);
    const evs = w.events.all().slice(t0);
    const order = evs
      .filter((e) => (e.type === 'object.deleted' && e.data?.kind === 'Machine' && old.includes(String(e.data?.name))) || e.type === 'kcp.machine-created')
      .map((e) => (e.type === 'kcp.machine-created' ? 'create' : 'gone'));
    expect(order).toEqual(['gone', 'create', 'gone', 'create', 'gone', 'create']);
    // Oldest outdated machine first.
    const deleted = evs.filter((e) => e.type === 'kcp.scale-down').map((e) => String(e.data?.machine));
    expect(deleted).toEqual(old);
    expect(cm(w)).toMatchObject({ kubernetesVersion: 'v1.31.2', dnsImageTag: 'v1.11.3', etcdImageTags: '3.5.16-0' });
    expect(kcp(w).status?.version).toBe('v1.31.2');
    expect(cond(w, 'MachinesSpecUpToDate')?.status).toBe('True');
  });

  it('maxSurge 1 creates the replacement first, never exceeding replicas + 1', async () => {
    const w = await cpWorld(23, 3, 1);
    await settled(w, 3);
    let maxMachines = 0;
    const t0 = w.events.size();
    await upgrade(w);
    await settled(w, 3, 'v1.31.2', `${CLUSTER}-cp-template-v2`, 60 * MIN, () => {
      maxMachines = Math.max(maxMachines, cpMachines(w).length);
    });
    expect(maxMachines).toBe(4);
    const first = w.events.all().slice(t0).find((e) => e.type === 'kcp.machine-created' || e.type === 'kcp.scale-down')!;
    expect(first.type).toBe('kcp.machine-created');
  });

  it('records a version-only upgrade: CoreDNS and etcd keep the old tags (KCP-3 mismatch visible)', async () => {
    const w = await cpWorld(24, 1, 0);
    await settled(w, 1);
    await patchKcp(w, { spec: { version: 'v1.31.2' } });
    await settled(w, 1, 'v1.31.2');
    expect(cm(w)).toMatchObject({ kubernetesVersion: 'v1.31.2', dnsImageTag: 'v1.11.1', etcdImageTags: '3.5.15-0' });
  });
});

describe('preflight checks, etcd quorum (KCP-5) and version skew (UPG-3)', () => {
  it('unhealthy control plane components: the unhealthy outdated machine goes first, then the checks block the rollout', async () => {
    const w = await cpWorld(25, 3, 0);
    await settled(w, 3);
    const names = cpMachines(w)
      .sort((a, b) => Date.parse(a.metadata.creationTimestamp!) - Date.parse(b.metadata.creationTimestamp!))
      .map((m) => m.metadata.name);
    const annotate = (v: string | null): Promise<void> => w.mgmt.patch({ kind: 'KubeadmControlPlane', namespace: NS, name: KCP }, 'merge', { metadata: { annotations: { [ANN_CONTROL_PLANE_COMPONENTS_UNHEALTHY]: v } } }).then(() => undefined);
    await annotate(names[2]!);
    await patchKcp(w, { spec: { version: 'v1.30.5' } });
    // The newest machine is unhealthy: it is selected first (unhealthy outdated) and excluded from the checks.
    await w.sim.runUntil(() => w.events.all().some((e) => e.type === 'kcp.scale-down'), 10 * MIN);
    expect(w.events.all().find((e) => e.type === 'kcp.scale-down')?.data?.machine).toBe(names[2]);
    // Now the two remaining machines report unhealthy components: the replacement is not created.
    await annotate(names.join(','));
    const created = w.events.all().filter((e) => e.type === 'kcp.machine-created').length;
    await w.sim.advance(10 * MIN);
    expect(cond(w, 'Resized')).toMatchObject({ status: 'False', reason: 'PreflightChecksFailed' });
    expect(cond(w, 'Resized')?.message).toContain(`Machine ${names[0]} reports APIServerPodHealthy`);
    expect(cond(w, 'ControlPlaneComponentsHealthy')?.status).toBe('False');
    expect(w.events.all().some((e) => e.type === 'event.ControlPlaneUnhealthy')).toBe(true);
    expect(w.events.all().filter((e) => e.type === 'kcp.machine-created').length).toBe(created);
    expect(cpMachines(w)).toHaveLength(2);
    await annotate(null);
    await settled(w, 3, 'v1.30.5');
  });

  it('KCP-5: without etcd quorum the preflight checks refuse every scale operation, rollback included, as KCP v1.10.10 does; the testbed etcd says what to do', async () => {
    const w = await cpWorld(26, 3, 0);
    await settled(w, 3);
    await w.mgmt.create({ ...machineTemplate(`${CLUSTER}-cp-template-v2`, 'alauda-os-k8s-v1.31.2'), metadata: { name: `${CLUSTER}-cp-template-v2`, namespace: NS } });
    await patchKcp(w, { spec: { version: 'v1.31.2', machineTemplate: { infrastructureRef: { name: `${CLUSTER}-cp-template-v2` } } } });
    await settled(w, 3, 'v1.31.2', `${CLUSTER}-cp-template-v2`);
    // The new control plane loses quorum: two members down (named by their Nodes, as the scenarios do).
    const machines = cpMachines(w).sort((a, b) => a.status!.nodeRef!.name.localeCompare(b.status!.nodeRef!.name));
    const nodes = machines.map((m) => m.status!.nodeRef!.name);
    await w.mgmt.patch({ kind: 'KubeadmControlPlane', namespace: NS, name: KCP }, 'merge', { metadata: { annotations: { [ANN_ETCD_MEMBER_UNHEALTHY]: nodes.slice(0, 2).join(',') } } });
    await w.sim.advance(2 * MIN);
    // workload_cluster_conditions.go: the member KCP reaches (the only one up) reports "etcdserver: no leader"; every
    // Machine with a Node is EtcdMemberHealthy False, aggregated into EtcdClusterHealthy False EtcdClusterUnhealthy.
    const names = machines.map((m) => m.metadata.name).sort();
    expect(cond(w, 'EtcdClusterHealthy')).toMatchObject({ status: 'False', reason: 'EtcdClusterUnhealthy', severity: 'Error', message: `Following Machines are reporting etcd member errors: ${names.join(', ')}` });
    expect(cm(w).etcdQuorum).toBe('false');
    // The operator hint is the testbed etcd's (component testbed-etcd), once: KCP names no quorum.
    const hint = w.events.all().filter((e) => e.type === 'event.EtcdQuorumLost');
    expect(hint).toHaveLength(1);
    expect(hint[0]!.rules).toEqual(['KCP-5']);
    expect(hint[0]!.message).toContain(`1/3 members up (${nodes[2]}; down: ${nodes[0]}, ${nodes[1]})`);
    expect(hint[0]!.message).toContain(`${ANN_RESTORE_ETCD_QUORUM}=true`);
    expect(w.events.all().filter((e) => e.type === 'etcd.quorum-lost')).toHaveLength(1);

    // Rollback (RB-5): restore template and version. Refused by the preflight checks while there is no quorum.
    const before = cpMachines(w).map((m) => `${m.metadata.name}:${m.metadata.deletionTimestamp ?? ''}`);
    const createdBefore = w.events.all().filter((e) => e.type === 'kcp.machine-created').length;
    await patchKcp(w, { spec: { version: 'v1.30.4', machineTemplate: { infrastructureRef: { name: `${CLUSTER}-cp-template` } } } });
    await w.sim.advance(30 * MIN);
    expect(cpMachines(w).map((m) => `${m.metadata.name}:${m.metadata.deletionTimestamp ?? ''}`)).toEqual(before);
    expect(w.events.all().filter((e) => e.type === 'kcp.machine-created').length).toBe(createdBefore);
    // scale.go preflightChecks: the Warning Event ControlPlaneUnhealthy with the aggregated errors "[…, …]".
    const pf = w.events.all().filter((e) => e.type === 'event.ControlPlaneUnhealthy').at(-1)!;
    expect(pf.message).toContain(`Waiting for control plane to pass preflight checks to continue reconciliation: [Machine `);
    expect(pf.message).toContain(`reports EtcdMemberHealthy condition is false (Error, Etcd endpoint etcd-${nodes[2]} reports errors: etcdserver: no leader)`);
    expect(pf.rules).toEqual(['KCP-5']);
    expect(w.events.all().some((e) => e.type === 'event.EtcdQuorumLost' && e.source === 'capi')).toBe(false);
    expect(cond(w, 'Ready')?.status).toBe('False');

    // Operator action: forced recovery → the down members re-join and the rollback proceeds to the old template and version.
    await w.mgmt.patch({ kind: 'KubeadmControlPlane', namespace: NS, name: KCP }, 'merge', { metadata: { annotations: { [ANN_RESTORE_ETCD_QUORUM]: 'true' } } });
    await w.sim.advance(1_000);
    const restored = w.events.all().filter((e) => e.type === 'etcd.quorum-restored');
    expect(restored).toHaveLength(1);
    expect(restored[0]!.data?.recreated).toEqual(nodes.slice(0, 2));
    expect(w.events.all().some((e) => e.type === 'event.EtcdQuorumRestored')).toBe(true);
    expect(kcp(w).metadata.annotations?.[ANN_RESTORE_ETCD_QUORUM]).toBeUndefined();
    expect(kcp(w).metadata.annotations?.[ANN_ETCD_MEMBER_UNHEALTHY]).toBeUndefined();
    await settled(w, 3, 'v1.30.4', `${CLUSTER}-cp-template`);
    expect(cond(w, 'EtcdClusterHealthy')?.status).toBe('True');
  });

  it('refuses a skipped Kubernetes minor version with a condition and an event, and rolls nothing', async () => {
    const w = await cpWorld(27, 1, 0);
    await settled(w, 1);
    const name = cpMachines(w)[0]!.metadata.name;
    await patchKcp(w, { spec: { version: 'v1.32.1' } });
    await w.sim.advance(10 * MIN);
    expect(cpMachines(w).map((m) => m.metadata.name)).toEqual([name]);
    expect(cond(w, 'VersionUpgradeAllowed')).toMatchObject({ status: 'False', reason: 'VersionSkewTooLarge' });
    expect(cond(w, 'VersionUpgradeAllowed')?.message).toMatch(/^UPG-3: cannot update Kubernetes version from v1\.30\.4 to v1\.32\.1.*v1\.31\.x first/);
    expect(w.events.all().filter((e) => e.type === 'event.VersionSkewTooLarge')).toHaveLength(1);
    await patchKcp(w, { spec: { version: 'v1.31.0' } });
    await settled(w, 1, 'v1.31.0');
    expect(cond(w, 'VersionUpgradeAllowed')?.status).toBe('True');
  });

  it('admission: validateKcp rejects a minor skip, maxSurge > 1 and even replicas', () => {
    const base = kubeadmControlPlane(3, 0);
    expect(validateKcp('CREATE', base, undefined)).toEqual([]);
    const skip = kubeadmControlPlane(3, 0, { version: 'v1.32.0' });
    expect(validateKcp('UPDATE', skip, base)).toEqual([expect.objectContaining({ field: 'spec.version', rule: 'UPG-3' })]);
    expect(validateKcp('UPDATE', kubeadmControlPlane(3, 0, { version: 'v1.31.0' }), base)).toEqual([]);
    // Rollback to the previous minor is allowed (RB-5).
    expect(validateKcp('UPDATE', base, kubeadmControlPlane(3, 0, { version: 'v1.31.0' }))).toEqual([]);
    const surge = structuredClone(base);
    surge.spec.rolloutStrategy = { rollingUpdate: { maxSurge: 2 } };
    expect(validateKcp('CREATE', surge, undefined).map((c) => c.field)).toEqual(['spec.rolloutStrategy.rollingUpdate.maxSurge']);
    expect(validateKcp('CREATE', kubeadmControlPlane(2, 0), undefined).map((c) => c.field)).toContain('spec.replicas');
    expect(validateKcp('CREATE', kubeadmControlPlane(1, 0), undefined)).toEqual([expect.objectContaining({ field: 'spec.rolloutStrategy.rollingUpdate.maxSurge', rule: 'KCP-1' })]);
    expect(minorSkipError('v1.30.4', 'v2.0.0')).toBeDefined();
    expect(minorSkipError('v1.30.4', 'v1.29.0')).toBeUndefined();
  });
});

describe('KCP decisions (pure)', () => {
  it("the preflight Event's errors are aggregated as k8s.io/apimachinery util/errors Aggregate.Error() prints them (scale.go preflightChecks: kerrors.NewAggregate)", () => {
    expect(aggregateMessage(['Machine a reports X'])).toBe('Machine a reports X');
    expect(aggregateMessage(['Machine a reports X', 'Machine b reports X'])).toBe('[Machine a reports X, Machine b reports X]');
    // Duplicates print once; a single distinct message has no brackets.
    expect(aggregateMessage(['m', 'm'])).toBe('m');
    expect(aggregateMessage(['m', 'n', 'm'])).toBe('[m, n]');
  });
  const v = (name: string, created: number, extra: Partial<KcpMachineView> = {}): KcpMachineView => ({
    name,
    created,
    upToDate: true,
    deleting: false,
    hasNodeRef: true,
    deleteAnnotation: false,
    componentsHealthy: true,
    etcdMemberHealthy: true,
    ...extra,
  });
  it('scale down picks the oldest machine in the failure domain with most machines', () => {
    const all = [v('a', 1, { failureDomain: 'az1' }), v('b', 2, { failureDomain: 'az2' }), v('c', 3, { failureDomain: 'az2' })];
    expect(selectMachineForScaleDown(all, [], ['az1', 'az2'])?.name).toBe('b');
    expect(selectMachineForScaleDown(all, [all[0]!], ['az1', 'az2'])?.name).toBe('a');
    // Without failure domains in the Cluster every machine is "not in a failure domain": the oldest goes.
    expect(selectMachineForScaleDown(all, [])?.name).toBe('a');
    // A machine in a failure domain the Cluster no longer lists goes first (FailureDomainWithMostMachines).
    expect(selectMachineForScaleDown(all, [], ['az2', 'az3'])?.name).toBe('a');
    // PickMost counts the eligible machines first: az1 has two outdated ones, az2 three machines but one outdated.
    const mixed = [v('p', 1, { failureDomain: 'az1', upToDate: false }), v('q', 2, { failureDomain: 'az1', upToDate: false }), v('r', 3, { failureDomain: 'az2', upToDate: false }), v('s', 4, { failureDomain: 'az2' }), v('t', 5, { failureDomain: 'az2' })];
    expect(selectMachineForScaleDown(mixed, mixed.filter((m) => !m.upToDate), ['az1', 'az2'])?.name).toBe('p');
    expect(pickMostFailureDomain(['az1', 'az2'], mixed, mixed.filter((m) => !m.upToDate))).toBe('az1');
  });
  it('scale up places the machine in the failure domain with the fewest up-to-date machines, then the fewest machines (PickFewest)', () => {
    const ms = [v('a', 1, { failureDomain: 'az1' }), v('b', 2, { failureDomain: 'az2' }), v('c', 3, { failureDomain: 'az1' })];
    expect(pickFewestFailureDomain(['az1', 'az2'], ms)).toBe('az2');
    // Outdated machines count only as machines: az1 holds two outdated ones, az2 one up-to-date one -> az1.
    const rolling = [v('a', 1, { failureDomain: 'az1', upToDate: false }), v('b', 2, { failureDomain: 'az1', upToDate: false }), v('d', 4, { failureDomain: 'az2' })];
    expect(pickFewestFailureDomain(['az1', 'az2'], rolling)).toBe('az1');
    // A tie: the first by name (upstream: map order).
    expect(pickFewestFailureDomain(['az2', 'az1'], [])).toBe('az1');
    const annotated = [v('a', 1), v('b', 2, { deleteAnnotation: true }), v('c', 3, { upToDate: false })];
    expect(selectMachineForScaleDown(annotated, [annotated[2]!])?.name).toBe('b');
  });
  it('an outdated machine without a Node is not "unhealthy" for the choice (upstream sets no component condition on it): the oldest outdated one is picked, and the preflight waits for the Node', () => {
    // util/collections HasUnhealthyControlPlaneComponents: "The machine without a node ... do not treat it as unhealthy".
    const ms = [v('x', 1, { upToDate: false }), v('y', 2, { upToDate: false, hasNodeRef: false, componentsHealthy: false }), v('z', 3)];
    expect(selectMachineForScaleDown(ms, [ms[0]!, ms[1]!])?.name).toBe('x');
    expect(decideKcp({ replicas: 2, maxSurge: 0, initialized: true, machines: ms })).toMatchObject({ type: 'blocked', operation: 'scaleDown', reason: 'PreflightFailed', machine: 'x' });
    // With a Node, unhealthy components do make an outdated machine go first.
    const sick = [v('x', 1, { upToDate: false }), v('y', 2, { upToDate: false, componentsHealthy: false }), v('z', 3)];
    expect(selectMachineForScaleDown(sick, [sick[0]!, sick[1]!])?.name).toBe('y');
  });
  it('rollout loop: scale up while machines < replicas + maxSurge, else scale down an outdated one', () => {
    const ms = [v('a', 1, { upToDate: false }), v('b', 2, { upToDate: false }), v('c', 3, { upToDate: false })];
    expect(decideKcp({ replicas: 3, maxSurge: 1, initialized: true, machines: ms }).type).toBe('scaleUp');
    expect(decideKcp({ replicas: 3, maxSurge: 0, initialized: true, machines: ms })).toMatchObject({ type: 'scaleDown', machine: 'a' });
    // Without etcd quorum every Machine's EtcdMemberHealthy is False: the preflight checks of the scale down fail on the
    // Machines it keeps (scale.go preflightChecks excludes the one being removed; preflightCheckCondition's message).
    const noLeader = 'Etcd endpoint etcd-n3 reports errors: etcdserver: no leader';
    const lost = ms.map((m) => ({ ...m, etcdMemberHealthy: false, etcdMessage: noLeader }));
    expect(decideKcp({ replicas: 3, maxSurge: 0, initialized: true, machines: lost })).toEqual({
      type: 'blocked',
      operation: 'scaleDown',
      reason: 'PreflightFailed',
      machine: 'a',
      messages: [`Machine b reports EtcdMemberHealthy condition is false (Error, ${noLeader})`, `Machine c reports EtcdMemberHealthy condition is false (Error, ${noLeader})`],
    });
    expect(decideKcp({ replicas: 3, maxSurge: 0, initialized: false, machines: [] }).type).toBe('initialize');
    expect(decideKcp({ replicas: 3, maxSurge: 0, initialized: true, machines: [v('a', 1), v('b', 2, { hasNodeRef: false })] })).toMatchObject({ type: 'blocked', reason: 'PreflightFailed' });
    expect(decideKcp({ replicas: 1, maxSurge: 0, initialized: true, machines: [v('a', 1), v('b', 2, { deleting: true })] })).toMatchObject({ type: 'blocked', reason: 'WaitingForMachineDeletion' });
  });
});

describe('KCP determinism', () => {
  async function run(seed: number): Promise<string> {
    const w = await cpWorld(seed, 3, 0);
    await settled(w, 3);
    await patchKcp(w, { spec: { version: 'v1.30.5' } });
    await settled(w, 3, 'v1.30.5');
    return w.events.toJsonLines();
  }
  it('same seed → identical event log', async () => {
    const a = await run(77);
    expect(await run(77)).toBe(a);
    expect(await run(78)).not.toBe(a);
  });
});

describe('KubeadmControlPlane: certificate expiry (controller.go reconcileCertificateExpiries, KCP-1)', () => {
  const expiryOf = (w: World, m: Machine): string | undefined =>
    w.mgmt.getSync<KubeadmConfig>({ kind: 'KubeadmConfig', namespace: NS, name: m.spec.bootstrap.configRef!.name })?.metadata.annotations?.[ANNOTATION_CERTIFICATES_EXPIRY];
  const nodeCreated = (w: World, m: Machine): number => Date.parse(w.workloads.store(NS, CLUSTER).getSync<KubeObject>({ kind: 'Node', name: m.status!.nodeRef!.name })!.metadata.creationTimestamp!);
  const YEAR = 8760 * 3_600_000;

  it("a steady control plane's KubeadmConfigs get kubeadm's apiserver NotAfter (Node creation + 8760 h), copied to Machine.status.certificatesExpiryDate; not during a rollout; the replacements get their own", async () => {
    const w = await cpWorld(31, 3, 0);
    await settled(w, 3);
    await w.sim.advance(30_000);
    for (const m of cpMachines(w)) {
      const want = new Date(nodeCreated(w, m) + YEAR).toISOString().replace('.000Z', 'Z');
      expect(expiryOf(w, m), m.metadata.name).toBe(want);
      expect(m.status?.certificatesExpiryDate, m.metadata.name).toBe(want);
    }
    const old = new Set(cpMachines(w).map((m) => m.metadata.name));
    await upgrade(w);
    // During the rollout (machines outdated) no new Machine is annotated: upstream reaches that step only when steady.
    let annotatedMidRollout = 0;
    await settled(w, 3, 'v1.31.2', `${CLUSTER}-cp-template-v2`, 60 * MIN, () => {
      const k = kcp(w);
      if (k.status?.conditions?.find((c) => c.type === 'MachinesSpecUpToDate')?.status === 'False') {
        annotatedMidRollout += cpMachines(w).filter((m) => !old.has(m.metadata.name) && expiryOf(w, m) !== undefined).length;
      }
    });
    expect(annotatedMidRollout).toBe(0);
    await w.sim.advance(30_000);
    for (const m of cpMachines(w)) {
      expect(old.has(m.metadata.name)).toBe(false);
      expect(expiryOf(w, m), m.metadata.name).toBe(new Date(nodeCreated(w, m) + YEAR).toISOString().replace('.000Z', 'Z'));
      expect(m.status?.certificatesExpiryDate).toBe(expiryOf(w, m));
    }
  });
});

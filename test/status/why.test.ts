/**
 * "Why is it waiting?" (src/harness/status/why.ts): the reasons read from conditions,
 * named with their check names and SPEC rules; work in progress is not a
 * stall; a condition mirrored into Ready is listed once. The same reasons in
 * `hcs-testbed status`'s text and in the scenario runner's failure output.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/kube/types.js';
import { statusText } from '../../src/harness/cli/status.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import { preflightChecks, stallLines, whyWaiting } from '../../src/harness/status/why.js';

const obj = (kind: string, name: string, conditions: Record<string, string>[], status: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind, metadata: { name, namespace: 'cpaas-system' }, status: { ...status, conditions } }) as unknown as KubeObject;

// The message Cluster API writes for the two version-skew checks (machineset_preflight.go), as src/world/capi/machineset-preflight.ts does.
const SKEW =
  'MachineSet version (1.32.3) and ControlPlane version (1.31.6) do not conform to the kubernetes version skew policy as MachineSet version is higher than ControlPlane version ("KubernetesVersionSkew" preflight check failed); MachineSet version (1.32.3) and ControlPlane version (1.31.6) do not conform to kubeadm version skew policy as kubeadm only supports joining with the same major+minor version as the control plane ("KubeadmVersionSkew" preflight check failed)';

describe('whyWaiting', () => {
  it('MachineSet preflight: the check names and UPG-1/UPG-3, from MachinesCreated (not its Ready summary)', () => {
    const ms = obj('MachineSet', 'demo-md-0-abc', [
      { type: 'Ready', status: 'False', reason: 'PreflightCheckFailed', severity: 'Warning', message: '2/3 Machines ready' },
      { type: 'MachinesCreated', status: 'False', reason: 'PreflightCheckFailed', severity: 'Error', message: SKEW },
    ]);
    const s = whyWaiting({ MachineSet: [ms] });
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ kind: 'MachineSet', name: 'demo-md-0-abc', condition: 'MachinesCreated', category: 'preflight', checks: ['KubernetesVersionSkew', 'KubeadmVersionSkew'], rules: ['UPG-1', 'UPG-3'] });
    expect(stallLines(s)[0]).toContain('[KubernetesVersionSkew, KubeadmVersionSkew] (UPG-1 UPG-3)');
  });

  it('HCSMachine reasons: pool entry, stuck detach, image, quota; the hostname and the rule IDs the message names', () => {
    const hm = (name: string, reason: string, message: string) => obj('HCSMachine', name, [{ type: 'InstanceReady', status: 'False', reason, message, severity: 'Warning' }, { type: 'Ready', status: 'False', reason, message }], { hostname: `${name}-host` });
    const s = whyWaiting({
      HCSMachine: [
        hm('a', 'NoFreePoolEntry', 'no free config pool entry in HCSMachineConfigPool demo-worker-pool (POOL-2, POOL-3)'),
        hm('b', 'DiskDetachStuck', 'persistent disk detach … (DISK-9)'),
        hm('c', 'ImageNotFound', 'TPL-6: image "x" (spec.imageName) does not exist in HCS'),
        hm('d', 'QuotaExceeded', 'HCS refused to create server d: Ecs.0001 quota'),
      ],
    });
    expect(s.map((x) => [x.name, x.category, x.rules, x.hostname])).toEqual([
      ['a', 'pool', ['POOL-2', 'POOL-3'], 'a-host'],
      ['b', 'disk', ['DISK-9'], 'b-host'],
      ['c', 'image', ['TPL-6'], 'c-host'],
      ['d', 'quota', ['OPS-2'], 'd-host'],
    ]);
  });

  it('etcd quorum on the KubeadmControlPlane (KCP-5)', () => {
    const s = whyWaiting({ KubeadmControlPlane: [obj('KubeadmControlPlane', 'demo-control-plane', [{ type: 'EtcdClusterHealthy', status: 'False', reason: 'EtcdClusterUnhealthy', severity: 'Error', message: 'Following Machines are reporting etcd member errors: m1' }])] });
    expect(s.map((x) => [x.category, x.rules])).toEqual([['etcd', ['KCP-5']]]);
  });

  it('negative: progress (provisioning, detaching under its limit, scaling, a rollout, a MachineSet coming up) and True conditions are no stall', () => {
    const s = whyWaiting({
      HCSMachine: [obj('HCSMachine', 'p', [{ type: 'InstanceReady', status: 'False', reason: 'InstanceProvisioning', severity: 'Info' }, { type: 'InstanceReady', status: 'False', reason: 'DetachingDisks' }, { type: 'InstanceReady', status: 'False', reason: 'WaitingForOwner', severity: 'Warning' }, { type: 'PersistentDisksReady', status: 'False', reason: 'DisksAttaching', severity: 'Warning' }, { type: 'PersistentDisksReady', status: 'False', reason: 'DiskInUse', severity: 'Warning', message: 'DISK-9: persistent disk d is in-use on server s; waiting for it to be released' }])],
      MachineSet: [obj('MachineSet', 'ms', [{ type: 'Ready', status: 'False', reason: 'ScalingOrWaitingForNodes', severity: 'Warning', message: '2/3 Machines ready' }, { type: 'MachinesCreated', status: 'True' }])],
      KubeadmControlPlane: [obj('KubeadmControlPlane', 'k', [{ type: 'Resized', status: 'False', reason: 'ScalingUp', severity: 'Warning' }, { type: 'MachinesSpecUpToDate', status: 'False', reason: 'RollingUpdateInProgress', severity: 'Warning' }])],
      MachineDeployment: [obj('MachineDeployment', 'md', [{ type: 'Available', status: 'True' }])],
    });
    expect(s).toEqual([]);
  });

  it('a MachineSet held only while the control plane rolls (ControlPlaneIsStable) goes on by itself: no stall; held by the version skew checks it is', () => {
    const ms = (message: string) => whyWaiting({ MachineSet: [obj('MachineSet', 'demo-md-0-abc', [{ type: 'MachinesCreated', status: 'False', reason: 'PreflightCheckFailed', severity: 'Error', message }])] });
    expect(ms('KubeadmControlPlane cpaas-system/demo-control-plane is upgrading ("ControlPlaneIsStable" preflight check failed)')).toEqual([]);
    expect(ms(SKEW).map((x) => x.checks)).toEqual([['KubernetesVersionSkew', 'KubeadmVersionSkew']]);
    expect(ms(`${SKEW}; KubeadmControlPlane cpaas-system/demo-control-plane is upgrading ("ControlPlaneIsStable" preflight check failed)`)).toHaveLength(1);
  });

  it('KCP-5 only for etcd: a healthy control plane rollout (a new member without its Node, 2/3 members healthy while the third joins) is no stall; lost quorum or an etcd member error is', () => {
    const kcp = (conds: Record<string, string>[]) => whyWaiting({ KubeadmControlPlane: [obj('KubeadmControlPlane', 'demo-control-plane', conds)] });
    const wait = 'Waiting for control plane to pass preflight checks to continue reconciliation: Machine demo-control-plane-x does not have a corresponding Node yet (Machine.status.nodeRef not set)';
    expect(kcp([{ type: 'Resized', status: 'False', reason: 'PreflightChecksFailed', severity: 'Warning', message: wait }, { type: 'EtcdClusterHealthy', status: 'False', reason: 'EtcdClusterUnhealthy', severity: 'Warning', message: '2/3 etcd members healthy' }])).toEqual([]);
    expect(kcp([{ type: 'EtcdClusterHealthy', status: 'False', reason: 'EtcdClusterUnhealthy', severity: 'Warning', message: '1/3 etcd members healthy' }]).map((x) => [x.category, x.rules])).toEqual([['etcd', ['KCP-5']]]);
    const etcdDown = 'Waiting for control plane to pass preflight checks to continue reconciliation: Machine m1 reports EtcdMemberHealthy condition is false (Error, etcdserver: no leader)';
    const s = kcp([{ type: 'Resized', status: 'False', reason: 'PreflightChecksFailed', severity: 'Warning', message: etcdDown }]);
    expect(s.map((x) => [x.reason, x.rules])).toEqual([['PreflightChecksFailed', ['KCP-5']]]);
    expect(s[0]!.advice).toMatch(/restore etcd quorum/);
  });

  it('MD-3: a surge machine waiting for an entry of a pool with persistent disks is told maxSurge 0 with the reason, never to add an entry; "add an entry" only where no data can move', () => {
    const surgeMsg = 'no free config pool entry in HCSMachineConfigPool demo-worker-pool (3 entries, all bound to live machines); add an entry to the pool before scaling up (POOL-2, POOL-3). MD-3: MachineDeployment demo-md-0 rolls out with maxSurge 1 > 0 while the machines it replaces still hold pool entries demo-worker-1; this surge machine waits for a free entry. Use maxSurge: 0 with pool-managed persistent disks (remove first, then replace on the same hostname and disks, MD-2/KCP-1)';
    const hm = (message: string) => ({ ...obj('HCSMachine', 'demo-md-0-new-abcde', [{ type: 'PoolEntryBound', status: 'False', reason: 'NoFreePoolEntry', severity: 'Warning', message }]), spec: { configPoolRef: { name: 'demo-worker-pool' } } }) as unknown as KubeObject;
    const machine = { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', metadata: { name: 'demo-md-0-new-abcde', namespace: 'cpaas-system', labels: { 'cluster.x-k8s.io/deployment-name': 'demo-md-0' } } } as KubeObject;
    const pool = (persistent: boolean) => ({ apiVersion: 'v1', kind: 'HCSMachineConfigPool', metadata: { name: 'demo-worker-pool', namespace: 'cpaas-system' }, spec: { configs: [{ hostname: 'demo-worker-1', persistentDisks: persistent ? [{ slot: 0 }] : [] }] } }) as unknown as KubeObject;
    const [persistent] = whyWaiting({ HCSMachine: [hm(surgeMsg)], Machine: [machine], HCSMachineConfigPool: [pool(true)] });
    expect(persistent!.rules).toEqual(['POOL-2', 'POOL-3', 'MD-3', 'MD-2', 'KCP-1']);
    expect(persistent!.summary).toMatch(/surge machine waits for a free pool entry; maxSurge must be 0 .*MD-3/);
    expect(persistent!.advice).toMatch(/^Fix: set maxSurge 0 on MachineDeployment demo-md-0: kubectl patch machinedeployment demo-md-0 -n cpaas-system --type merge -p '\{"spec":\{"strategy":\{"rollingUpdate":\{"maxSurge":0,"maxUnavailable":1\}\}\}\}'\. Why: .*persistent disks.*\(MD-3\)/);
    expect(persistent!.advice).not.toMatch(/Fix: add an entry/);
    expect(stallLines([persistent!])[1]).toMatch(/^ {4}→ Fix: set maxSurge 0/);
    const [ephemeral] = whyWaiting({ HCSMachine: [hm(surgeMsg)], Machine: [machine], HCSMachineConfigPool: [pool(false)] });
    expect(ephemeral!.advice).toMatch(/^Fix: add an entry to demo-worker-pool \(POOL-3\), or set maxSurge 0\./);
    const [scaleUp] = whyWaiting({ HCSMachine: [hm('no free config pool entry in HCSMachineConfigPool demo-worker-pool (3 entries, all bound to live machines); add an entry to the pool before scaling up (POOL-2, POOL-3)')], Machine: [machine], HCSMachineConfigPool: [pool(true)] });
    expect(scaleUp!.advice).toMatch(/^Fix: add an entry to demo-worker-pool first, then raise replicas \(POOL-3\)/);
  });

  it('an unknown reason counts only with severity Warning or Error', () => {
    expect(whyWaiting({ Cluster: [obj('Cluster', 'c', [{ type: 'X', status: 'False', reason: 'Odd', severity: 'Info' }])] })).toEqual([]);
    expect(whyWaiting({ Cluster: [obj('Cluster', 'c', [{ type: 'X', status: 'False', reason: 'Odd', severity: 'Error', message: 'see NET-3' }])] })).toMatchObject([{ category: 'other', rules: ['NET-3'] }]);
  });

  it('preflightChecks reads the names out of the message', () => {
    expect(preflightChecks(SKEW)).toEqual(['KubernetesVersionSkew', 'KubeadmVersionSkew']);
    expect(preflightChecks('KubeadmControlPlane cpaas-system/demo is upgrading ("ControlPlaneIsStable" preflight check failed)')).toEqual(['ControlPlaneIsStable']);
    expect(preflightChecks('nothing here')).toEqual([]);
  });
});

describe('hcs-testbed status text', () => {
  it('every hostname with its machine (free / disk kept marked), then the stalls', () => {
    const ms = obj('MachineSet', 'demo-md-0-abc', [{ type: 'MachinesCreated', status: 'False', reason: 'PreflightCheckFailed', severity: 'Error', message: SKEW }]);
    const text = statusText({
      time: { iso: '2026-01-01T00:00:00.000Z', paused: true, speed: 10 },
      hosts: [
        { pool: 'demo-worker-pool', role: 'workers', hostname: 'demo-worker-1', ip: '192.168.10.11', status: 'serving', machine: 'demo-md-0-abc-xyz', phase: 'Running', version: 'v1.31.6', disks: [{ slot: 0, state: 'in-use', volume: 'demo-demo-worker-1-pd0', server: 'demo-md-0-abc-xyz' }] },
        { pool: 'demo-worker-pool', role: 'workers', hostname: 'demo-worker-2', ip: '192.168.10.12', status: 'kept', machine: '', phase: '', version: '', disks: [{ slot: 0, state: 'available', volume: 'demo-demo-worker-2-pd0' }] },
        { pool: 'demo-worker-pool', role: 'workers', hostname: 'demo-worker-3', ip: '192.168.10.13', status: 'free', machine: '', phase: '', version: '', disks: [] },
      ],
      why: whyWaiting({ MachineSet: [ms] }),
    });
    expect(text).toContain('virtual time 2026-01-01T00:00:00.000Z: paused');
    expect(text).toMatch(/^ {2}demo-worker-1\s+192\.168\.10\.11\s+demo-md-0-abc-xyz\s+Running\s+v1\.31\.6\s+pd0 demo-demo-worker-1-pd0 in-use on demo-md-0-abc-xyz$/m);
    expect(text).toMatch(/^ {2}demo-worker-2\s+192\.168\.10\.12\s+\(free, disk kept\)\s+-\s+-\s+pd0 demo-demo-worker-2-pd0 available$/m);
    expect(text).toMatch(/^ {2}demo-worker-3\s+192\.168\.10\.13\s+\(free\)\s+-\s+-\s+-$/m);
    expect(text).toMatch(/^why is it waiting\?\n {2}MachineSet cpaas-system\/demo-md-0-abc: .*\[KubernetesVersionSkew, KubeadmVersionSkew\] \(UPG-1 UPG-3\)$/m);
  });
});

describe('the scenario runner\'s failure output', () => {
  it('a wait that cannot pass lists the stall first: NoFreePoolEntry with its hostname-less machine and POOL-2', async () => {
    const r = await runScenario(loadScenario('test/status/fixtures/stalled-scale-out.yaml'), embeddedTestbedFactory());
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    const at = failed.detail.indexOf('why is it waiting (conditions):');
    expect(at, failed.detail.join('\n')).toBeGreaterThanOrEqual(0);
    // Before the other explanations (Warning events, all non-True conditions, the cloud).
    expect(failed.detail.indexOf('cloud at the failure:')).toBeGreaterThan(at);
    const section = failed.detail.slice(at + 1);
    expect(section.slice(0, section.findIndex((l) => !l.startsWith('  '))), failed.detail.join('\n')).toHaveLength(2); // the one stall and its advice; no WaitingFor… noise
    expect(failed.detail[at + 1]).toMatch(/^ {2}HCSMachine cpaas-system\/demo-md-0-\S+: .*no free pool entry.* — (PoolEntryBound|InstanceReady|Ready)=False NoFreePoolEntry \(POOL-2/);
    // A scale up (no rollout): adding an entry moves no data, so that is the advice (POOL-3).
    expect(failed.detail[at + 2]).toMatch(/^ {4}→ Fix: add an entry to demo-worker-pool first, then raise replicas \(POOL-3\)/);
  }, 120_000);
});

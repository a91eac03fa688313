/**
 * The CRDs on a real kube-apiserver: accepted, established, structural; the
 * scenario library's manifests validate without pruning (fieldValidation
 * Strict, dry run); and every admission rule (src/admission: CEL rules in
 * the CRDs, x-kubernetes-validations in src/product/api/crds/definitions.ts, and the
 * rest through the testbed's admission webhook, src/harness/realcluster/apiserver/webhook.ts)
 * rejects the same objects as the embedded store's admission, with the same
 * reason and the same (SPEC rule, field) causes; defaulting gives the same
 * object.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRDS } from '../../src/product/api/crds/index.js';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import type { KubeClient } from '../../src/core/kube/client.js';
import { KubeApiError } from '../../src/core/kube/errors.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { loadManifestPath } from '../../src/harness/manifests/index.js';
import { installCrds, loadKubeconfig } from '../../src/harness/realcluster/apiserver/crds.js';
import { contractStore } from '../kube/contract.js';
import { realCluster, skipReason, suiteSuffix } from './env.js';
import { SCALE_KINDS } from '../../src/world/facade/scale.js';

const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

const NS = 'cel';
const REPO = join(import.meta.dirname, '..', '..');

const pool = (name: string, configs: unknown[]): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'HCSMachineConfigPool',
  metadata: { name, namespace: NS },
  spec: { configs },
});
const disk = (slot: number) => ({ slot, size: 10, type: 'SSD', mountPath: `/data${slot}`, format: 'xfs' });
const entry = (networks: unknown[], persistentDisks?: unknown[]) => ({ hostname: 'w1', networks, ...(persistentDisks ? { persistentDisks } : {}) });
const template = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'HCSMachineTemplate',
  metadata: { name, namespace: NS },
  spec: { template: { spec: { imageName: 'i', flavorName: 'f', availabilityZone: 'az1', ...extra } } },
});
const md = (name: string, rollingUpdate: Record<string, unknown>): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'MachineDeployment',
  metadata: { name, namespace: NS },
  spec: { clusterName: 'demo', replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate }, template: { spec: { clusterName: 'demo', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { name: 't' } } } },
});
const IP = '192.168.32.10';
const NET = [{ subnetName: 's', ipAddress: IP }];
const machine = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'HCSMachine',
  metadata: { name, namespace: NS },
  spec,
});
const kcp = (name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
  kind: 'KubeadmControlPlane',
  metadata: { name, namespace: NS },
  spec: { replicas: 3, version: 'v1.30.4', machineTemplate: { infrastructureRef: { kind: 'HCSMachineTemplate', name: 'cp' } }, kubeadmConfigSpec: {}, ...spec },
});

/** [name, object, expected rule and field (undefined: accepted)] */
const CASES: [string, KubeObject, { rule: string; field: string } | undefined][] = [
  ['valid pool', pool('ok', [entry([{ subnetName: 's', ipAddress: IP }], [disk(0), disk(1)])]), undefined],
  ['legacy subenetName alone', pool('legacy', [entry([{ subenetName: 's', ipAddress: IP }])]), undefined],
  ['NET-1 both selectors', pool('net1', [entry([{ subnetName: 's', subnetId: 'id', ipAddress: IP }])]), { rule: 'NET-1', field: 'spec.configs[0].networks[0].subnetId' }],
  ['NET-1 no selector', pool('net1b', [entry([{ ipAddress: IP }])]), { rule: 'NET-1', field: 'spec.configs[0].networks[0]' }],
  ['NET-2 subenetName != subnetName', pool('net2', [entry([{ subnetName: 's', subenetName: 't', ipAddress: IP }])]), { rule: 'NET-2', field: 'spec.configs[0].networks[0].subnetName' }],
  ['NET-3 subenetName + subnetId', pool('net3', [entry([{ subenetName: 's', subnetId: 'id', ipAddress: IP }])]), { rule: 'NET-3', field: 'spec.configs[0].networks[0].subnetId' }],
  ['DISK-2 duplicate slot', pool('disk2', [entry([{ subnetName: 's', ipAddress: IP }], [disk(0), disk(0)])]), { rule: 'DISK-2', field: 'spec.configs[0].persistentDisks' }],
  ['DISK-2 gap', pool('disk2b', [entry([{ subnetName: 's', ipAddress: IP }], [disk(0), disk(2)])]), { rule: 'DISK-2', field: 'spec.configs[0].persistentDisks' }],
  ['valid template', template('ok'), undefined],
  ['TPL-4 serverId in a template', template('tpl4', { serverId: 'abc' }), { rule: 'TPL-4', field: 'spec.template.spec.serverId' }],
  ['TPL-4 providerID in a template', template('tpl4b', { providerID: 'hcs://x/y' }), { rule: 'TPL-4', field: 'spec.template.spec.providerID' }],
  ['empty providerID in a template', template('tplempty', { providerID: '' }), undefined],
  ['valid MD strategy', md('ok', { maxSurge: 0, maxUnavailable: 1 }), undefined],
  ['valid MD percentages', md('pct', { maxSurge: '25%', maxUnavailable: '0%' }), undefined],
  ['MD-1 both zero', md('zero', { maxSurge: 0, maxUnavailable: 0 }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate' }],
  ['MD-1 both zero as percentages', md('zeros', { maxSurge: '0%', maxUnavailable: '0%' }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate' }],
  // intstr.GetScaledValueFromIntOrPercent, as cluster-api v1.10's webhook applies it: a string must be a percentage.
  ['MD-1 a bare-digit string is not an integer', md('digits', { maxSurge: '1' }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate.maxSurge' }],
  ['MD-1 maxSurge 0, maxUnavailable defaulted to 0', md('zerodef', { maxSurge: 0 }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate' }],
  ['MD-1 not a number or percentage', md('bad', { maxSurge: 'lots' }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate.maxSurge' }],
  // Not in CEL: enforced on the real apiserver by the admission webhook.
  ['POOL-1 duplicate hostname', pool('pool1', [entry(NET), entry(NET)]), { rule: 'POOL-1', field: 'spec.configs[1].hostname' }],
  ['POOL-1 hostname not RFC 1123', pool('pool1b', [{ hostname: 'Worker_1', networks: NET }]), { rule: 'POOL-1', field: 'spec.configs[0].hostname' }],
  ['POOL-1 entry without networks', pool('pool1c', [{ hostname: 'w1' }]), { rule: 'POOL-1', field: 'spec.configs[0].networks' }],
  ['NET-6 per-NIC gateway', pool('net6', [entry([{ subnetName: 's', ipAddress: IP, gateway: '192.168.32.1' }])]), { rule: 'NET-6', field: 'spec.configs[0].networks[0].gateway' }],
  ['NET-7 no static IP', pool('net7', [entry([{ subnetName: 's' }])]), { rule: 'NET-7', field: 'spec.configs[0].networks[0].ipAddress' }],
  ['NET-7 not an IPv4 address', pool('net7b', [entry([{ subnetName: 's', ipAddress: '192.168.32.300' }])]), { rule: 'NET-7', field: 'spec.configs[0].networks[0].ipAddress' }],
  ['DISK-1 disk without size', pool('disk1', [entry(NET, [{ slot: 0, type: 'SSD', mountPath: '/data0', format: 'xfs' }])]), { rule: 'DISK-1', field: 'spec.configs[0].persistentDisks[0].size' }],
  ['DISK-1 relative mountPath', pool('disk1b', [entry(NET, [{ ...disk(0), mountPath: 'data' }])]), { rule: 'DISK-1', field: 'spec.configs[0].persistentDisks[0].mountPath' }],
  ['TPL-1 template without imageName', template('tpl1', { imageName: '' }), { rule: 'TPL-1', field: 'spec.template.spec.imageName' }],
  ['TPL-3 template data volume without format', template('tpl3', { dataVolumes: [{ size: 10, type: 'SSD', mountPath: '/scratch' }] }), { rule: 'TPL-3', field: 'spec.template.spec.dataVolumes[0].format' }],
  ['valid HCSMachine', machine('ok', { imageName: 'i', flavorName: 'f', availabilityZone: 'az1' }), undefined],
  ['TPL-1 HCSMachine without flavorName', machine('m-tpl1', { imageName: 'i', availabilityZone: 'az1' }), { rule: 'TPL-1', field: 'spec.flavorName' }],
  ['TPL-3 HCSMachine data volume without size', machine('m-tpl3', { imageName: 'i', flavorName: 'f', availabilityZone: 'az1', dataVolumes: [{ type: 'SSD', mountPath: '/s', format: 'ext4' }] }), { rule: 'TPL-3', field: 'spec.dataVolumes[0].size' }],
  ['valid KubeadmControlPlane', kcp('ok'), undefined],
  ['valid KubeadmControlPlane, maxSurge 0 with 3 replicas', kcp('ms0', { rolloutStrategy: { rollingUpdate: { maxSurge: 0 } } }), undefined],
  ['KCP-1 maxSurge 2', kcp('kcp1', { rolloutStrategy: { rollingUpdate: { maxSurge: 2 } } }), { rule: 'KCP-1', field: 'spec.rolloutStrategy.rollingUpdate.maxSurge' }],
  ['KCP-1 maxSurge 0 with 1 replica', kcp('kcp1b', { replicas: 1, rolloutStrategy: { rollingUpdate: { maxSurge: 0 } } }), { rule: 'KCP-1', field: 'spec.rolloutStrategy.rollingUpdate.maxSurge' }],
  ['KCP-2 infrastructureRef without name', kcp('kcp2', { machineTemplate: { infrastructureRef: { kind: 'HCSMachineTemplate' } } }), { rule: 'KCP-2', field: 'spec.machineTemplate.infrastructureRef' }],
];

/** UPDATE cases: [name, object created, status written after creation, the edit, expected rule and field]. */
const UPDATE_CASES: [string, KubeObject, Record<string, unknown> | undefined, (o: KubeObject) => void, { rule: string; field: string } | undefined][] = [
  [
    'DISK-4 accepted disk resized',
    pool('disk4', [entry(NET, [disk(0)])]),
    { entries: [{ hostname: 'w1', machine: 'm1', acceptedDisks: [disk(0)] }] },
    (o) => ((o.spec as { configs: { persistentDisks: { size: number }[] }[] }).configs[0]!.persistentDisks[0]!.size = 20),
    { rule: 'DISK-4', field: 'spec.configs[0].persistentDisks[0].size' },
  ],
  [
    'DISK-4 accepted disk removed',
    pool('disk4b', [entry(NET, [disk(0), disk(1)])]),
    { entries: [{ hostname: 'w1', machine: 'm1', acceptedDisks: [disk(0), disk(1)] }] },
    (o) => (o.spec as { configs: { persistentDisks: unknown[] }[] }).configs[0]!.persistentDisks.pop(),
    { rule: 'DISK-4', field: 'spec.configs[0].persistentDisks' },
  ],
  [
    'accepted disk: mountOptions may change',
    pool('disk4ok', [entry(NET, [disk(0)])]),
    { entries: [{ hostname: 'w1', machine: 'm1', acceptedDisks: [disk(0)] }] },
    (o) => ((o.spec as { configs: { persistentDisks: Record<string, unknown>[] }[] }).configs[0]!.persistentDisks[0]!.mountOptions = ['noatime']),
    undefined,
  ],
  [
    'TPL-5 template spec edited in place',
    template('tpl5'),
    undefined,
    (o) => ((o.spec as { template: { spec: { imageName: string } } }).template.spec.imageName = 'i2'),
    { rule: 'TPL-5', field: 'spec.template.spec' },
  ],
  ['template labels may change', template('tpl5ok'), undefined, (o) => (o.metadata.labels = { a: 'b' }), undefined],
  ['UPG-3 minor version skipped', kcp('upg3'), undefined, (o) => ((o.spec as { version: string }).version = 'v1.32.0'), { rule: 'UPG-3', field: 'spec.version' }],
  ['KubeadmControlPlane one minor up', kcp('upg3ok'), undefined, (o) => ((o.spec as { version: string }).version = 'v1.31.0'), undefined],
];

async function outcome(c: KubeClient, o: KubeObject): Promise<KubeApiError | undefined> {
  try {
    await c.create(structuredClone(o), { dryRun: true });
    return undefined;
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
}

/** Create `o` (then write `status`), apply `edit` to what came back and update it (dry run). */
async function updateOutcome(c: KubeClient, o: KubeObject, status: Record<string, unknown> | undefined, edit: (o: KubeObject) => void): Promise<KubeApiError | undefined> {
  let cur = await c.create(structuredClone(o));
  if (status) cur = await c.updateStatus({ ...cur, status: structuredClone(status) });
  const next = structuredClone(cur);
  edit(next);
  try {
    await c.update(next, { dryRun: true });
    return undefined;
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
}

/** The (rule, field) pairs of a rejection, sorted. */
const ruleFields = (e: KubeApiError): string[] => e.causes.map((c) => `${c.rule ?? '-'} ${c.field}`).sort();

function expectSameVerdict(embedded: KubeApiError | undefined, remote: KubeApiError | undefined, want: { rule: string; field: string } | undefined): void {
  if (!want) {
    expect(embedded?.message).toBeUndefined();
    expect(remote?.message).toBeUndefined();
    return;
  }
  for (const [side, e] of [['embedded', embedded], ['real', remote]] as const) {
    expect(e, `${side} should reject`).toBeInstanceOf(KubeApiError);
    expect([e!.reason, e!.code], side).toEqual(['Invalid', 422]);
    expect(e!.message, side).toContain(want.rule);
    expect(e!.causes, `${side}: ${e!.message}`).toContainEqual(expect.objectContaining({ rule: want.rule, field: want.field }));
  }
  expect(ruleFields(remote!), remote!.message).toEqual(ruleFields(embedded!));
}

function manifestFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? manifestFiles(p) : /\.ya?ml$/.test(f) ? [p] : [];
  });
}

describe.skipIf(!!skipReason)(`CRDs on a real kube-apiserver${suiteSuffix}`, () => {
  let real: ClientNodeKube;
  beforeAll(async () => {
    const cp = await realCluster([NS, 'cpaas-system']);
    real = ClientNodeKube.fromKubeconfig(cp.kubeconfigPath);
  }, 120_000);

  it('are accepted, established and structural (install is idempotent); the CEL rules are kept', async () => {
    const cp = await realCluster();
    const stored = await installCrds(loadKubeconfig(cp.kubeconfigPath)); // second install: replaces
    expect(stored.map((c) => c.spec.names.kind).sort()).toEqual(CRDS.map((c) => c.spec.names.kind).sort());
    for (const c of stored) {
      const types = (c.status?.conditions ?? []).filter((x) => x.status === 'True').map((x) => x.type);
      expect(types, c.metadata.name).toEqual(expect.arrayContaining(['Established', 'NamesAccepted']));
      expect(types, c.metadata.name).not.toContain('NonStructuralSchema');
    }
    const pools = stored.find((c) => c.spec.names.kind === 'HCSMachineConfigPool')!;
    expect(JSON.stringify(pools.spec.versions[0]!.schema.openAPIV3Schema)).toContain('DISK-2');
  });

  it("the scenario library's manifests are accepted without pruning (fieldValidation=Strict, dry run)", async () => {
    const files = manifestFiles(join(REPO, 'scenarios', 'manifests'));
    expect(files.length).toBeGreaterThan(10);
    const problems: string[] = [];
    let checked = 0;
    for (const f of files) {
      let manifests;
      try {
        manifests = loadManifestPath(f);
      } catch {
        continue; // deliberately broken inputs of the invalid-manifest scenarios
      }
      for (const m of manifests) {
        if (!CRDS.some((c) => c.spec.names.kind === m.obj.kind)) continue;
        const obj = { ...structuredClone(m.obj), metadata: { ...m.obj.metadata, namespace: 'cpaas-system' } };
        const embedded = await outcome(contractStore(), obj);
        const warnings: string[] = [];
        let e: unknown;
        try {
          await real.create(obj, { dryRun: true, fieldValidation: 'Warn', warnings });
        } catch (x) {
          e = x;
        }
        checked++;
        if (warnings.length) problems.push(`${f}: ${m.obj.kind}/${m.obj.metadata.name}: pruned: ${warnings.join('; ')}`);
        if (e && !embedded) problems.push(`${f}: ${m.obj.kind}/${m.obj.metadata.name}: real apiserver rejects what the embedded store accepts: ${(e as Error).message}`);
        if (!e && embedded) problems.push(`${f}: ${m.obj.kind}/${m.obj.metadata.name}: real apiserver accepts what the embedded store rejects: ${embedded.message}`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(problems).toEqual([]);
  });

  it.each(CASES)('%s: same verdict and rule on the embedded store and the real apiserver', async (_name, obj, want) => {
    expectSameVerdict(await outcome(contractStore(), obj), await outcome(real, obj), want);
  });

  it.each(UPDATE_CASES)('update, %s: same verdict and rule on the embedded store and the real apiserver', async (_name, obj, status, edit, want) => {
    try {
      expectSameVerdict(await updateOutcome(contractStore(), obj, status, edit), await updateOutcome(real, obj, status, edit), want);
    } finally {
      await real.delete({ kind: obj.kind, namespace: NS, name: obj.metadata.name }, { ignoreNotFound: true });
    }
  });

  it.skipIf(!existsSync(KUBECTL))('the real kubectl scales a MachineDeployment through /scale, as with Cluster API v1.10.10\'s CRDs (issue 32)', async () => {
    const cp = await realCluster();
    const kubectl = (...args: string[]): string => execFileSync(KUBECTL, ['--kubeconfig', cp.kubeconfigPath, '-n', NS, ...args], { encoding: 'utf8', timeout: 30_000 });
    await real.create(md('scaled', { maxSurge: 0, maxUnavailable: 1 }));
    try {
      const scale = JSON.parse(kubectl('get', '--raw', `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}/machinedeployments/scaled/scale`)) as { kind: string; spec: { replicas: number } };
      expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 1 } });
      expect(kubectl('scale', 'machinedeployment', 'scaled', '--replicas=4')).toContain('scaled');
      expect(kubectl('get', 'machinedeployment', 'scaled', '-o', 'jsonpath={.spec.replicas}')).toBe('4');
      for (const c of CRDS) {
        const served = c.spec.versions.find((v) => v.storage)!.subresources?.scale;
        expect(!!served, `${c.spec.names.kind}: /scale on the real apiserver exactly where the facade serves it`).toBe(SCALE_KINDS.has(c.spec.names.kind));
      }
    } finally {
      await real.delete({ kind: 'MachineDeployment', namespace: NS, name: 'scaled' }, { ignoreNotFound: true });
    }
  });

  it('MD-1 defaulting: a MachineDeployment without a strategy comes back with the same defaults', async () => {
    const obj = md('defaulted', {});
    delete (obj.spec as { strategy?: unknown }).strategy;
    const embedded = await contractStore().create(structuredClone(obj), { dryRun: true });
    const remote = await real.create(structuredClone(obj), { dryRun: true });
    expect((embedded.spec as { strategy: unknown }).strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    expect(remote.spec).toEqual(embedded.spec);
    // Only what the defaulter sets is added: a given maxUnavailable stays.
    const partial = md('partial', { maxUnavailable: 2 });
    const p = await real.create(structuredClone(partial), { dryRun: true });
    expect((p.spec as { strategy: unknown }).strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 2 } });
  });
});

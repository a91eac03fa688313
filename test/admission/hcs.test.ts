import { describe, expect, it } from 'vitest';
import { installAdmission } from '../../src/world/admission.js';
import { KubeApiError, type KubeObject } from '../../src/core/kube/index.js';
import { createEmbeddedEnv } from '../../src/world/embedded.js';

const disk = { slot: 0, size: 100, type: 'SSD', mountPath: '/var/cpaas', format: 'xfs' };
const pool = (configs: unknown[]): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'HCSMachineConfigPool',
  metadata: { name: 'p', namespace: 'cpaas-system' },
  spec: { configs },
});
const entry = (over: Record<string, unknown> = {}, net: Record<string, unknown> = {}): Record<string, unknown> => ({
  hostname: 'w1',
  networks: [{ subnetName: 'worker-subnet', ipAddress: '192.168.10.11', ...net }],
  persistentDisks: [disk],
  ...over,
});
const template = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'HCSMachineTemplate',
  metadata: { name: 't', namespace: 'cpaas-system' },
  spec: { template: { spec: { imageName: 'img', flavorName: 'f', availabilityZone: 'az1', ...spec } } },
});

async function reject(obj: KubeObject): Promise<KubeApiError> {
  const env = createEmbeddedEnv({ seed: 1 });
  installAdmission(env.mgmt);
  const e = await env.mgmt.create(obj).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, 'expected a rejection').toBeInstanceOf(KubeApiError);
  expect(await env.mgmt.list(obj.kind)).toEqual([]); // nothing changed
  return e as KubeApiError;
}

describe('admission of HCS resources (each rejection names the field and the rule)', () => {
  const cases: [string, KubeObject, string, string][] = [
    ['NET-1: subnetName and subnetId both set', pool([entry({}, { subnetId: 'abc' })]), 'NET-1', 'spec.configs[0].networks[0].subnetId'],
    ['NET-1: no subnet selector', pool([entry({}, { subnetName: undefined })]), 'NET-1', 'spec.configs[0].networks[0]'],
    ['NET-2: legacy subenetName differs from subnetName', pool([entry({}, { subenetName: 'old-subnet' })]), 'NET-2', 'spec.configs[0].networks[0].subnetName'],
    ['NET-3: subenetName with a subnetId', pool([entry({}, { subnetName: undefined, subenetName: 'worker-subnet', subnetId: 'x' })]), 'NET-3', 'spec.configs[0].networks[0].subnetId'],
    ['NET-6: per-NIC gateway is not supported', pool([entry({}, { gateway: '192.168.10.1' })]), 'NET-6', 'spec.configs[0].networks[0].gateway'],
    ['NET-7: malformed static IP', pool([entry({}, { ipAddress: '192.168.10.300' })]), 'NET-7', 'spec.configs[0].networks[0].ipAddress'],
    ['DISK-1: missing mountPath', pool([entry({ persistentDisks: [{ ...disk, mountPath: undefined }] })]), 'DISK-1', 'spec.configs[0].persistentDisks[0].mountPath'],
    ['DISK-2: duplicate slot', pool([entry({ persistentDisks: [disk, { ...disk, mountPath: '/data' }] })]), 'DISK-2', 'spec.configs[0].persistentDisks'],
    ['DISK-2: slots not contiguous from 0', pool([entry({ persistentDisks: [{ ...disk, slot: 1 }] })]), 'DISK-2', 'spec.configs[0].persistentDisks'],
    ['POOL-1: duplicate hostname', pool([entry(), entry({}, { ipAddress: '192.168.10.12' })]), 'POOL-1', 'spec.configs[1].hostname'],
    ['TPL-4: providerID left in a copied template', template({ providerID: 'hcs://demo/m-1' }), 'TPL-4', 'spec.template.spec.providerID'],
    ['TPL-4: serverId left in a copied template', template({ serverId: 'abc' }), 'TPL-4', 'spec.template.spec.serverId'],
    ['TPL-3: dataVolumes entry without format', template({ dataVolumes: [{ size: 20, type: 'SSD', mountPath: '/var/lib/kubelet' }] }), 'TPL-3', 'spec.template.spec.dataVolumes[0].format'],
    ['TPL-1: imageName missing', template({ imageName: undefined }), 'TPL-1', 'spec.template.spec.imageName'],
  ];
  it.each(cases)('%s', async (_title, obj, rule, field) => {
    const e = await reject(obj);
    expect(e.reason).toBe('Invalid');
    expect(e.causes.some((c) => c.rule === rule && c.field === field), JSON.stringify(e.causes)).toBe(true);
    expect(e.message).toContain(`${field}: ${rule}:`);
  });

  it('accepts the documents\' manifests', async () => {
    const env = createEmbeddedEnv({ seed: 1 });
    installAdmission(env.mgmt);
    await env.mgmt.create(pool([entry(), entry({ hostname: 'w2' }, { ipAddress: '192.168.10.12' }), entry({ hostname: 'w3' }, { subnetName: undefined, subenetName: 'worker-subnet', ipAddress: '192.168.10.13' })]));
    await env.mgmt.create(template({ rootVolume: { type: 'SSD', size: 100 }, dataVolumes: [{ size: 20, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' }] }));
    expect(await env.mgmt.count('HCSMachineConfigPool')).toBe(1);
  });

  it('DISK-4: accepted persistent disks are immutable, mountOptions may change (DISK-5)', async () => {
    const env = createEmbeddedEnv({ seed: 1 });
    installAdmission(env.mgmt);
    const p = await env.mgmt.create(pool([entry()]));
    const withStatus = await env.mgmt.updateStatus({ ...p, status: { entries: [{ hostname: 'w1', machine: 'm1', acceptedDisks: [disk] }] } });
    const changed = structuredClone(withStatus) as KubeObject & { spec: { configs: { persistentDisks: Record<string, unknown>[] }[] } };
    changed.spec.configs[0]!.persistentDisks[0]!.size = 200;
    const e = (await env.mgmt.update(changed).catch((x: unknown) => x)) as KubeApiError;
    expect(e).toBeInstanceOf(KubeApiError);
    expect(e.message).toContain('spec.configs[0].persistentDisks[0].size: DISK-4:');
    const opts = structuredClone(withStatus) as typeof changed;
    opts.spec.configs[0]!.persistentDisks[0]!.mountOptions = ['noatime'];
    await expect(env.mgmt.update(opts)).resolves.toBeDefined();
  });

  it('TPL-5: a template is not edited in place', async () => {
    const env = createEmbeddedEnv({ seed: 1 });
    installAdmission(env.mgmt);
    const t = await env.mgmt.create(template({}));
    const edited = structuredClone(t) as KubeObject & { spec: { template: { spec: Record<string, unknown> } } };
    edited.spec.template.spec.imageName = 'other';
    await expect(env.mgmt.update(edited)).rejects.toThrow(/TPL-5/);
  });
});

describe('admission of Cluster API resources', () => {
  const md = (strategy: unknown): KubeObject => ({
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachineDeployment',
    metadata: { name: 'md', namespace: 'cpaas-system' },
    spec: { clusterName: 'c', replicas: 3, template: { spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { name: 't' } } }, ...(strategy ? { strategy } : {}) },
  });
  const kcp = (replicas: number, maxSurge: number, version = 'v1.31.6'): KubeObject => ({
    apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
    kind: 'KubeadmControlPlane',
    metadata: { name: 'kcp', namespace: 'cpaas-system' },
    spec: { replicas, version, machineTemplate: { infrastructureRef: { name: 'cp' } }, kubeadmConfigSpec: {}, rolloutStrategy: { rollingUpdate: { maxSurge } } },
  });

  it('MD-1: defaults the strategy to RollingUpdate maxSurge 1 / maxUnavailable 0', async () => {
    const env = createEmbeddedEnv({ seed: 1 });
    installAdmission(env.mgmt);
    const o = await env.mgmt.create(md(undefined));
    expect((o.spec as { strategy: unknown }).strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  });

  it('MD-1: maxSurge and maxUnavailable both zero is rejected; bad values name the field', async () => {
    const e = await reject(md({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } }));
    expect(e.message).toContain('spec.strategy.rollingUpdate: MD-1: Invalid value: maxSurge and maxUnavailable cannot both be zero');
    const f = await reject(md({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 'ten', maxUnavailable: 1 } }));
    expect(f.causes[0]).toMatchObject({ field: 'spec.strategy.rollingUpdate.maxSurge', rule: 'MD-1' });
  });

  it('KCP-1: maxSurge only 0 or 1, and 0 needs at least 3 replicas', async () => {
    expect((await reject(kcp(3, 2))).causes[0]).toMatchObject({ field: 'spec.rolloutStrategy.rollingUpdate.maxSurge', rule: 'KCP-1' });
    expect((await reject(kcp(1, 0))).message).toContain('maxSurge 0 needs at least 3 replicas');
  });

  it('UPG-3: a Kubernetes minor version cannot be skipped in one step', async () => {
    const env = createEmbeddedEnv({ seed: 1 });
    installAdmission(env.mgmt);
    const o = await env.mgmt.create(kcp(3, 0, 'v1.30.10'));
    const e = (await env.mgmt.update({ ...o, spec: { ...(o.spec as object), version: 'v1.32.3' } }).catch((x: unknown) => x)) as KubeApiError;
    expect(e).toBeInstanceOf(KubeApiError);
    expect(e.message).toContain('spec.version: UPG-3:');
    await expect(env.mgmt.update({ ...o, spec: { ...(o.spec as object), version: 'v1.31.6' } })).resolves.toBeDefined();
  });
});

/**
 * The CRDs on a real kube-apiserver: accepted, established, structural; the
 * scenario library's manifests validate without pruning (fieldValidation
 * Strict, dry run); and the admission rules expressible in CEL
 * (x-kubernetes-validations in src/kube/crds/definitions.ts) reject the same
 * objects as the embedded store's admission, naming the same SPEC rule.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRDS } from '../../src/kube/crds/index.js';
import { ClientNodeKube } from '../../src/kube/client-node.js';
import type { KubeClient } from '../../src/kube/client.js';
import { KubeApiError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/types.js';
import { loadManifestPath } from '../../src/manifests/index.js';
import { installCrds, loadKubeconfig } from '../../src/realcluster/crds.js';
import { contractStore } from '../kube/contract.js';
import { realCluster, skipReason, suiteSuffix } from './env.js';

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
  ['MD-1 both zero as strings', md('zeros', { maxSurge: '0%', maxUnavailable: '0' }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate' }],
  ['MD-1 maxSurge 0, maxUnavailable defaulted to 0', md('zerodef', { maxSurge: 0 }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate' }],
  ['MD-1 not a number or percentage', md('bad', { maxSurge: 'lots' }), { rule: 'MD-1', field: 'spec.strategy.rollingUpdate.maxSurge' }],
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
        // Only rules both sides enforce can be compared: the real apiserver has no admission webhooks.
        if (e && !embedded) problems.push(`${f}: ${m.obj.kind}/${m.obj.metadata.name}: real apiserver rejects what the embedded store accepts: ${(e as Error).message}`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(problems).toEqual([]);
  });

  it.each(CASES)('%s: same verdict and rule on the embedded store and the real apiserver', async (_name, obj, want) => {
    const embedded = await outcome(contractStore(), obj);
    const remote = await outcome(real, obj);
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
  });
});

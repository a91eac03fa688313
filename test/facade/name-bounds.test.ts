/**
 * Issue 32, finding 1: one `kubectl create` of a MachineDeployment with a
 * 300-character spec.clusterName ended `hcs-testbed serve` with ENAMETOOLONG
 * (the name reached a kubeconfig file name). Every field that becomes a file
 * name, a path or a label is bounded at admission with a 422 naming the
 * field, as the apiserver and Cluster API's webhooks bound them:
 * - metadata.name: an RFC 1123 subdomain of at most 253 characters;
 * - labels: values of at most 63 characters;
 * - spec.clusterName of MachineDeployment, MachineSet and Machine: at most 63
 *   (cluster-api v1.10 api/v1beta1: +kubebuilder:validation:MaxLength=63);
 * - Cluster and MachineDeployment names: valid label values
 *   (internal/webhooks/cluster.go, machinedeployment.go);
 * - generated MachineSet and Machine names stay within 63 characters and the
 *   machine-set-name / control-plane-name labels are hashed past 63
 *   (internal/topology/names, util/labels/format.MustFormatValue).
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine, MachineDeployment, MachineSet } from '../../src/product/api/capi.js';
import { generatedName, mustFormatLabelValue } from '../../src/world/capi/util.js';
import { workloadKubeconfigName } from '../../src/world/facade/kubeconfig-files.js';
import { objectMetaCauses } from '../../src/core/kube/object-meta.js';
import { startWorkerCluster, type FacadeBed } from './fixture.js';
import { haveKubectl, KubectlRunner } from './kubectl.js';

const long = (n: number, ch = 'b'): string => ch.repeat(n);

describe('name and label bounds (unit)', () => {
  it('metadata.name: a subdomain of at most 253 characters; labels: values of at most 63', () => {
    expect(objectMetaCauses('MachineDeployment', { name: long(253) })).toEqual([]);
    expect(objectMetaCauses('MachineDeployment', { name: long(254) }).map((c) => c.message)).toEqual([expect.stringMatching(/must be no more than 253 characters/)]);
    expect(objectMetaCauses('ConfigMap', { name: 'a/b' })[0]?.message).toMatch(/RFC 1123 subdomain/);
    expect(objectMetaCauses('ConfigMap', { name: '../x' })[0]?.field).toBe('metadata.name');
    expect(objectMetaCauses('Namespace', { name: 'a.b' })[0]?.message).toMatch(/RFC 1123 label/);
    expect(objectMetaCauses('ConfigMap', { name: 'x', labels: { a: long(63) } })).toEqual([]);
    expect(objectMetaCauses('ConfigMap', { name: 'x', labels: { a: long(64) } })[0]).toMatchObject({ field: 'metadata.labels', message: expect.stringMatching(/no more than 63/) });
    expect(objectMetaCauses('ConfigMap', { name: 'x', labels: { [`${long(64)}`]: 'v' } })[0]?.message).toMatch(/name part must be no more than 63/);
    expect(objectMetaCauses('ConfigMap', { name: 'x', labels: { 'example.com/ok': 'v', 'Bad/Prefix/x': 'v' } })).toHaveLength(1);
    expect(objectMetaCauses('ConfigMap', { name: 'x', annotations: { a: long(256 * 1024) } })[0]?.message).toMatch(/at most 262144 bytes/);
  });

  it('generated names stay within 63 and long names label as upstream hashes them', () => {
    expect(generatedName('md-0', 'abcde')).toBe('md-0-abcde');
    const g = generatedName(long(63, 'm'), 'abcde');
    expect(g).toHaveLength(63);
    expect(g.endsWith('abcde')).toBe(true);
    expect(mustFormatLabelValue('short')).toBe('short');
    const h = mustFormatLabelValue(long(64));
    expect(h).toMatch(/^hash_[A-Za-z0-9_-]{6}_z$/);
    expect(mustFormatLabelValue(long(64))).toBe(h);
    expect(mustFormatLabelValue(long(65))).not.toBe(h);
  });

  it('a workload kubeconfig file name stays short whatever the key, and two long keys never share one', () => {
    expect(workloadKubeconfigName('cpaas-system/demo')).toBe('cpaas-system-demo.kubeconfig');
    const a = workloadKubeconfigName(`ns/${long(300)}`);
    const b = workloadKubeconfigName(`ns/${long(301)}`);
    expect(Buffer.byteLength(a)).toBeLessThan(160);
    expect(a).not.toBe(b);
    // and it can be written
    const d = mkdtempSync(join(tmpdir(), 'kc-name-'));
    writeFileSync(join(d, a), 'x');
    expect(readdirSync(d)).toEqual([a]);
  });
});

describe.skipIf(!haveKubectl)('issue 32: one kubectl create cannot crash serve (real kubectl)', () => {
  let bed: FacadeBed;
  let k: KubectlRunner;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'name-bounds-'));
    bed = await startWorkerCluster({ seed: 32, kubeconfigDir: dir });
    k = new KubectlRunner(bed.facade.kubeconfigPaths.combined);
  }, 120_000);
  afterAll(async () => {
    await bed?.close();
  }, 30_000);

  const mdJson = async (name: string, clusterName: string): Promise<string> => {
    const src = (await bed.tb.env.mgmt.list<MachineDeployment>('MachineDeployment', { namespace: 'cpaas-system' }))[0]!;
    const md = {
      apiVersion: src.apiVersion,
      kind: 'MachineDeployment',
      metadata: { name, namespace: 'cpaas-system' },
      spec: { ...src.spec, clusterName, replicas: 0, selector: { matchLabels: { probe: 'x' } }, template: { ...src.spec.template, metadata: { labels: { probe: 'x' } }, spec: { ...src.spec.template.spec, clusterName } } },
    };
    const f = join(dir, `${name.slice(0, 40)}.json`);
    writeFileSync(f, JSON.stringify(md));
    return f;
  };

  it('a 300-character spec.clusterName is refused with 422 naming the field; the server keeps serving', async () => {
    const r = await k.run(`kubectl create -f ${await mdJson('crash-md', long(300))}`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.clusterName: Too long: may not be longer than 63/);
    expect(r.stderr).toMatch(/spec\.template\.spec\.clusterName: Too long/);
    expect(bed.tb.env.mgmt.getSync({ kind: 'MachineDeployment', namespace: 'cpaas-system', name: 'crash-md' })).toBeUndefined();
    expect(await k.clean('kubectl get md -n cpaas-system -o name')).toMatch(/machinedeployment/);
  });

  it('a 254-character name is refused (metadata.name), a MachineDeployment name that is no label value too (upstream webhook)', async () => {
    const r = await k.run(`kubectl create -f ${await mdJson(long(254, 'n'), 'demo')}`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/metadata\.name: Invalid value: "n+": must be no more than 253 characters/);
    const r2 = await k.run(`kubectl create -f ${await mdJson(long(64, 'n'), 'demo')}`);
    expect(r2.code).not.toBe(0);
    expect(r2.stderr).toMatch(/metadata\.name: Invalid value: "n+": must be a valid label value: must be no more than 63 characters/);
    // kubectl label checks the value itself; a patch reaches the server.
    const r3 = await k.run(`kubectl patch md -n cpaas-system demo-md-0 --type=merge -p '{"metadata":{"labels":{"x":"${long(64)}"}}}'`);
    expect(r3.stderr).toMatch(/metadata\.labels: Invalid value: "b+": must be no more than 63 characters/);
  });

  it('a 63-character MachineDeployment name scales out: MachineSet and Machine names within 63, the set-name label hashed as upstream does', async () => {
    const name = long(63, 'w');
    await k.ok(`kubectl create -f ${await mdJson(name, 'demo')}`);
    await k.ok(`kubectl scale md ${name} -n cpaas-system --replicas=1`);
    const r = await bed.tb.sim.runUntil(async () => (await bed.tb.env.mgmt.list<Machine>('Machine', { namespace: 'cpaas-system' })).some((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === name), 10 * 60_000);
    expect(r.ok).toBe(true);
    const ms = (await bed.tb.env.mgmt.list<MachineSet>('MachineSet', { namespace: 'cpaas-system' })).find((s) => s.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === name)!;
    expect(ms.metadata.name.length).toBeLessThanOrEqual(63);
    const m = (await bed.tb.env.mgmt.list<Machine>('Machine', { namespace: 'cpaas-system' })).find((x) => x.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === name)!;
    expect(m.metadata.name.length).toBeLessThanOrEqual(63);
    expect(m.metadata.labels?.['cluster.x-k8s.io/set-name']).toBe(mustFormatLabelValue(ms.metadata.name));
  }, 120_000);
});

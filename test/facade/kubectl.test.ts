/**
 * OPS-1 with the real kubectl: the documented commands of both procedure
 * documents (seeds/000 worker nodes, seeds/004 upgrade), placeholders filled
 * in, run verbatim against the HTTP facade of a full testbed, checking their
 * effect on the simulated clusters.
 */
import { readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { KubeadmControlPlane, Machine, MachineDeployment, Cluster } from '../../src/product/api/capi.js';
import type { HCSMachine, HCSMachineConfigPool } from '../../src/product/api/hcs.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import type { AppRelease } from '../../src/product/api/apprelease.js';
import { FIXTURES, runningMachines, startWorkerCluster, type FacadeBed } from './fixture.js';
import { haveKubectl, KubectlRunner, until } from './kubectl.js';

const NS = 'cpaas-system';

describe.skipIf(!haveKubectl)('real kubectl against the facade: worker document (seeds/000)', () => {
  let bed: FacadeBed;
  let k: KubectlRunner;
  const mgmt = () => bed.tb.env.mgmt;

  beforeAll(async () => {
    bed = await startWorkerCluster();
    k = new KubectlRunner(bed.facade.kubeconfigPath);
  });
  afterAll(async () => {
    await bed?.close();
  });

  it('kubectl get machines (table with the upstream printer columns), -l deployment-name', async () => {
    const out = await k.ok('kubectl get machines -n cpaas-system');
    expect(out.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+NODENAME\s+PROVIDERID\s+PHASE\s+AGE\s+VERSION$/);
    expect(out.match(/demo-md-0-\S+\s+demo\s+demo-worker-\d\s+hcs:\/\/demo\/demo-md-0-\S+\s+Running\s+\S+\s+v1\.31\.6/g)).toHaveLength(3);
    const sel = await k.ok('kubectl get machines -n cpaas-system -l cluster.x-k8s.io/deployment-name=demo-md-0');
    expect(sel.trim().split('\n')).toHaveLength(4);
    const none = await k.run('kubectl get machines -n cpaas-system -l cluster.x-k8s.io/deployment-name=other');
    expect(none.stderr).toContain('No resources found in cpaas-system namespace.');
  });

  it('kubectl get hcsmachineconfigpool ... -o yaml shows the pool status (POOL-5)', async () => {
    const out = await k.ok('kubectl get hcsmachineconfigpool demo-worker-pool -n cpaas-system -o yaml');
    expect(out).toContain('kind: HCSMachineConfigPool');
    expect(out).toMatch(/entries:[\s\S]*hostname: demo-worker-3/);
    expect(out).toMatch(/phase: Attached/);
  });

  it('scale out: kubectl apply -f <updated-pool-config.yaml>, the json patch of replicas, and kubectl get machines -w streams the new machine', async () => {
    const applied = await k.ok(`kubectl apply -f ${join(FIXTURES, 'scale-out', 'worker-pool-4.yaml')}`);
    expect(applied).toBe('hcsmachineconfigpool.infrastructure.cluster.x-k8s.io/demo-worker-pool configured\n');
    const pool = mgmt().getSync<HCSMachineConfigPool>({ kind: 'HCSMachineConfigPool', namespace: NS, name: 'demo-worker-pool' });
    expect(pool?.spec.configs.map((c) => c.hostname)).toContain('demo-worker-4');

    const watch = k.spawn('kubectl get machines -n cpaas-system -w');
    const lines = (re: RegExp) => (out: string) => out.split('\n').filter((l) => re.test(l)).length;
    await watch.waitFor((out) => lines(/^demo-md-0-\S+ .* Running /)(out) >= 3);
    const patched = await k.ok(`kubectl patch machinedeployment demo-md-0 -n cpaas-system \\
  --type='json' -p='[{"op": "replace", "path": "/spec/replicas", "value": 4}]'`);
    expect(patched).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 patched\n');
    const r = await bed.tb.sim.runUntil(async () => (await runningMachines(bed.tb)) === 4, 30 * 60_000);
    expect(r.ok).toBe(true);
    const newest = mgmt().listSync<Machine>('Machine', { namespace: NS }).find((m) => m.status?.nodeRef?.name === 'demo-worker-4');
    expect(newest).toBeDefined();
    const out = await watch.waitFor(new RegExp(`${newest!.metadata.name}\\s+demo\\s+demo-worker-4\\s+hcs://demo/\\S+\\s+Running`));
    watch.child.kill('SIGTERM');
    await watch.exited;
    expect(out.split('\n')[0]).toMatch(/^NAME\s+CLUSTER/);
    expect(out).toMatch(new RegExp(`${newest!.metadata.name}\\s+demo\\s+\\s+Pending`)); // first seen while provisioning

    const md = await k.ok('kubectl get machinedeployment demo-md-0 -n cpaas-system');
    expect(md).toMatch(/demo-md-0\s+demo\s+4\s+4\s+4\s+4\s+0\s+Running/);
    expect(await k.ok('kubectl get machinedeployment -n cpaas-system')).toContain('demo-md-0');
  });

  it('new template: get -o yaml > file, edit, kubectl apply -f new-template.yaml -n cpaas-system; then the documented merge patches', async () => {
    await k.ok('kubectl get hcsmachinetemplate demo-worker-template -n cpaas-system -o yaml > new-template.yaml');
    const file = join(k.cwd, 'new-template.yaml');
    const copied = readFileSync(file, 'utf8');
    expect(copied).toContain('resourceVersion:');
    // The document's edits: new metadata.name, drop server-generated fields.
    writeFileSync(
      file,
      copied
        .replace('name: demo-worker-template', 'name: demo-worker-template-v2')
        .split('\n')
        .filter((l) => !/^\s+(resourceVersion|uid|creationTimestamp|generation):/.test(l) && !/last-applied-configuration/.test(l) && !/^ {2}annotations:/.test(l))
        .join('\n'),
    );
    expect(await k.ok('kubectl apply -f new-template.yaml -n cpaas-system')).toBe('hcsmachinetemplate.infrastructure.cluster.x-k8s.io/demo-worker-template-v2 created\n');
    expect(await k.ok('kubectl apply -f new-template.yaml -n cpaas-system')).toContain('unchanged');

    await k.ok(`kubectl patch machinedeployment demo-md-0 -n cpaas-system \\
  --type='merge' -p='{"spec":{"template":{"spec":{"infrastructureRef":{"name":"demo-worker-template-v2"}}}}}'`);
    let md = mgmt().getSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' })!;
    expect(md.spec.template.spec.infrastructureRef.name).toBe('demo-worker-template-v2');
    await k.ok(`kubectl patch machinedeployment demo-md-0 -n cpaas-system \\
       --type='merge' -p='{"spec":{"template":{"spec":{"version":"v1.31.6","infrastructureRef":{"name":"demo-worker-template"}}}}}'`);
    md = mgmt().getSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' })!;
    expect(md.spec.template.spec.infrastructureRef.name).toBe('demo-worker-template');
    // kubectl's default patch type is strategic; the apiserver refuses it for custom resources.
    const err = await k.fails(`kubectl patch machinedeployment demo-md-0 -n cpaas-system -p='{"spec":{"replicas":4}}'`);
    expect(err).toContain('application/strategic-merge-patch+json is not supported');
  });

  it('kubectl describe hcsmachine <machine-name> and kubectl logs deployment/hcs-controller-manager (OPS-3)', async () => {
    const hm = mgmt().listSync<HCSMachine>('HCSMachine', { namespace: NS })[0]!;
    const d = await k.ok(`kubectl describe hcsmachine ${hm.metadata.name} -n cpaas-system`);
    expect(d).toMatch(new RegExp(`^Name:\\s+${hm.metadata.name}$`, 'm'));
    expect(d).toMatch(/^Kind:\s+HCSMachine$/m);
    expect(d).toMatch(/Provider ID:\s+hcs:\/\/demo\//);
    expect(d).toMatch(/Server Id:\s+\S+/);
    expect(d).toMatch(/^Events:/m);
    const md = await k.ok('kubectl describe machinedeployment demo-md-0 -n cpaas-system');
    expect(md).toMatch(/SuccessfulScale\s+\S+\s+machinedeployment-controller/); // events found by involvedObject field selectors

    const logs = await k.ok('kubectl logs -n cpaas-system deployment/hcs-controller-manager');
    expect(logs).toContain('bound to pool entry demo-worker-4');
    expect(logs.trim().split('\n').every((l) => JSON.parse(l) !== undefined)).toBe(true);
    expect(await k.ok('kubectl logs -n cpaas-system deployment/hcs-controller-manager --tail=1')).toMatch(/^\{.*\}\n$/);
    expect(await k.fails('kubectl logs -n cpaas-system deployment/nope')).toContain('deployments.apps "nope" not found');
  });

  it('kubectl get nodes (workload cluster context) and kubectl explain', async () => {
    const nodes = await k.ok('kubectl --context demo get nodes');
    expect(nodes.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    expect(nodes.match(/demo-worker-\d\s+Ready/g)).toHaveLength(4);
    const explain = await k.ok('kubectl explain hcsmachineconfigpool.spec.configs.networks');
    expect(explain).toContain('subenetName');
  });

  it('bad input gives kubectl-style errors naming the field and the SPEC rule, and changes nothing', async () => {
    const disk = { slot: 0, size: 100, type: 'SSD', mountPath: '/var/cpaas', format: 'xfs' };
    const pool = (configs: unknown[]): KubeObject => ({ apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachineConfigPool', metadata: { name: 'bad-pool', namespace: NS }, spec: { configs } });
    const entry = (over: Record<string, unknown> = {}, net: Record<string, unknown> = {}): Record<string, unknown> => ({
      hostname: 'w1',
      networks: [Object.fromEntries(Object.entries({ subnetName: 'worker-subnet', ipAddress: '192.168.10.11', ...net }).filter(([, v]) => v !== undefined))],
      persistentDisks: [disk],
      ...over,
    });
    const template = (spec: Record<string, unknown>): KubeObject => ({
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'HCSMachineTemplate',
      metadata: { name: 'bad-template', namespace: NS },
      spec: { template: { spec: Object.fromEntries(Object.entries({ imageName: 'img', flavorName: 'f', availabilityZone: 'az1', ...spec }).filter(([, v]) => v !== undefined)) } },
    });
    const cases: [string, string, RegExp[]][] = [
      ['invalid YAML', 'apiVersion: v1\nkind: [\n', [/error parsing bad.yaml/, /yaml: line \d+/]],
      ['unknown field (kubectl --validate=strict)', stringify(template({ gateway: 'x' })), [/Error from server \(BadRequest\)/, /strict decoding error: unknown field "spec\.template\.spec\.gateway"/]],
      ['wrong type', stringify(template({ rootVolume: { type: 'SSD', size: '100' } })), [/The HCSMachineTemplate "bad-template" is invalid/, /spec\.template\.spec\.rootVolume\.size: Invalid value: "string": .* must be of type integer/]],
      ['NET-1: subnetName and subnetId', stringify(pool([entry({}, { subnetId: 'abc' })])), [/The HCSMachineConfigPool "bad-pool" is invalid/, /spec\.configs\[0\]\.networks\[0\]\.subnetId: NET-1: /]],
      ['NET-2: legacy subenetName differs', stringify(pool([entry({}, { subenetName: 'old-subnet' })])), [/spec\.configs\[0\]\.networks\[0\]\.subnetName: NET-2: /]],
      ['NET-3: subenetName with subnetId', stringify(pool([entry({}, { subnetName: undefined, subenetName: 'worker-subnet', subnetId: 'x' })])), [/networks\[0\]\.subnetId: NET-3: /]],
      ['NET-6: per-NIC gateway', stringify(pool([entry({}, { gateway: '192.168.10.1' })])), [/networks\[0\]\.gateway: NET-6: /]],
      ['NET-7: malformed IP', stringify(pool([entry({}, { ipAddress: '192.168.10.300' })])), [/networks\[0\]\.ipAddress: NET-7: /]],
      ['DISK-1: missing mountPath', stringify(pool([entry({ persistentDisks: [{ ...disk, mountPath: undefined }] })])), [/persistentDisks\[0\]\.mountPath: DISK-1: Required value/]],
      ['DISK-2: slots not contiguous', stringify(pool([entry({ persistentDisks: [{ ...disk, slot: 1 }] })])), [/spec\.configs\[0\]\.persistentDisks: DISK-2: /]],
      ['POOL-1: duplicate hostname', stringify(pool([entry(), entry({}, { ipAddress: '192.168.10.12' })])), [/spec\.configs\[1\]\.hostname: POOL-1: /]],
      ['TPL-4: providerID and serverId', stringify(template({ providerID: 'hcs://demo/m-1', serverId: 'abc' })), [/\* spec\.template\.spec\.providerID: TPL-4: /, /\* spec\.template\.spec\.serverId: TPL-4: /]],
      ['TPL-3: dataVolumes without format', stringify(template({ dataVolumes: [{ size: 20, type: 'SSD', mountPath: '/var/lib/kubelet' }] })), [/dataVolumes\[0\]\.format: TPL-3: /]],
      ['TPL-1: imageName missing', stringify(template({ imageName: undefined })), [/spec\.template\.spec\.imageName: TPL-1: Required value/]],
    ];
    for (const [title, yaml, expected] of cases) {
      writeFileSync(join(k.cwd, 'bad.yaml'), yaml);
      const stderr = await k.fails('kubectl apply -f bad.yaml');
      for (const re of expected) expect(stderr, `${title}: ${stderr}`).toMatch(re);
    }
    expect(mgmt().getSync({ kind: 'HCSMachineConfigPool', namespace: NS, name: 'bad-pool' })).toBeUndefined();
    expect(mgmt().getSync({ kind: 'HCSMachineTemplate', namespace: NS, name: 'bad-template' })).toBeUndefined();
    expect(await k.fails('kubectl get machine nope -n cpaas-system')).toBe('Error from server (NotFound): machines.cluster.x-k8s.io "nope" not found\n');
  });
});

describe.skipIf(!haveKubectl)('real kubectl against the facade: upgrade document (seeds/004)', () => {
  let bed: FacadeBed;
  let k: KubectlRunner;
  let wk: KubectlRunner;
  const mgmt = () => bed.tb.env.mgmt;

  beforeAll(async () => {
    bed = await startWorkerCluster({ seed: 7 });
    k = new KubectlRunner(bed.facade.kubeconfigPath);
    const wl = bed.facade.kubeconfigPaths.workloads['cpaas-system/demo'];
    if (!wl) throw new Error('no kubeconfig for the workload cluster');
    wk = new KubectlRunner(wl);
  });
  afterAll(async () => {
    await bed?.close();
  });

  it('Kube-OVN two steps: kubectl annotate cluster --overwrite, kubectl patch apprelease on the workload cluster, watch the phases with -o jsonpath (OVN-3, OVN-4)', async () => {
    const ann = await k.ok(`kubectl annotate cluster demo -n cpaas-system \\
  cpaas.io/kube-ovn-version=v4.2.4 --overwrite`);
    expect(ann).toBe('cluster.cluster.x-k8s.io/demo annotated\n');
    expect(mgmt().getSync<Cluster>({ kind: 'Cluster', namespace: NS, name: 'demo' })?.metadata.annotations?.['cpaas.io/kube-ovn-version']).toBe('v4.2.4');
    expect(await k.fails('kubectl annotate cluster demo -n cpaas-system cpaas.io/kube-ovn-version=v4.2.3')).toContain("--overwrite is false but found the following declared annotation(s): 'cpaas.io/kube-ovn-version' already has a value (v4.2.4)");

    const before = await wk.ok('kubectl get apprelease cni-kube-ovn -n cpaas-system');
    expect(before.split('\n')[0]).toMatch(/^NAME\s+SYNC\s+HEALTH\s+AGE$/);
    await wk.ok(`kubectl patch apprelease cni-kube-ovn -n cpaas-system --type='json' \\
  -p='[{"op":"replace","path":"/spec/source/charts/0/targetRevision","value":"v4.2.4"}]'`);
    const jp = `kubectl get apprelease cni-kube-ovn -n cpaas-system \\
  -o jsonpath='Installed: {.status.charts.*.installedRevision}{"\\n"}Phase: {.status.charts.*.phase}{"\\n"}'`;
    const store = bed.tb.env.workloads.store(NS, 'demo');
    const phase = () => {
      const ar = store.getSync<AppRelease>({ kind: 'AppRelease', namespace: NS, name: 'cni-kube-ovn' });
      return ar?.status?.charts?.['acp/chart-cpaas-kube-ovn']?.phase;
    };
    await bed.tb.sim.runUntil(() => phase() === 'Upgrading', 5 * 60_000);
    expect(await wk.ok(jp)).toBe('Installed: v4.1.6\nPhase: Upgrading\n');
    await bed.tb.sim.runUntil(() => phase() === 'HealthChecking', 5 * 60_000);
    expect(await wk.ok(jp)).toBe('Installed: v4.2.4\nPhase: HealthChecking\n');
    await bed.tb.sim.runUntil(() => phase() === 'Success', 5 * 60_000);
    expect(await wk.ok(jp)).toBe('Installed: v4.2.4\nPhase: Success\n');
    expect(await wk.ok('kubectl get apprelease cni-kube-ovn -n cpaas-system')).toMatch(/cni-kube-ovn\s+Synced\s+Healthy/);
    const described = await wk.ok('kubectl describe apprelease cni-kube-ovn -n cpaas-system');
    expect(described).toMatch(/Type:\s+Health/);
  });

  it('control plane: new template via apply, kubectl patch kubeadmcontrolplane (merge), get -w, and kubectl edit of version + dns/etcd tags + template in one go (KCP-3)', async () => {
    // A KubeadmControlPlane object to operate on (the fixture's control plane is external, so the
    // simulation is not run after this point: only the API semantics are exercised here).
    const tpl = structuredClone(mgmt().getSync<KubeObject>({ kind: 'HCSMachineTemplate', namespace: NS, name: 'demo-worker-template' })!);
    await mgmt().create({ apiVersion: tpl.apiVersion, kind: tpl.kind, metadata: { name: 'demo-cp-template', namespace: NS }, spec: tpl.spec });
    await mgmt().create({
      apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
      kind: 'KubeadmControlPlane',
      metadata: { name: 'demo-kcp', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } },
      spec: {
        replicas: 3,
        version: 'v1.31.6',
        machineTemplate: { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachineTemplate', name: 'demo-cp-template' } },
        kubeadmConfigSpec: { clusterConfiguration: { dns: { imageTag: 'v1.11.3' }, etcd: { local: { imageTag: '3.5.15-0' } } } },
        rolloutStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } },
      },
    } as KubeObject);

    await k.ok('kubectl get hcsmachinetemplate demo-cp-template -n cpaas-system -o yaml > new-cp-template.yaml');
    const f = join(k.cwd, 'new-cp-template.yaml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('name: demo-cp-template', 'name: demo-cp-template-v2').replace(/imageName: .*/, 'imageName: alauda-os-v4.2-k8s-v1.32.3'));
    // Server-generated metadata left in place: kubectl apply creates the copy (the server ignores uid/resourceVersion on create).
    expect(await k.ok('kubectl apply -f new-cp-template.yaml -n cpaas-system')).toContain('demo-cp-template-v2 created');

    const w = k.spawn('kubectl get kubeadmcontrolplane demo-kcp -n cpaas-system -w');
    await w.waitFor(/demo-kcp\s+demo/);
    // kubectl watches a single object from resourceVersion 0 and skips the initial ADDED: wait until its watch is open.
    await until(() => bed.facade.openWatches() > 0, 'kubectl -w to open its watch');
    await k.ok(`kubectl patch kubeadmcontrolplane demo-kcp -n cpaas-system --type='merge' -p='{"spec":{"machineTemplate":{"infrastructureRef":{"name":"demo-cp-template-v2"}}}}'`);
    await w.waitFor((out) => out.split('\n').filter((l) => l.startsWith('demo-kcp ')).length >= 2);
    w.child.kill('SIGTERM');
    await w.exited;
    expect(mgmt().getSync<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: NS, name: 'demo-kcp' })?.spec.machineTemplate.infrastructureRef.name).toBe('demo-cp-template-v2');

    const editor = join(k.home, 'editor.sh');
    writeFileSync(
      editor,
      `#!/bin/sh\nsed -i -e 's/^  version: v1.31.6$/  version: v1.32.3/' -e 's/imageTag: 3.5.15-0/imageTag: 3.5.16-0/' -e 's/name: demo-cp-template-v2$/name: demo-cp-template-v3/' "$1"\n`,
    );
    chmodSync(editor, 0o755);
    const edited = await k.ok('kubectl edit kubeadmcontrolplane demo-kcp -n cpaas-system', { KUBE_EDITOR: editor });
    expect(edited).toBe('kubeadmcontrolplane.controlplane.cluster.x-k8s.io/demo-kcp edited\n');
    const kcp = mgmt().getSync<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: NS, name: 'demo-kcp' })!;
    expect(kcp.spec.version).toBe('v1.32.3');
    expect(kcp.spec.kubeadmConfigSpec.clusterConfiguration?.etcd?.local?.imageTag).toBe('3.5.16-0');
    expect(kcp.spec.kubeadmConfigSpec.clusterConfiguration?.dns?.imageTag).toBe('v1.11.3');
    expect(kcp.spec.machineTemplate.infrastructureRef.name).toBe('demo-cp-template-v3');

    const got = await k.ok('kubectl get kubeadmcontrolplane demo-kcp -n cpaas-system');
    expect(got.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+INITIALIZED\s+API SERVER AVAILABLE\s+DESIRED\s+REPLICAS\s+READY\s+UPDATED\s+UNAVAILABLE\s+AGE\s+VERSION$/);
    expect(got).toMatch(/demo-kcp\s+demo\s+3\s+.*v1\.32\.3/);
    const cp = await k.run('kubectl get machines -n cpaas-system -l cluster.x-k8s.io/control-plane');
    expect(cp.code).toBe(0);
  });
});

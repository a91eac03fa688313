/**
 * Issue #15 must-show, the worker-node document (seeds/000, "在 Huawei Cloud
 * Stack 上管理节点"): `hcs-testbed serve --preset worker-cluster` started as
 * a user starts it, and every kubectl command of the document typed with the
 * real kubectl, in the document's order, as the document writes it (taken
 * from the document's text; only the placeholders below are filled in).
 * Each step checks what kubectl printed and what it did: machine counts,
 * the hostname → persistent disk binding across scale-in and replacements
 * (DISK-3, DISK-9, POOL-4), the new template's flavor on the replacements
 * (MD-5, TPL-5), the nodes' versions after the Kubernetes upgrade.
 * Virtual time moves only through serve's time API; every wait is bounded.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { haveKubectl, KubectlRunner } from '../facade/kubectl.js';
import { editTemplateCopy, SeedDocument, WORKER_DOC } from './document.js';
import { items, startServeCli, type ServeProcess } from './served.js';

/**
 * The placeholders of seeds/000 and what this test types for them. `all`
 * applies everywhere; the other rows are the values of one procedure.
 */
const VALUES = {
  all: { '<cluster-name>': 'demo' },
  'scale out': { '<new-replica-count>': '4', '<updated-pool-config.yaml>': 'updated-pool-config.yaml' },
  'scale in': { '<new-replica-count>': '3' },
  'infrastructure upgrade': { '<current-template>': 'demo-worker-template', '<new-template>': 'demo-worker-template-v2' },
  'Kubernetes upgrade': { '<current-template>': 'demo-worker-template-v2', '<new-template>': 'demo-worker-template-v4.2', '<kubernetes-version>': 'v1.32.3' },
  /** <machine-name>: the first HCSMachine the API lists (found at run time). */
  troubleshooting: { '<machine-name>': '' },
};
/** The values of the edits the document asks for in words. */
const EDITS = {
  newPoolEntry: { hostname: 'demo-worker-4', networks: [{ subnetName: 'worker-subnet', ipAddress: '192.168.10.14' }], persistentDisks: [{ slot: 0, size: 100, type: 'SSD', mountPath: '/var/cpaas', format: 'xfs' }] },
  infraFlavor: 's6.xlarge.2',
  upgradeImage: 'alauda-os-v4.2-k8s-v1.32.3',
};

/** What the document lists as server-generated fields to delete from the copy (TPL-5). */
const SERVER_GENERATED = ['metadata.resourceVersion', 'metadata.uid', 'metadata.creationTimestamp', 'metadata.managedFields', 'status'];

const NS = 'cpaas-system';
const M = `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}`;
const I = `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${NS}`;

interface Obj {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: Record<string, unknown> & { infrastructureRef?: { name: string }; version?: string; flavorName?: string };
  status?: { phase?: string; nodeRef?: { name: string }; entries?: { hostname: string; machine?: string; persistentDisks?: { slot: number; volumeId?: string; phase?: string }[] }[] };
}

describe.skipIf(!haveKubectl)('OPS-1: seeds/000 typed verbatim with the real kubectl against hcs-testbed serve --preset worker-cluster', () => {
  let s: ServeProcess;
  let k: KubectlRunner;
  const doc = new SeedDocument(WORKER_DOC);
  const v = <K extends keyof typeof VALUES>(step: K) => ({ ...VALUES.all, ...VALUES[step] }) as typeof VALUES.all & (typeof VALUES)[K];
  const machines = async () => (await items<Obj>(s, `${M}/machines`)).filter((m) => !m.metadata.deletionTimestamp);
  const running = async () => (await machines()).filter((m) => m.status?.phase === 'Running');
  /** hostname → the volume id of its slot-0 persistent disk, from the pool's status (POOL-5). */
  const disks = async (): Promise<Record<string, string | undefined>> => {
    const pool = (await s.api('GET', `${I}/hcsmachineconfigpools/demo-worker-pool`)).json as unknown as Obj;
    return Object.fromEntries((pool.status?.entries ?? []).map((e) => [e.hostname, e.persistentDisks?.find((d) => d.slot === 0)?.volumeId]));
  };
  const hostnames = async () => (await running()).map((m) => m.status?.nodeRef?.name).sort();
  let volumes: Record<string, string | undefined> = {};

  beforeAll(async () => {
    s = await startServeCli(['--preset', 'worker-cluster']);
    k = new KubectlRunner(s.banner.kubeconfig);
  }, 90_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('serve prints the kubeconfig and the workload context the documents need', () => {
    expect(s.banner.text).toMatch(/brought up: 3\/3 machines Running/);
    expect(s.banner.workloads.demo?.getNodes).toBe('kubectl --context demo get nodes');
    expect(s.banner.text).toContain('time: paused (--speed 0)');
  });

  it('persistent disks: kubectl get hcsmachineconfigpool <cluster-name>-worker-pool -n cpaas-system -o yaml shows every entry\'s disk (POOL-5)', async () => {
    const out = await k.clean(doc.next('kubectl get hcsmachineconfigpool <cluster-name>-worker-pool -n cpaas-system -o yaml', v('all')));
    const pool = parse(out) as Obj;
    expect(pool.status?.entries?.map((e) => e.hostname)).toEqual(['demo-worker-1', 'demo-worker-2', 'demo-worker-3']);
    for (const e of pool.status!.entries!) expect(e.persistentDisks).toEqual([expect.objectContaining({ slot: 0, phase: 'Attached', volumeId: expect.any(String) })]);
    volumes = await disks();
  });

  it('scale out: get machines (-l), get the pool, kubectl apply -f the edited pool, the json patch, get machines -w, get machinedeployment (POOL-3)', async () => {
    const all = await k.clean(doc.next('kubectl get machines -n cpaas-system', v('all')));
    expect(all.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+NODENAME\s+PROVIDERID\s+PHASE\s+AGE\s+VERSION$/);
    expect(all.match(/^demo-md-0-\S+\s+demo\s+demo-worker-\d\s+hcs:\/\/demo\/demo-md-0-\S+\s+Running\s+\S+\s+v1\.31\.6$/gm)).toHaveLength(3);
    const sel = await k.clean(doc.next('kubectl get machines -n cpaas-system -l cluster.x-k8s.io/deployment-name=<cluster-name>-md-0', v('all')));
    expect(sel.trim().split('\n')).toHaveLength(4);

    // "修改池以包含新的 IP 条目，然后应用": the pool as kubectl printed it, one entry appended, everything else kept.
    const shown = await k.clean(doc.next('kubectl get hcsmachineconfigpool <cluster-name>-worker-pool -n cpaas-system -o yaml', v('all')));
    const edited = parse(shown) as Obj & { spec: { configs: unknown[] } };
    edited.spec.configs.push(EDITS.newPoolEntry);
    writeFileSync(join(k.cwd, 'updated-pool-config.yaml'), stringify(edited));
    const applied = await k.run(doc.next('kubectl apply -f <updated-pool-config.yaml>', v('scale out')));
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toBe('hcsmachineconfigpool.infrastructure.cluster.x-k8s.io/demo-worker-pool configured\n');

    const patched = await k.clean(doc.next('kubectl patch machinedeployment <cluster-name>-md-0 -n cpaas-system \\', v('scale out')));
    expect(patched).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 patched\n');
    const watch = k.spawn(doc.next('kubectl get machines -n cpaas-system -w', v('all')));
    await watch.waitFor(/^NAME\s+CLUSTER/m);
    await s.advanceUntil(async () => (await running()).length === 4, '4 Running machines');
    const added = (await running()).find((m) => m.status?.nodeRef?.name === 'demo-worker-4');
    expect(added).toBeDefined();
    await watch.waitFor(new RegExp(`^${added!.metadata.name}\\s+demo\\s+demo-worker-4\\s+hcs://demo/${added!.metadata.name}\\s+Running`, 'm'));
    watch.child.kill('SIGTERM');
    await watch.exited;

    const md = await k.clean(doc.next('kubectl get machinedeployment <cluster-name>-md-0 -n cpaas-system', v('all')));
    expect(md).toMatch(/^demo-md-0\s+demo\s+4\s+4\s+4\s+4\s+0\s+Running\s+\S+\s+v1\.31\.6$/m);
    const now = await disks();
    expect(now['demo-worker-4']).toEqual(expect.any(String));
    for (const h of Object.keys(volumes)) expect(now[h]).toBe(volumes[h]);
    volumes = now;
  });

  it('scale in: the json patch back to 3, get machines -w; the removed machine\'s persistent disk stays with its hostname (MD-4, DISK-9)', async () => {
    const before = await machines();
    expect(await k.clean(doc.next('kubectl patch machinedeployment <cluster-name>-md-0 -n cpaas-system \\', v('scale in')))).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 patched\n');
    const watch = k.spawn(doc.next('kubectl get machines -n cpaas-system -w', v('all')));
    await watch.waitFor(/^NAME\s+CLUSTER/m);
    await s.advanceUntil(async () => (await items<Obj>(s, `${M}/machines`)).length === 3, 'scale-in to 3 machines');
    const after = await machines();
    const gone = before.find((m) => !after.some((a) => a.metadata.name === m.metadata.name))!;
    await watch.waitFor(new RegExp(`^${gone.metadata.name}\\s+demo\\s+.*\\s+Deleting\\s`, 'm'));
    watch.child.kill('SIGTERM');
    await watch.exited;
    expect(after.every((m) => m.status?.phase === 'Running')).toBe(true);
    expect(await disks()).toEqual(volumes); // every hostname keeps its volume, the removed one's included
  });

  it('infrastructure upgrade: get -o yaml > new-template.yaml, the document\'s edits, apply, the merge patch, get machines -w: every worker replaced on its own disk (MD-5, DISK-3)', async () => {
    const hostsBefore = await hostnames();
    const namesBefore = (await machines()).map((m) => m.metadata.name);
    const vals = v('infrastructure upgrade');
    await k.clean(doc.next('kubectl get hcsmachinetemplate <current-template> -n cpaas-system -o yaml > new-template.yaml', vals));
    editTemplateCopy(join(k.cwd, 'new-template.yaml'), vals['<new-template>'], SERVER_GENERATED, (spec) => (spec.flavorName = EDITS.infraFlavor));
    expect(await k.clean(doc.next('kubectl apply -f new-template.yaml -n cpaas-system', vals))).toBe('hcsmachinetemplate.infrastructure.cluster.x-k8s.io/demo-worker-template-v2 created\n');
    expect(await k.clean(doc.next('kubectl patch machinedeployment <cluster-name>-md-0 -n cpaas-system \\', vals))).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 patched\n');

    const watch = k.spawn(doc.next('kubectl get machines -n cpaas-system -w', v('all')));
    await watch.waitFor(/^NAME\s+CLUSTER/m);
    const replaced = async () => {
      const r = await running();
      return (await machines()).length === 3 && r.length === 3 && r.every((m) => !namesBefore.includes(m.metadata.name));
    };
    await s.advanceUntil(replaced, 'every worker replaced from the new template');
    watch.child.kill('SIGTERM');
    await watch.exited;
    for (const n of namesBefore) expect(watch.out()).toMatch(new RegExp(`^${n}\\s.*Deleting`, 'm'));
    expect(await hostnames()).toEqual(hostsBefore); // same hostnames (POOL-4) ...
    expect(await disks()).toEqual(volumes); // ... and the same persistent disks (DISK-3)
    const hms = await items<Obj>(s, `${I}/hcsmachines`);
    expect(hms.filter((h) => !h.metadata.deletionTimestamp).map((h) => h.spec.flavorName)).toEqual(['s6.xlarge.2', 's6.xlarge.2', 's6.xlarge.2']);
  });

  it('Kubernetes upgrade: a new template with the v1.32.3 image, the merge patch of version and template, kubectl get nodes on the workload cluster (MD-5, BOOT-4)', async () => {
    const vals = v('Kubernetes upgrade');
    // Step 1 has no command of its own: the template copy of the previous section, typed again.
    await k.clean(doc.again('kubectl get hcsmachinetemplate <current-template> -n cpaas-system -o yaml > new-template.yaml', vals));
    editTemplateCopy(join(k.cwd, 'new-template.yaml'), vals['<new-template>'], SERVER_GENERATED, (spec) => (spec.imageName = EDITS.upgradeImage));
    expect(await k.clean(doc.again('kubectl apply -f new-template.yaml -n cpaas-system', vals))).toContain('demo-worker-template-v4.2 created');
    expect(await k.clean(doc.next('kubectl patch machinedeployment <cluster-name>-md-0 -n cpaas-system \\', vals))).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 patched\n');
    await s.advanceUntil(async () => {
      const r = await running();
      return r.length === 3 && (await machines()).length === 3 && r.every((m) => m.spec.version === 'v1.32.3');
    }, 'every worker at v1.32.3');

    // "验证新节点是否以正确的 Kubernetes 版本加入集群" — on the workload cluster: the kubeconfig serve printed for it.
    const nodes = await k.clean(doc.next('kubectl get nodes', v('all')), { KUBECONFIG: s.banner.workloads.demo!.file });
    expect(nodes.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    const hosts = await hostnames();
    expect(hosts).toHaveLength(3);
    for (const h of hosts) expect(nodes).toMatch(new RegExp(`^${h}\\s+Ready\\s+<none>\\s+\\S+\\s+v1\\.32\\.3$`, 'm'));
    expect(nodes.trim().split('\n')).toHaveLength(4);
    expect(await disks()).toEqual(volumes);
  });

  it('verification: get machines, get nodes (the management context, then the context serve printed), get machinedeployment', async () => {
    const ms = await k.clean(doc.next('kubectl get machines -n cpaas-system', v('all')));
    expect(ms.match(/^demo-md-0-\S+\s+demo\s+demo-worker-\d\s+\S+\s+Running\s+\S+\s+v1\.32\.3$/gm)).toHaveLength(3);
    // Typed as written on the current (management) context: the management cluster's own Node, as on kind.
    const mgmtNodes = await k.clean(doc.next('kubectl get nodes', v('all')));
    expect(mgmtNodes).toMatch(/^management-control-plane\s+Ready\s+control-plane\s/m);
    expect(mgmtNodes).not.toContain('demo-worker');
    const wl = await k.clean(s.banner.workloads.demo!.getNodes);
    expect(wl.match(/^demo-worker-\d\s+Ready\s+<none>\s+\S+\s+v1\.32\.3$/gm)).toHaveLength(3);
    const mds = await k.clean(doc.next('kubectl get machinedeployment -n cpaas-system', v('all')));
    expect(mds).toMatch(/^demo-md-0\s+demo\s+3\s+3\s+3\s+3\s+0\s+Running\s+\S+\s+v1\.32\.3$/m);
  });

  it('troubleshooting: kubectl logs deployment/hcs-controller-manager, kubectl describe hcsmachine <machine-name> (OPS-3)', async () => {
    const logs = await k.clean(doc.next('kubectl logs -n cpaas-system deployment/hcs-controller-manager', v('all')));
    expect(logs).toContain('demo-worker-4');
    expect(logs.trim().split('\n').every((l) => typeof JSON.parse(l) === 'object')).toBe(true);
    const hm = (await items<Obj>(s, `${I}/hcsmachines`))[0]!;
    VALUES.troubleshooting['<machine-name>'] = hm.metadata.name;
    const d = await k.clean(doc.next('kubectl describe hcsmachine <machine-name> -n cpaas-system', v('troubleshooting')));
    expect(d).toMatch(new RegExp(`^Name:\\s+${hm.metadata.name}$`, 'm'));
    expect(d).toMatch(/Flavor Name:\s+s6\.xlarge\.2/);
    expect(d).toMatch(/Image Name:\s+alauda-os-v4\.2-k8s-v1\.32\.3/);
    expect(d).toMatch(/^Events:/m);
  });

  it('every command of the document was typed', () => {
    expect(doc.untyped()).toEqual([]);
  });
});

/**
 * The two documents as guided demos: their commands in their order, taken
 * from their text (src/harness/demo/document.ts), with the placeholders filled in
 * from the served testbed (names read through the API) and the catalog (the
 * next flavor, the next OS Support Matrix row), the edits the documents ask
 * for in words done for the presenter, what to look at (computed from the
 * output and the live state: src/harness/demo/narrate.ts), and how far virtual
 * time has to move after each step.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { MatrixRow } from '../../product/matrix/matrix.js';
import { editTemplateCopy, fill, loadDocument, UPGRADE_DOC, WORKER_DOC, type Placeholders } from './document.js';
import { getJson, stalls, type DemoCtx, type Step, type Until } from './run.js';
import { appReleaseLook, kcpLook, machinesLook, mdLook, nodesLook, ovnLook } from './narrate.js';

const NS = 'cpaas-system';
const CAPI = `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}`;
const INFRA = `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${NS}`;
const KCP = `/apis/controlplane.cluster.x-k8s.io/v1beta1/namespaces/${NS}/kubeadmcontrolplanes`;
/** What the documents list as server-generated fields to remove from a copied template (TPL-5). */
const SERVER_GENERATED = ['metadata.resourceVersion', 'metadata.uid', 'metadata.generation', 'metadata.creationTimestamp', 'metadata.managedFields', 'kubectl.kubernetes.io/last-applied-configuration', 'status'];

interface Obj {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { replicas?: number; version?: string; template?: { spec: { version?: string; infrastructureRef: { name: string } } }; machineTemplate?: { infrastructureRef: { name: string } }; configs?: { hostname: string; networks: { subnetName?: string; ipAddress: string }[]; persistentDisks?: unknown[] }[] };
  status?: { phase?: string; replicas?: number; readyReplicas?: number; updatedReplicas?: number; version?: string };
}

/** The values the demo fills in: from the testbed and the catalog. */
export interface DemoValues {
  cluster: string;
  /** The flavor the infrastructure updates switch to. */
  flavor: string;
  /** The OS Support Matrix rows: where the cluster is and the next one. */
  from: MatrixRow;
  to: MatrixRow;
}

const list = async (ctx: DemoCtx, path: string): Promise<Obj[]> => ((await getJson<{ items?: Obj[] }>(ctx, path)).items ?? []).filter((o) => !o.metadata.deletionTimestamp);
const all = async (ctx: DemoCtx, path: string): Promise<Obj[]> => (await getJson<{ items?: Obj[] }>(ctx, path)).items ?? [];
const md = (ctx: DemoCtx, v: DemoValues): Promise<Obj> => getJson<Obj>(ctx, `${CAPI}/machinedeployments/${v.cluster}-md-0`);
const workers = (ctx: DemoCtx, v: DemoValues): Promise<Obj[]> => list(ctx, `${CAPI}/machines?labelSelector=${encodeURIComponent(`cluster.x-k8s.io/deployment-name=${v.cluster}-md-0`)}`);
const cps = (ctx: DemoCtx): Promise<Obj[]> => list(ctx, `${CAPI}/machines?labelSelector=${encodeURIComponent('cluster.x-k8s.io/control-plane')}`);
interface HostNow {
  pool: string;
  hostname: string;
  status: string;
  machine: string;
  disks: { slot: number; state: string }[];
}
const hostsNow = async (ctx: DemoCtx): Promise<HostNow[]> => (await getJson<{ hosts: HostNow[] }>(ctx, '/_testbed/status')).hosts;
/** Which hostname each of these machines holds now. */
const hostOf = async (ctx: DemoCtx, names: string[]): Promise<string[]> => {
  const hs = await hostsNow(ctx);
  return names.map((n) => `${n} on ${hs.find((h) => h.machine === n)?.hostname ?? '(no pool entry)'}`);
};
/** No MachineDeployment or KubeadmControlPlane rolling or scaling, no machine being deleted: what the documents' final checks need. */
const settled = async (ctx: DemoCtx): Promise<boolean> => {
  const mds = await all(ctx, `${CAPI}/machinedeployments`);
  const kcps = await all(ctx, KCP);
  const deleting = (await all(ctx, `${CAPI}/machines`)).some((m) => m.metadata.deletionTimestamp);
  const done = (o: Obj, desired: number): boolean => o.status?.replicas === desired && o.status.updatedReplicas === desired && o.status.readyReplicas === desired;
  return !deleting && mds.every((m) => done(m, m.spec.replicas ?? 1)) && kcps.every((k) => done(k, k.spec.replicas ?? 1));
};

/** `n` machines Running at `version` (when given), none being deleted, none of `old`. */
const rolledOut = (machines: (ctx: DemoCtx) => Promise<Obj[]>, n: () => number, old: () => string[], version?: () => string): Until['cond'] => async (ctx) => {
  const ms = await machines(ctx);
  const deleting = (await all(ctx, `${CAPI}/machines`)).some((m) => m.metadata.deletionTimestamp);
  return !deleting && ms.length === n() && ms.every((m) => m.status?.phase === 'Running' && !old().includes(m.metadata.name) && (!version || (m.spec as { version?: string }).version === version()));
};

/** Why the workers are not done yet, in a line. */
function heldText(now: Awaited<ReturnType<typeof stalls>>): string {
  const pre = now.find((x) => x.reason === 'PreflightCheckFailed');
  if (pre) return `Cluster API's MachineSet preflight checks (${pre.checks.join(', ')}) hold the new machines until the control plane is upgraded (UPG-1, UPG-3): the upgrade document (hcs-testbed demo cluster-upgrade) does it, then these workers go on by themselves`;
  const entry = now.find((x) => x.reason === 'NoFreePoolEntry');
  if (entry) return `a machine waits for a pool entry: ${entry.advice}`;
  return now.length ? `waiting: ${now.map((x) => `${x.kind} ${x.name} ${x.reason}`).join('; ')}` : 'still rolling';
}

/** The first command of the document containing `part`, filled in. */
function cmd(doc: ReturnType<typeof loadDocument>, part: string, values: () => Placeholders): () => string {
  const c = doc.commands.find((x) => x.text.includes(part));
  if (!c) throw new Error(`${doc.file}: no command contains "${part}" (did the document change?)`);
  return () => fill(c.text, values());
}

/** The nth command of the document containing `part` (a command the document writes more than once). */
function nth(doc: ReturnType<typeof loadDocument>, part: string, n: number, values: () => Placeholders): () => string {
  const c = doc.commands.filter((x) => x.text.includes(part))[n];
  if (!c) throw new Error(`${doc.file}: no command #${n + 1} contains "${part}" (did the document change?)`);
  return () => fill(c.text, values());
}

/** The nth command of the document that is exactly `text`, filled in. */
function exact(doc: ReturnType<typeof loadDocument>, text: string, n: number, values: () => Placeholders): () => string {
  const c = doc.commands.filter((x) => x.text === text)[n];
  if (!c) throw new Error(`${doc.file}: no command #${n + 1} reads "${text}" (did the document change?)`);
  return () => fill(c.text, values());
}

/** The worker-node document (seeds/000): pool and scale out, scale in, infrastructure and Kubernetes upgrades, verification. */
export function workerNodeSteps(v: DemoValues): Step[] {
  const doc = loadDocument(WORKER_DOC);
  const st = { replicas: 3, before: [] as string[], template: '', newHost: '', described: '' };
  const base = (): Placeholders => ({ '<cluster-name>': v.cluster });
  const remember = async (ctx: DemoCtx): Promise<undefined> => {
    st.before = (await workers(ctx, v)).map((m) => m.metadata.name);
    st.template = (await md(ctx, v)).spec.template!.spec.infrastructureRef.name;
    return undefined;
  };
  const k8sTemplate = `${v.cluster}-worker-template-${v.to.acpVersion}`;
  return [
    { id: 'pool', title: 'Persistent disks: the worker pool and its entries (POOL-5)', command: cmd(doc, '-worker-pool -n cpaas-system -o yaml', base), look: 'status.entries: every hostname with its machine and its persistent disk (Attached, volumeId); on the page, one row per hostname' },
    { id: 'machines', title: 'Scale out: the machines now', command: cmd(doc, 'kubectl get machines -n cpaas-system', base), look: (_c, out) => machinesLook(out), prepare: async (ctx) => ((st.replicas = (await md(ctx, v)).spec.replicas ?? 3), undefined) },
    { id: 'machines-l', title: 'Scale out: the MachineDeployment\'s machines', command: cmd(doc, '-l cluster.x-k8s.io/deployment-name', base), look: (_c, out) => `the workers only, selected by the MachineDeployment label: ${machinesLook(out)}` },
    {
      id: 'pool-edit',
      title: 'Scale out: add a pool entry first (POOL-3)',
      command: nth(doc, '-worker-pool -n cpaas-system -o yaml', 1, base),
      saveAs: 'updated-pool-config.yaml',
      edit: (ctx) => {
        const file = join(ctx.dir, 'updated-pool-config.yaml');
        const pool = parse(readFileSync(file, 'utf8')) as Obj;
        const configs = pool.spec.configs!;
        const last = configs[configs.length - 1]!;
        const ip = last.networks[0]!.ipAddress.replace(/\d+$/, (d) => String(Number(d) + 1));
        st.newHost = last.hostname.replace(/\d+$/, (d) => String(Number(d) + 1));
        configs.push({ ...structuredClone(last), hostname: st.newHost, networks: [{ ...last.networks[0]!, ipAddress: ip }] });
        writeFileSync(file, stringify(pool));
        return `appended ${st.newHost} (${ip}) to spec.configs in updated-pool-config.yaml, every other entry left as it was`;
      },
      look: 'the new entry comes last; the existing ones and their persistentDisks are unchanged',
    },
    { id: 'pool-apply', title: 'Scale out: apply the pool', command: cmd(doc, 'kubectl apply -f <updated-pool-config.yaml>', () => ({ ...base(), '<updated-pool-config.yaml>': 'updated-pool-config.yaml' })), look: 'the page: a new row for the new hostname, free (no machine, no disk yet)' },
    { id: 'scale-out', title: 'Scale out: raise replicas', command: nth(doc, '"/spec/replicas"', 0, () => ({ ...base(), '<new-replica-count>': String(st.replicas + 1) })), look: 'the MachineSet creates a machine; it binds the free entry' },
    { id: 'scale-out-watch', title: 'Scale out: watch the machines', command: nth(doc, 'kubectl get machines -n cpaas-system -w', 0, base), watch: true, until: { what: 'the new machine Running', cond: async (ctx) => (await workers(ctx, v)).filter((m) => m.status?.phase === 'Running').length === st.replicas + 1 }, look: async (ctx) => {
      const now = (await workers(ctx, v)).map((m) => m.metadata.name);
      const added = now.filter((n) => !st.before.includes(n));
      const host = (await hostsNow(ctx)).find((h) => added.includes(h.machine));
      return added.length ? `the new machine ${added.join(', ')} went Pending → Provisioning → Provisioned → Running${host ? ` on ${host.hostname}, its disk ${host.disks.map((d) => `pd${d.slot} ${d.state}`).join(', ') || 'none'}` : ''}` : 'no new machine yet';
    }, prepare: async (ctx) => ((st.before = (await workers(ctx, v)).map((m) => m.metadata.name)), undefined) },
    { id: 'md', title: 'Scale out: the MachineDeployment', command: cmd(doc, 'kubectl get machinedeployment <cluster-name>-md-0', base), look: async (ctx, out) => mdLook(out, await stalls(ctx)) },
    { id: 'scale-in', title: 'Scale in: back to the previous count', command: nth(doc, '"/spec/replicas"', 1, () => ({ ...base(), '<new-replica-count>': String(st.replicas) })), look: 'one machine goes to Deleting; its disk is detached and kept (DISK-9)' },
    { id: 'scale-in-watch', title: 'Scale in: watch', command: nth(doc, 'kubectl get machines -n cpaas-system -w', 1, base), watch: true, until: { what: 'the removed machine gone', cond: async (ctx) => (await all(ctx, `${CAPI}/machines?labelSelector=${encodeURIComponent(`cluster.x-k8s.io/deployment-name=${v.cluster}-md-0`)}`)).length === st.replicas }, look: async (ctx) => {
      const kept = (await hostsNow(ctx)).filter((h) => h.status === 'kept');
      return kept.length ? `${kept.map((h) => `${h.hostname} keeps its disk (${h.disks.map((d) => `pd${d.slot} ${d.state}`).join(', ')}) with no machine`).join('; ')}: "free · data kept" on the page` : 'no hostname is free with its data kept';
    } },
    { id: 'infra-copy', title: 'Infrastructure upgrade: copy the template', prepare: remember, command: () => fill(doc.commands.find((c) => c.text.includes('-o yaml > new-template.yaml'))!.text, { '<current-template>': st.template }), edit: (ctx) => (editTemplateCopy(join(ctx.dir, 'new-template.yaml'), `${st.template.replace(/-v[\d.]+$|-infra$/, '')}-infra`, SERVER_GENERATED, (spec) => (spec.flavorName = v.flavor)), `new-template.yaml: metadata.name ${st.template.replace(/-v[\d.]+$|-infra$/, '')}-infra, server-generated fields removed, flavorName ${v.flavor}`), look: 'the copy carries no providerID/serverId (TPL-4)' },
    { id: 'infra-apply', title: 'Infrastructure upgrade: create the new template', command: cmd(doc, 'kubectl apply -f new-template.yaml', base), look: 'a new HCSMachineTemplate; nothing rolls yet' },
    { id: 'infra-patch', title: 'Infrastructure upgrade: point the MachineDeployment at it (MD-5)', command: cmd(doc, '"infrastructureRef":{"name":"<new-template>"}}}}}', () => ({ ...base(), '<new-template>': `${st.template.replace(/-v[\d.]+$|-infra$/, '')}-infra` })), look: async (ctx) => {
      const ru = ((await md(ctx, v)).spec as { strategy?: { rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } } }).strategy?.rollingUpdate;
      const surge = String(ru?.maxSurge ?? 1);
      return surge === '0'
        ? `a rolling replacement with maxSurge 0, maxUnavailable ${String(ru?.maxUnavailable ?? 0)}: one machine removed first, then its replacement on the same hostname and disk (MD-2)`
        : `a rolling replacement with maxSurge ${surge}: a surge machine is created while the old ones hold every entry — it waits for a pool entry or takes another hostname's (MD-3); the page's "Waiting for a pool entry" lane shows it`;
    } },
    { id: 'infra-watch', title: 'Infrastructure upgrade: watch the rollout', command: nth(doc, 'kubectl get machines -n cpaas-system -w', 2, base), watch: true, until: { what: 'every worker replaced', cond: rolledOut((ctx) => workers(ctx, v), () => st.replicas, () => st.before) }, look: async (ctx) => {
      const now = (await workers(ctx, v)).map((m) => m.metadata.name);
      const fresh = now.filter((n) => !st.before.includes(n));
      return `${fresh.length} of ${now.length} workers are new machines (${(await hostOf(ctx, fresh)).join(', ')}): each on a hostname an old one left, with that hostname's disk; on the page each row shows the old machine ending and the new one starting`;
    } },
    { id: 'k8s-copy', title: `Kubernetes upgrade: a template with the ${v.to.kubernetesVersion} image (${v.to.alaudaOSImage})`, prepare: remember, command: () => fill(doc.commands.find((c) => c.text.includes('-o yaml > new-template.yaml'))!.text, { '<current-template>': st.template }), edit: (ctx) => (editTemplateCopy(join(ctx.dir, 'new-template.yaml'), k8sTemplate, SERVER_GENERATED, (spec) => (spec.imageName = v.to.alaudaOSImage)), `new-template.yaml: metadata.name ${k8sTemplate}, imageName ${v.to.alaudaOSImage}`), look: 'the image of the OS Support Matrix row (hcs-testbed catalog)' },
    { id: 'k8s-apply', title: 'Kubernetes upgrade: create it', command: cmd(doc, 'kubectl apply -f new-template.yaml', base), look: 'a new HCSMachineTemplate' },
    {
      id: 'k8s-patch',
      title: 'Kubernetes upgrade: version and template in one patch (MD-5)',
      command: cmd(doc, '"version":"<kubernetes-version>"', () => ({ ...base(), '<new-template>': k8sTemplate, '<kubernetes-version>': v.to.kubernetesVersion })),
      until: { what: `every worker at ${v.to.kubernetesVersion}`, cond: rolledOut((ctx) => workers(ctx, v), () => st.replicas, () => st.before, () => v.to.kubernetesVersion) },
      look: async (ctx) => {
        const ws = await workers(ctx, v);
        const at = ws.filter((m) => (m.spec as { version?: string }).version === v.to.kubernetesVersion && m.status?.phase === 'Running').length;
        if (at === st.replicas && ws.length === st.replicas) return `every worker at ${v.to.kubernetesVersion}`;
        return `${at} of ${st.replicas} workers at ${v.to.kubernetesVersion}: ${heldText(await stalls(ctx))}; see "Why is it waiting?" on the page`;
      },
    },
    { id: 'nodes', title: 'Verify: the nodes on the workload cluster', command: nth(doc, 'kubectl get nodes', 0, base), workload: true, look: (_c, out) => nodesLook(out, v.to.kubernetesVersion) },
    { id: 'verify-machines', title: 'Verify: the machines', command: exact(doc, 'kubectl get machines -n cpaas-system', 1, base), look: (_c, out) => machinesLook(out) },
    { id: 'verify-nodes', title: 'Verify: the nodes', command: nth(doc, 'kubectl get nodes', 1, base), workload: true, look: (_c, out) => nodesLook(out, v.to.kubernetesVersion) },
    { id: 'verify-md', title: 'Verify: the MachineDeployments', command: cmd(doc, 'kubectl get machinedeployment -n cpaas-system', base), look: async (ctx, out) => mdLook(out, await stalls(ctx)) },
    { id: 'logs', title: 'Troubleshooting: the provider\'s log (OPS-3)', command: cmd(doc, 'kubectl logs -n cpaas-system deployment/hcs-controller-manager', base), look: 'one JSON line per decision, with the SPEC rules' },
    {
      id: 'describe',
      title: 'Troubleshooting: describe a worker\'s HCSMachine',
      // A worker (this document's subject): the HCSMachine of a MachineDeployment's machine, the one that waits when one does.
      command: async (ctx) => {
        const names = (await workers(ctx, v)).map((m) => m.metadata.name);
        const hms = (await list(ctx, `${INFRA}/hcsmachines`)).filter((h) => names.includes(h.metadata.name));
        const waiting = (await stalls(ctx)).find((x) => x.kind === 'HCSMachine' && names.includes(x.name));
        st.described = waiting?.name ?? hms[0]?.metadata.name ?? '';
        return fill(doc.commands.find((c) => c.text.includes('kubectl describe hcsmachine'))!.text, { '<machine-name>': st.described });
      },
      look: async (ctx) => {
        const s = (await stalls(ctx)).find((x) => x.kind === 'HCSMachine' && x.name === st.described);
        const host = (await hostsNow(ctx)).find((h) => h.machine === st.described)?.hostname;
        return `the worker ${st.described}${host ? ` (hostname ${host})` : ''}: its Conditions and Events are what the "why" panel reads${s ? ` — here ${s.condition}=False ${s.reason}` : ''}`;
      },
    },
  ];
}

/** The EDITOR script `kubectl edit kubeadmcontrolplane` gets: the four fields of KCP-3 to one matrix row, in one edit. */
function editorScript(ctx: DemoCtx, v: DemoValues, from: MatrixRow, to: MatrixRow, template: string, newTemplate: string): string {
  const file = join(ctx.dir, 'edit-kcp.sh');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      'exec sed -i \\',
      `  -e '/^spec:$/,/^status:$/s/^  version: ${from.kubernetesVersion}$/  version: ${to.kubernetesVersion}/' \\`,
      `  -e '/^      dns:$/,/imageTag:/s/imageTag: .*/imageTag: ${to.coredns}/' \\`,
      `  -e '/^        local:$/,/imageTag:/s/imageTag: .*/imageTag: ${to.etcd}/' \\`,
      `  -e 's/^      name: ${template}$/      name: ${newTemplate}/' \\`,
      '  "$1"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return file;
}

/** The upgrade document (seeds/004): the control plane's image update and version upgrade, Kube-OVN step by step, verification. */
export function clusterUpgradeSteps(v: DemoValues): Step[] {
  const doc = loadDocument(UPGRADE_DOC);
  const st = { before: [] as string[], template: '', kcp: `${v.cluster}-control-plane` };
  const base = (): Placeholders => ({ '<cluster-name>': v.cluster, '<kcp-name>': st.kcp });
  const remember = async (ctx: DemoCtx): Promise<undefined> => {
    st.before = (await cps(ctx)).map((m) => m.metadata.name);
    st.template = (await getJson<Obj>(ctx, `${KCP}/${st.kcp}`)).spec.machineTemplate!.infrastructureRef.name;
    return undefined;
  };
  const infraName = (): string => `${st.template.replace(/-v[\d.]+$|-infra$/, '')}-infra`;
  const k8sName = (): string => `${st.template.replace(/-v[\d.]+$|-infra$/, '')}-${v.to.acpVersion}`;
  const kcpRolled = (version: () => string): Until['cond'] => async (ctx) => {
    const k = await getJson<Obj>(ctx, `${KCP}/${st.kcp}`);
    return (await rolledOut(cps, () => 3, () => st.before, version)(ctx)) && k.status?.updatedReplicas === k.status?.replicas && k.status?.readyReplicas === k.status?.replicas;
  };
  const jsonpath = cmd(doc, '-o jsonpath=', () => ({}));
  return [
    { id: 'cp-copy', title: 'Control plane infrastructure: copy the template', prepare: remember, command: () => fill(doc.commands[0]!.text, { '<current-template-name>': st.template }), edit: (ctx) => (editTemplateCopy(join(ctx.dir, 'new-cp-template.yaml'), infraName(), SERVER_GENERATED, (spec) => (spec.flavorName = v.flavor)), `new-cp-template.yaml: metadata.name ${infraName()}, server-generated fields removed, flavorName ${v.flavor}`), look: 'the copy of the control plane\'s template' },
    { id: 'cp-apply', title: 'Control plane infrastructure: create it', command: nth(doc, 'kubectl apply -f new-cp-template.yaml', 0, base), look: 'a new HCSMachineTemplate' },
    { id: 'cp-patch', title: 'Control plane infrastructure: point the KubeadmControlPlane at it (KCP-2)', command: () => fill(doc.commands.find((c) => c.text.includes('kubectl patch kubeadmcontrolplane'))!.text, { ...base(), '<new-template-name>': infraName() }), look: async (ctx) => {
      const surge = String((await getJson<Obj & { spec: { rolloutStrategy?: { rollingUpdate?: { maxSurge?: number | string } } } }>(ctx, `${KCP}/${st.kcp}`)).spec.rolloutStrategy?.rollingUpdate?.maxSurge ?? 1);
      return surge === '0' ? 'maxSurge 0: one control plane machine removed, then replaced on its hostname and disk (KCP-1)' : `maxSurge ${surge}: a surge control plane machine needs a free pool entry (KCP-1 wants maxSurge 0 with persistent disks)`;
    } },
    { id: 'cp-watch', title: 'Control plane infrastructure: watch', command: cmd(doc, 'kubectl get kubeadmcontrolplane <kcp-name> -n cpaas-system -w', base), watch: true, until: { what: 'the control plane replaced', cond: kcpRolled(() => v.from.kubernetesVersion) }, look: (_c, out) => `${kcpLook(out)}; the rows above: READY never above DESIRED (maxSurge 0); on the page the control plane rows change machine one after the other` },
    { id: 'cp-machines', title: 'Control plane infrastructure: the machines', command: nth(doc, '-l cluster.x-k8s.io/control-plane', 0, base), look: async (ctx, out) => `${machinesLook(out)}; new machines: ${(await hostOf(ctx, (await cps(ctx)).map((m) => m.metadata.name).filter((n) => !st.before.includes(n)))).join(', ') || 'none'}` },
    { id: 'k8s-copy', title: `Kubernetes version: a template with the ${v.to.alaudaOSImage} image`, prepare: remember, command: () => fill(doc.commands.find((c) => c.text.includes('<current-cp-template-name>'))!.text, { '<current-cp-template-name>': st.template }), edit: (ctx) => (editTemplateCopy(join(ctx.dir, 'new-cp-template.yaml'), k8sName(), SERVER_GENERATED, (spec) => (spec.imageName = v.to.alaudaOSImage)), `new-cp-template.yaml: metadata.name ${k8sName()}, imageName ${v.to.alaudaOSImage}`), look: 'the image of the matrix row' },
    { id: 'k8s-apply', title: 'Kubernetes version: create it', command: nth(doc, 'kubectl apply -f new-cp-template.yaml', 1, base), look: 'a new HCSMachineTemplate' },
    {
      id: 'k8s-edit',
      title: `Kubernetes version: kubectl edit, four fields in one edit (KCP-3): ${v.to.kubernetesVersion}, CoreDNS ${v.to.coredns}, etcd ${v.to.etcd}, template`,
      command: cmd(doc, 'kubectl edit kubeadmcontrolplane', base),
      // The editor kubectl starts: a sed script over the file it is given, the four fields of the matrix row (what a presenter types by hand).
      env: (ctx) => {
        const editor = editorScript(ctx, v, v.from, v.to, st.template, k8sName());
        return { EDITOR: editor, KUBE_EDITOR: editor };
      },
      look: 'the control plane rolls to the new version, one machine at a time',
    },
    { id: 'ovn-annotate', title: 'Kube-OVN step 1: the Cluster annotation (OVN-3: it alone moves nothing)', command: nth(doc, 'kubectl annotate cluster', 0, () => ({ ...base(), '<kube-ovn-version-from-matrix>': v.to.kubeOvn })), look: 'nothing moves: the annotation records the target only' },
    { id: 'ovn-patch', title: 'Kube-OVN step 2: the AppRelease\'s targetRevision, on the workload cluster (OVN-4)', command: nth(doc, 'kubectl patch apprelease', 0, () => ({ '<kube-ovn-version-from-matrix>': v.to.kubeOvn })), workload: true, look: 'the chart starts upgrading' },
    { id: 'ovn-get', title: 'Kube-OVN: the AppRelease', command: cmd(doc, 'kubectl get apprelease cni-kube-ovn -n cpaas-system', () => ({})), workload: true, look: (_c, out) => appReleaseLook(out, v.to.kubeOvn) },
    {
      id: 'ovn-phases',
      title: 'Kube-OVN: the phases, one at a time (OVN-4, OVN-6)',
      command: jsonpath,
      workload: true,
      phases: { done: (out) => out.startsWith(`Installed: ${v.to.kubeOvn}\n`) && out.endsWith('Phase: Success\n') },
      until: { what: `the control plane rolled to ${v.to.kubernetesVersion}`, cond: kcpRolled(() => v.to.kubernetesVersion) },
      look: (_c, out) => ovnLook(out, v.to.kubeOvn),
    },
    { id: 'verify-kcp', title: 'Verify: the KubeadmControlPlane', command: exact(doc, 'kubectl get kubeadmcontrolplane <kcp-name> -n cpaas-system', 0, base), look: (_c, out) => kcpLook(out) },
    { id: 'verify-machines', title: 'Verify: the control plane machines', command: nth(doc, '-l cluster.x-k8s.io/control-plane', 1, base), look: (_c, out) => machinesLook(out) },
    {
      id: 'verify-nodes',
      title: 'Verify: the nodes',
      command: cmd(doc, 'kubectl get nodes', () => ({})),
      workload: true,
      // The document's check is for a healthy cluster: every rollout finished first — the workers the worker document's upgrade left held by the preflight checks go on once the control plane is upgraded (UPG-1).
      before: { what: 'every rollout finished (a worker upgrade held for the control plane goes on by itself now, UPG-1)', cond: settled },
      look: (_c, out) => nodesLook(out, v.to.kubernetesVersion),
    },
  ];
}

/**
 * The two documents as guided demos: their commands in their order, taken
 * from their text (src/harness/demo/document.ts), with the placeholders filled in
 * from the served testbed (names read through the API) and the catalog (the
 * next flavor, the next OS Support Matrix row), the edits the documents ask
 * for in words done for the presenter, what to look at, and how far virtual
 * time has to move after each step.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { MatrixRow } from '../../product/matrix/matrix.js';
import { editTemplateCopy, fill, loadDocument, UPGRADE_DOC, WORKER_DOC, type Placeholders } from './document.js';
import { getJson, type DemoCtx, type Step, type Until } from './run.js';

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

/** `n` machines Running at `version` (when given), none being deleted, none of `old`. */
const rolledOut = (machines: (ctx: DemoCtx) => Promise<Obj[]>, n: () => number, old: () => string[], version?: () => string): Until['cond'] => async (ctx) => {
  const ms = await machines(ctx);
  const deleting = (await all(ctx, `${CAPI}/machines`)).some((m) => m.metadata.deletionTimestamp);
  return !deleting && ms.length === n() && ms.every((m) => m.status?.phase === 'Running' && !old().includes(m.metadata.name) && (!version || (m.spec as { version?: string }).version === version()));
};

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
  const st = { replicas: 3, before: [] as string[], template: '', newHost: '' };
  const base = (): Placeholders => ({ '<cluster-name>': v.cluster });
  const remember = async (ctx: DemoCtx): Promise<undefined> => {
    st.before = (await workers(ctx, v)).map((m) => m.metadata.name);
    st.template = (await md(ctx, v)).spec.template!.spec.infrastructureRef.name;
    return undefined;
  };
  const k8sTemplate = `${v.cluster}-worker-template-${v.to.acpVersion}`;
  return [
    { id: 'pool', title: 'Persistent disks: the worker pool and its entries (POOL-5)', command: cmd(doc, '-worker-pool -n cpaas-system -o yaml', base), look: 'status.entries: every hostname with its machine and its persistent disk (Attached, volumeId); on the page, one row per hostname' },
    { id: 'machines', title: 'Scale out: the machines now', command: cmd(doc, 'kubectl get machines -n cpaas-system', base), look: 'NODENAME: the hostnames of the pool entries', prepare: async (ctx) => ((st.replicas = (await md(ctx, v)).spec.replicas ?? 3), undefined) },
    { id: 'machines-l', title: 'Scale out: the MachineDeployment\'s machines', command: cmd(doc, '-l cluster.x-k8s.io/deployment-name', base), look: 'the same machines, selected by the MachineDeployment label' },
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
    { id: 'scale-out-watch', title: 'Scale out: watch the machines', command: nth(doc, 'kubectl get machines -n cpaas-system -w', 0, base), watch: true, until: { what: 'the new machine Running', cond: async (ctx) => (await workers(ctx, v)).filter((m) => m.status?.phase === 'Running').length === st.replicas + 1 }, look: 'Pending → Provisioning → Provisioned → Running; on the page the new hostname gets its machine and a fresh disk' },
    { id: 'md', title: 'Scale out: the MachineDeployment', command: cmd(doc, 'kubectl get machinedeployment <cluster-name>-md-0', base), look: 'REPLICAS READY UPDATED all at the new count' },
    { id: 'scale-in', title: 'Scale in: back to the previous count', command: nth(doc, '"/spec/replicas"', 1, () => ({ ...base(), '<new-replica-count>': String(st.replicas) })), look: 'one machine goes to Deleting; its disk is detached and kept (DISK-9)' },
    { id: 'scale-in-watch', title: 'Scale in: watch', command: nth(doc, 'kubectl get machines -n cpaas-system -w', 1, base), watch: true, until: { what: 'the removed machine gone', cond: async (ctx) => (await all(ctx, `${CAPI}/machines?labelSelector=${encodeURIComponent(`cluster.x-k8s.io/deployment-name=${v.cluster}-md-0`)}`)).length === st.replicas }, look: 'the page: the freed hostname keeps its disk with no machine ("free, data kept")' },
    { id: 'infra-copy', title: 'Infrastructure upgrade: copy the template', prepare: remember, command: () => fill(doc.commands.find((c) => c.text.includes('-o yaml > new-template.yaml'))!.text, { '<current-template>': st.template }), edit: (ctx) => (editTemplateCopy(join(ctx.dir, 'new-template.yaml'), `${st.template.replace(/-v[\d.]+$|-infra$/, '')}-infra`, SERVER_GENERATED, (spec) => (spec.flavorName = v.flavor)), `new-template.yaml: metadata.name ${st.template.replace(/-v[\d.]+$|-infra$/, '')}-infra, server-generated fields removed, flavorName ${v.flavor}`), look: 'the copy carries no providerID/serverId (TPL-4)' },
    { id: 'infra-apply', title: 'Infrastructure upgrade: create the new template', command: cmd(doc, 'kubectl apply -f new-template.yaml', base), look: 'a new HCSMachineTemplate; nothing rolls yet' },
    { id: 'infra-patch', title: 'Infrastructure upgrade: point the MachineDeployment at it (MD-5)', command: cmd(doc, '"infrastructureRef":{"name":"<new-template>"}}}}}', () => ({ ...base(), '<new-template>': `${st.template.replace(/-v[\d.]+$|-infra$/, '')}-infra` })), look: 'a rolling replacement: one machine removed, then its replacement on the same hostname and disk' },
    { id: 'infra-watch', title: 'Infrastructure upgrade: watch the rollout', command: nth(doc, 'kubectl get machines -n cpaas-system -w', 2, base), watch: true, until: { what: 'every worker replaced', cond: rolledOut((ctx) => workers(ctx, v), () => st.replicas, () => st.before) }, look: 'the page: each hostname row shows the old machine ending and the new one starting, the disk re-attached' },
    { id: 'k8s-copy', title: `Kubernetes upgrade: a template with the ${v.to.kubernetesVersion} image (${v.to.alaudaOSImage})`, prepare: remember, command: () => fill(doc.commands.find((c) => c.text.includes('-o yaml > new-template.yaml'))!.text, { '<current-template>': st.template }), edit: (ctx) => (editTemplateCopy(join(ctx.dir, 'new-template.yaml'), k8sTemplate, SERVER_GENERATED, (spec) => (spec.imageName = v.to.alaudaOSImage)), `new-template.yaml: metadata.name ${k8sTemplate}, imageName ${v.to.alaudaOSImage}`), look: 'the image of the OS Support Matrix row (hcs-testbed catalog)' },
    { id: 'k8s-apply', title: 'Kubernetes upgrade: create it', command: cmd(doc, 'kubectl apply -f new-template.yaml', base), look: 'a new HCSMachineTemplate' },
    {
      id: 'k8s-patch',
      title: 'Kubernetes upgrade: version and template in one patch (MD-5)',
      command: cmd(doc, '"version":"<kubernetes-version>"', () => ({ ...base(), '<new-template>': k8sTemplate, '<kubernetes-version>': v.to.kubernetesVersion })),
      until: { what: `every worker at ${v.to.kubernetesVersion}`, cond: rolledOut((ctx) => workers(ctx, v), () => st.replicas, () => st.before, () => v.to.kubernetesVersion) },
      look: 'with a control plane still at the old version, Cluster API\'s MachineSet preflight checks hold the new machines: see "Why is it waiting?" (UPG-1)',
    },
    { id: 'nodes', title: 'Verify: the nodes on the workload cluster', command: nth(doc, 'kubectl get nodes', 0, base), workload: true, look: 'VERSION of each worker' },
    { id: 'verify-machines', title: 'Verify: the machines', command: exact(doc, 'kubectl get machines -n cpaas-system', 1, base), look: 'every machine Running, VERSION' },
    { id: 'verify-nodes', title: 'Verify: the nodes', command: nth(doc, 'kubectl get nodes', 1, base), workload: true, look: 'all Ready' },
    { id: 'verify-md', title: 'Verify: the MachineDeployments', command: cmd(doc, 'kubectl get machinedeployment -n cpaas-system', base), look: 'REPLICAS = READY = UPDATED' },
    { id: 'logs', title: 'Troubleshooting: the provider\'s log (OPS-3)', command: cmd(doc, 'kubectl logs -n cpaas-system deployment/hcs-controller-manager', base), look: 'one JSON line per decision, with the SPEC rules' },
    { id: 'describe', title: 'Troubleshooting: describe an HCSMachine', command: async (ctx) => fill(doc.commands.find((c) => c.text.includes('kubectl describe hcsmachine'))!.text, { '<machine-name>': (await list(ctx, `${INFRA}/hcsmachines`))[0]?.metadata.name ?? '' }), look: 'Conditions and Events: the reasons the "why" panel reads' },
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
    { id: 'cp-patch', title: 'Control plane infrastructure: point the KubeadmControlPlane at it (KCP-2)', command: () => fill(doc.commands.find((c) => c.text.includes('kubectl patch kubeadmcontrolplane'))!.text, { ...base(), '<new-template-name>': infraName() }), look: 'maxSurge 0: one control plane machine removed, then replaced on its hostname and disk (KCP-1)' },
    { id: 'cp-watch', title: 'Control plane infrastructure: watch', command: cmd(doc, 'kubectl get kubeadmcontrolplane <kcp-name> -n cpaas-system -w', base), watch: true, until: { what: 'the control plane replaced', cond: kcpRolled(() => v.from.kubernetesVersion) }, look: 'READY never above 3; the page: the three demo-cp rows change machine one after the other' },
    { id: 'cp-machines', title: 'Control plane infrastructure: the machines', command: nth(doc, '-l cluster.x-k8s.io/control-plane', 0, base), look: 'the same hostnames, new machines' },
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
    { id: 'ovn-get', title: 'Kube-OVN: the AppRelease', command: cmd(doc, 'kubectl get apprelease cni-kube-ovn -n cpaas-system', () => ({})), workload: true, look: 'SYNC and HEALTH' },
    {
      id: 'ovn-phases',
      title: 'Kube-OVN: the phases, one at a time (OVN-4, OVN-6)',
      command: jsonpath,
      workload: true,
      phases: { done: (out) => out.startsWith(`Installed: ${v.to.kubeOvn}\n`) && out.endsWith('Phase: Success\n') },
      until: { what: `the control plane rolled to ${v.to.kubernetesVersion}`, cond: kcpRolled(() => v.to.kubernetesVersion) },
      look: 'Upgrading (old revision) → HealthChecking (new revision, pods not yet checked) → Success: done only with both (OVN-6)',
    },
    { id: 'verify-kcp', title: 'Verify: the KubeadmControlPlane', command: exact(doc, 'kubectl get kubeadmcontrolplane <kcp-name> -n cpaas-system', 0, base), look: `VERSION ${v.to.kubernetesVersion}, 3/3` },
    { id: 'verify-machines', title: 'Verify: the control plane machines', command: nth(doc, '-l cluster.x-k8s.io/control-plane', 1, base), look: 'the same hostnames' },
    { id: 'verify-nodes', title: 'Verify: the nodes', command: cmd(doc, 'kubectl get nodes', () => ({})), workload: true, look: `control plane at ${v.to.kubernetesVersion}; workers still at ${v.from.kubernetesVersion} until their MachineDeployment is upgraded (step 4 of the order, the worker document)` },
  ];
}

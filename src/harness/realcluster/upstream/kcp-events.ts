/**
 * The `source: capi` KubeadmControlPlane events of the model
 * (`kcp.machine-created`, `kcp.scale-down`: src/world/capi/kcp.ts createMachine and
 * decision) on upstream Cluster API, where KCP writes no testbed events: the
 * upstream harness records them from what it observes KCP write to the
 * management cluster, so a scenario's `events:` checks read the same on
 * both sides. They carry `data.observed: true` and say "observed" in their
 * message.
 *
 * - **`kcp.machine-created`**: a control plane Machine (label
 *   `cluster.x-k8s.io/control-plane`, controller owner a
 *   KubeadmControlPlane) appears. Message as the model's: `KubeadmControlPlane
 *   <ns>/<kcp> created [initial ]control plane Machine <m> (<spec.version>,
 *   <template>)`, the template being the HCSMachine's
 *   `cluster.x-k8s.io/cloned-from-name` (upstream's CloneTemplate writes it;
 *   else spec.infrastructureRef.name). "initial" when no other control plane
 *   Machine of that KCP existed: upstream creates the kubeadm-init Machine
 *   exactly then (controlplane/kubeadm/internal/controllers/controller.go
 *   reconcile: `numMachines == 0` → initializeControlPlane).
 * - **`kcp.scale-down`**: a control plane Machine gets a deletionTimestamp
 *   (or is gone without one having been seen) while its KubeadmControlPlane
 *   is not being deleted. Upstream's scaleDownControlPlane (scale.go) deletes
 *   the Machine and records no Event on success, so the deletion itself is
 *   what is observable. A control plane Machine deleted by someone else (an
 *   operator, remediation) would be counted too; the scenarios compared on
 *   upstream delete none.
 *
 * - **`kcp.certificates-expiry`** (upstream only: the model's KCP writes the
 *   same annotation, src/world/capi/kcp-certificates.ts, but no event, as upstream
 *   only logs it): a KubeadmConfig owned by a Machine gets
 *   the `machine.cluster.x-k8s.io/certificates-expiry` annotation, which
 *   KCP's reconcileCertificateExpiries writes from the kube-apiserver
 *   certificate it read through `pods/kube-apiserver-<node>/portforward`
 *   (src/world/facade/portforward/apiserver-forward.ts). `data`: machine, node, the
 *   annotation's value and the Node's creationTimestamp as the workload
 *   cluster has it (the moment the testbed's kubeadm issued that
 *   certificate), so a test can check expiry = Node creation + 8760 h.
 *
 * Exactly once each per Machine (KubeadmConfig) uid: watch events repeat (a re-list after a
 * watch restart replays ADDED for every Machine, MODIFIED arrives for every
 * status write). Handled in watch order, one at a time.
 */
import { LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE, ANNOTATION_CERTIFICATES_EXPIRY, ANNOTATION_CLONED_FROM_NAME, type KubeadmConfig, type KubeadmControlPlane, type Machine } from '../../../product/api/capi.js';
import type { Node } from '../../../product/api/core.js';
import { errorMessage } from '../../../core/errors.js';
import type { EventLog } from '../../../core/events.js';
import type { KubeClient } from '../../../core/kube/client.js';
import type { KubeObject, WatchEvent } from '../../../core/kube/types.js';

export interface KcpObserverInput {
  mgmt: KubeClient;
  /** The workload cluster's client (for kcp.certificates-expiry's Node creation time). */
  workload?: (namespace: string, cluster: string) => KubeClient;
  events: EventLog;
  /** Logs a failed read (the event is then recorded with what is known). */
  warn?: (msg: string) => void;
}

interface Seen {
  kcp: string;
  deleting: boolean;
}

/** Watches Machines and records the observed KCP events; returns a function that stops the watch. */
export function observeKcpMachines(i: KcpObserverInput): () => void {
  const seen = new Map<string, Seen>();
  /** KCP key ("ns/name") → uids of its control plane Machines that exist. */
  const live = new Map<string, Set<string>>();
  let chain: Promise<void> = Promise.resolve();

  const handle = async (e: WatchEvent<Machine>): Promise<void> => {
    const m = e.object;
    const uid = m.metadata.uid;
    if (!uid || m.metadata.labels?.[LABEL_CONTROL_PLANE] === undefined) return;
    const owner = (m.metadata.ownerReferences ?? []).find((r) => r.controller && r.kind === 'KubeadmControlPlane');
    if (!owner) return;
    const namespace = m.metadata.namespace ?? 'default';
    const kcpKey = `${namespace}/${owner.name}`;
    let s = seen.get(uid);
    if (!s) {
      const others = live.get(kcpKey) ?? new Set<string>();
      live.set(kcpKey, others);
      const initial = others.size === 0;
      others.add(uid);
      s = { kcp: kcpKey, deleting: false };
      seen.set(uid, s);
      const version = m.spec.version ?? '';
      const template = await templateOf(i, m);
      i.events.record({
        source: 'capi',
        type: 'kcp.machine-created',
        message: `KubeadmControlPlane ${kcpKey} created ${initial ? 'initial ' : ''}control plane Machine ${m.metadata.name} (${version}, ${template}) [observed]`,
        data: { kcp: owner.name, machine: m.metadata.name, init: initial, version, template, observed: true },
      });
    }
    const gone = e.type === 'DELETED';
    if (gone) live.get(kcpKey)?.delete(uid);
    if (!s.deleting && (gone || m.metadata.deletionTimestamp)) {
      s.deleting = true;
      if (await kcpDeleting(i, namespace, owner.name)) return;
      i.events.record({
        source: 'capi',
        type: 'kcp.scale-down',
        message: `KubeadmControlPlane ${kcpKey}: deleting ${m.metadata.name} [observed: ${gone && !m.metadata.deletionTimestamp ? 'gone' : 'deletionTimestamp set'}]`,
        data: { kcp: owner.name, machine: m.metadata.name, observed: true },
        rules: ['KCP-1', 'KCP-2'],
      });
    }
  };

  return i.mgmt.watch<Machine>(
    'Machine',
    (e) => {
      chain = chain.then(() => handle(e)).catch((err: unknown) => i.warn?.(`observing ${e.object.metadata.name}: ${errorMessage(err)}`));
    },
    { shared: true },
  );
}

async function templateOf(i: KcpObserverInput, m: Machine): Promise<string> {
  const ref = m.spec.infrastructureRef;
  try {
    const infra = await i.mgmt.get<KubeObject>({ kind: ref.kind ?? 'HCSMachine', namespace: ref.namespace ?? m.metadata.namespace ?? 'default', name: ref.name });
    const from = infra?.metadata.annotations?.[ANNOTATION_CLONED_FROM_NAME];
    if (from) return from;
  } catch (err) {
    i.warn?.(`reading ${ref.kind} ${ref.name}: ${errorMessage(err)}`);
  }
  return ref.name;
}

async function kcpDeleting(i: KcpObserverInput, namespace: string, name: string): Promise<boolean> {
  try {
    const kcp = await i.mgmt.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace, name });
    return !kcp || !!kcp.metadata.deletionTimestamp;
  } catch (err) {
    i.warn?.(`reading KubeadmControlPlane ${namespace}/${name}: ${errorMessage(err)}`);
    return false;
  }
}

/** Watches KubeadmConfigs and records `kcp.certificates-expiry` once per KubeadmConfig that gets the annotation. */
export function observeCertificateExpiries(i: KcpObserverInput): () => void {
  const seen = new Set<string>();
  let chain: Promise<void> = Promise.resolve();
  const handle = async (e: WatchEvent<KubeadmConfig>): Promise<void> => {
    const c = e.object;
    const uid = c.metadata.uid;
    const expiry = c.metadata.annotations?.[ANNOTATION_CERTIFICATES_EXPIRY];
    if (!uid || e.type === 'DELETED' || expiry === undefined || seen.has(uid)) return;
    const owner = (c.metadata.ownerReferences ?? []).find((r) => r.controller && r.kind === 'Machine');
    if (!owner) return;
    seen.add(uid);
    const namespace = c.metadata.namespace ?? 'default';
    const machine = await i.mgmt.get<Machine>({ kind: 'Machine', namespace, name: owner.name }).catch(() => undefined);
    const node = machine?.status?.nodeRef?.name ?? '';
    const cluster = c.metadata.labels?.[LABEL_CLUSTER_NAME] ?? machine?.spec.clusterName ?? '';
    let nodeCreated = '';
    if (node && cluster && i.workload) {
      try {
        nodeCreated = (await i.workload(namespace, cluster).get<Node>({ kind: 'Node', name: node }))?.metadata.creationTimestamp ?? '';
      } catch (err) {
        i.warn?.(`reading Node ${node}: ${errorMessage(err)}`);
      }
    }
    i.events.record({
      source: 'capi',
      type: 'kcp.certificates-expiry',
      message: `KubeadmConfig ${namespace}/${c.metadata.name} (Machine ${owner.name}, Node ${node || '?'}): certificates expire ${expiry} [observed]`,
      data: { machine: owner.name, kubeadmConfig: c.metadata.name, node, expiry, nodeCreated, observed: true },
    });
  };
  return i.mgmt.watch<KubeadmConfig>(
    'KubeadmConfig',
    (e) => {
      chain = chain.then(() => handle(e)).catch((err: unknown) => i.warn?.(`observing ${e.object.metadata.name}: ${errorMessage(err)}`));
    },
    { shared: true },
  );
}

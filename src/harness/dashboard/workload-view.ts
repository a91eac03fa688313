/**
 * The workload clusters on the dashboard (issue 34): what the upgrade
 * document looks at on the cluster being operated — its Nodes with their
 * versions and readiness, and the Kube-OVN AppRelease with its target,
 * installed revision, phase and the phases it went through (OVN-4, OVN-6:
 * done only with phase Success and installedRevision at the target). The
 * phases come from the event log (`apprelease.phase`, one per transition),
 * so none is missed between two updates of the page.
 */
import type { AppRelease } from '../../product/api/apprelease.js';
import { chartOf } from '../../product/api/apprelease.js';
import type { LogEvent } from '../../core/events.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { KubeObject } from '../../core/kube/types.js';

export interface WorkloadNode {
  /** cluster/name */
  id: string;
  cluster: string;
  name: string;
  ready: boolean;
  version: string;
  roles: string;
  unschedulable: boolean;
}

export interface AppReleaseView {
  /** cluster/namespace/name */
  id: string;
  cluster: string;
  name: string;
  namespace: string;
  target: string;
  installed: string;
  phase: string;
  /** Done as the document defines it (OVN-6): Success with installedRevision at the target. */
  done: boolean;
  /** The phases it went through, oldest first (the last 12). */
  history: { t: number; phase: string; installed: string; target: string }[];
}

export interface WorkloadView {
  /** namespace/name of the Cluster; its kubectl context is the name. */
  id: string;
  context: string;
}

/** The workload clusters, their nodes and their AppReleases: three keyed lists (a node that changes sends that node). */
export interface WorkloadParts {
  workloads: WorkloadView[];
  nodes: WorkloadNode[];
  appReleases: AppReleaseView[];
}

type NodeObj = KubeObject & { spec?: { unschedulable?: boolean }; status?: { conditions?: { type: string; status: string }[]; nodeInfo?: { kubeletVersion?: string } } };

export interface WorkloadSource {
  names(): string[];
  store(namespace: string, name: string): EmbeddedStore;
}

/** Phase transitions of every AppRelease, keyed cluster|namespace/name, from the event log. */
export function appReleaseHistory(events: readonly LogEvent[]): Map<string, AppReleaseView['history']> {
  const out = new Map<string, AppReleaseView['history']>();
  for (const e of events) {
    if (e.type !== 'apprelease.phase') continue;
    const key = `${String(e.data?.cluster ?? '')}|${String(e.data?.appRelease ?? '')}`;
    const list = out.get(key) ?? [];
    list.push({ t: e.t, phase: String(e.data?.phase ?? ''), installed: String(e.data?.installedRevision ?? ''), target: String(e.data?.targetRevision ?? '') });
    if (list.length > 12) list.shift();
    out.set(key, list);
  }
  return out;
}

export function workloadViews(src: WorkloadSource, history: Map<string, AppReleaseView['history']>): WorkloadParts {
  const out: WorkloadParts = { workloads: [], nodes: [], appReleases: [] };
  for (const key of src.names()) {
    const [namespace, name] = key.split('/') as [string, string];
    const store = src.store(namespace, name);
    out.workloads.push({ id: key, context: name });
    const nodes = store
      .listSharedSync<NodeObj>('Node')
      .map((n) => ({
        id: `${key}/${n.metadata.name}`,
        cluster: key,
        name: n.metadata.name,
        ready: n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
        version: n.status?.nodeInfo?.kubeletVersion ?? '',
        roles: Object.keys(n.metadata.labels ?? {}).filter((l) => l.startsWith('node-role.kubernetes.io/')).map((l) => l.slice('node-role.kubernetes.io/'.length)).join(',') || '<none>',
        unschedulable: !!n.spec?.unschedulable,
      }))
      .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
    out.nodes.push(...nodes);
    for (const ar of store.listSharedSync<AppRelease>('AppRelease')) {
      const { source, status } = chartOf(ar as AppRelease);
      const target = source?.targetRevision ?? '';
      const installed = status?.installedRevision ?? '';
      const phase = status?.phase ?? '';
      const arKey = `${ar.metadata.namespace ?? ''}/${ar.metadata.name}`;
      out.appReleases.push({ id: `${key}/${arKey}`, cluster: key, name: ar.metadata.name, namespace: ar.metadata.namespace ?? '', target, installed, phase, done: phase === 'Success' && installed === target, history: history.get(`${key}|${arKey}`) ?? [] });
    }
  }
  return out;
}

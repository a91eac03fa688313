/**
 * Drill-down (issue 34): one object of the management cluster (or of a
 * workload cluster) as the page shows it in place — its conditions, the
 * Kubernetes Events about it, and its YAML (managedFields left out, as
 * `kubectl get -o yaml` shows them by default since 1.21).
 */
import { stringify } from 'yaml';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { KubeObject } from '../../core/kube/types.js';
import { badRequest, ApiError } from './time-api.js';

export interface ObjectDetail {
  kind: string;
  namespace: string;
  name: string;
  conditions: { type: string; status: string; reason: string; message: string; severity: string; lastTransitionTime: string }[];
  events: { t: string; type: string; reason: string; message: string; count: number }[];
  yaml: string;
}

interface Ev {
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  reason?: string;
  message?: string;
  type?: string;
  lastTimestamp?: string;
  eventTime?: string;
  count?: number;
}

const NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;

export function objectDetail(src: { mgmt: EmbeddedStore; workloads?: { names(): string[]; store(namespace: string, name: string): EmbeddedStore } }, q: { kind: string; namespace: string; name: string; cluster: string }): ObjectDetail {
  if (!KIND.test(q.kind)) throw badRequest(`kind: give a Kubernetes kind (got "${q.kind}")`);
  if (!NAME.test(q.name)) throw badRequest(`name: give an object name (got "${q.name}")`);
  if (q.namespace !== '' && !NAME.test(q.namespace)) throw badRequest(`namespace: not a namespace name (got "${q.namespace}")`);
  let store = src.mgmt;
  if (q.cluster) {
    if (!src.workloads?.names().includes(q.cluster)) throw new ApiError(404, 'NotFound', `cluster: no workload cluster "${q.cluster}"`);
    const [n, c] = q.cluster.split('/') as [string, string];
    store = src.workloads.store(n, c);
  }
  const ref = { kind: q.kind, name: q.name, ...(q.namespace ? { namespace: q.namespace } : {}) };
  const o = store.getSync<KubeObject & { status?: { conditions?: Record<string, string>[] } }>(ref);
  if (!o) throw new ApiError(404, 'NotFound', `${q.kind} ${q.namespace ? `${q.namespace}/` : ''}${q.name} not found`);
  const { managedFields: _m, ...metadata } = o.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  const conditions = (o.status?.conditions ?? []).map((c) => ({ type: c.type ?? '', status: c.status ?? '', reason: c.reason ?? '', message: c.message ?? '', severity: c.severity ?? '', lastTransitionTime: c.lastTransitionTime ?? '' }));
  const events = store
    .listSync<KubeObject & Ev>('Event', q.namespace ? { namespace: q.namespace } : {})
    .filter((e) => e.involvedObject?.kind === q.kind && e.involvedObject.name === q.name)
    .map((e) => ({ t: e.lastTimestamp ?? e.eventTime ?? '', type: e.type ?? 'Normal', reason: e.reason ?? '', message: e.message ?? '', count: e.count ?? 1 }))
    .sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0))
    .slice(-30);
  return { kind: q.kind, namespace: q.namespace, name: q.name, conditions, events, yaml: stringify({ ...o, metadata }) };
}

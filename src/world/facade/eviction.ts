/**
 * The pods/eviction subresource: `POST /api/v1/namespaces/<ns>/pods/<name>/eviction`
 * with a policy/v1 (or policy/v1beta1) Eviction, as kube-apiserver answers it
 * (kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go and the
 * create handler of k8s.io/apiserver, which gives a returned Status the code
 * 201; read, not copied):
 *
 * - evicted: 201 `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`;
 * - no such Pod: 404 `pods "<name>" not found`;
 * - the Pod's disruption budget allows none: 429 TooManyRequests, "Cannot evict
 *   pod as it would violate the pod's disruption budget.", a DisruptionBudget
 *   cause. PodDisruptionBudget objects are not modelled: the budget that allows
 *   none is the Node annotation testbed.hcs/drain-blocked (src/world/workload/drain.ts, MD-4);
 * - a body that is not an Eviction, or names another Pod: 400
 *   ("name in URL does not match name in Eviction object");
 * - `?dryRun=All` or `deleteOptions.dryRun: [All]`: decided, nothing deleted;
 *   both given and different: 400 as the apiserver's propagateDryRun.
 *
 * This is what `kubectl drain` uses once discovery lists pods/eviction with
 * group policy, version v1, kind Eviction (kubectl's CheckEvictionSupport);
 * without it kubectl falls back to deleting the Pods.
 */
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import { EvictionBlockedError, evictPod } from '../workload/drain.js';

export interface EvictionStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { name?: string; kind?: string; causes?: { reason: string; message: string }[]; retryAfterSeconds?: number };
  code: number;
}

const ACCEPTED = new Set(['policy/v1', 'policy/v1beta1']);

function failure(code: number, reason: string, message: string, details?: EvictionStatus['details']): EvictionStatus {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** Answer an eviction request; never throws for a client's mistake (the Status says it). */
export async function serveEviction(store: EmbeddedStore, namespace: string, name: string, body: unknown, queryDryRun: string | undefined): Promise<EvictionStatus> {
  const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown }; deleteOptions?: { dryRun?: unknown } };
  if (b.kind !== 'Eviction' || typeof b.apiVersion !== 'string' || !ACCEPTED.has(b.apiVersion)) {
    return failure(400, 'BadRequest', `the body must be an Eviction of policy/v1 (or policy/v1beta1), got kind ${JSON.stringify(b.kind ?? '')} apiVersion ${JSON.stringify(b.apiVersion ?? '')}`);
  }
  if (b.metadata?.name !== name) return failure(400, 'BadRequest', 'name in URL does not match name in Eviction object');
  if (b.metadata.namespace !== undefined && b.metadata.namespace !== namespace) return failure(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
  const bodyDry = Array.isArray(b.deleteOptions?.dryRun) ? (b.deleteOptions.dryRun as unknown[]) : [];
  const queryDry = queryDryRun ? [queryDryRun] : [];
  if (bodyDry.length && queryDry.length && JSON.stringify(bodyDry) !== JSON.stringify(queryDry)) {
    return failure(400, 'BadRequest', `Non-matching dry-run options in request and content: [${queryDry.join(' ')}] and [${bodyDry.join(' ')}]`);
  }
  const dry = [...bodyDry, ...queryDry];
  if (dry.some((d) => d !== 'All')) return failure(400, 'BadRequest', `invalid dry run option: ${JSON.stringify(dry.find((d) => d !== 'All'))} (supported: All)`);
  try {
    const r = await evictPod(store, namespace, name, { dryRun: dry.length > 0 });
    if (r === 'not-found') return failure(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  } catch (e) {
    if (e instanceof EvictionBlockedError) return failure(429, 'TooManyRequests', e.message, { causes: [{ reason: 'DisruptionBudget', message: e.budgetMessage }] });
    throw e;
  }
}

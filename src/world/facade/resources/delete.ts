/**
 * DELETE of one object: DeleteOptions from the body (kubectl delete
 * --dry-run=server sends {dryRun: ["All"]}; ?dryRun=All works too). A dry run
 * answers what the delete would leave and changes nothing.
 *
 * DeleteOptions.preconditions (uid, resourceVersion) are checked first, dry
 * run or not, as the apiserver does before a delete (k8s.io/apiserver
 * pkg/registry/rest/delete.go BeforeDelete; again in storage,
 * pkg/storage/interfaces.go Preconditions.Check): a mismatch is 409 Conflict,
 * nothing deleted (issue 32.5).
 */
import { rfc3339, type Clock } from '../../../core/clock.js';
import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import { KubeApiError } from '../../../core/kube/errors.js';
import type { ResourceInfo } from '../../../core/kube/resources.js';
import type { KubeObject } from '../../../core/kube/types.js';
import { deleteOptions, isDryRun } from '../access.js';

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** DeleteOptions.preconditions as the apiserver decodes them (strings; another type is a 400). */
export function preconditionsOf(opts: Record<string, unknown>): Preconditions | undefined {
  const p = opts.preconditions;
  if (p === undefined || p === null) return undefined;
  if (typeof p !== 'object' || Array.isArray(p)) throw new KubeApiError('BadRequest', 'DeleteOptions.preconditions must be an object with uid and/or resourceVersion');
  const out: Preconditions = {};
  for (const k of ['uid', 'resourceVersion'] as const) {
    const v = (p as Record<string, unknown>)[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new KubeApiError('BadRequest', `DeleteOptions.preconditions.${k} must be a string, got ${JSON.stringify(v)}`);
    out[k] = v;
  }
  return out;
}

/** BeforeDelete's check: the uid, then the resourceVersion, must be the object's (the messages are rest/delete.go's, the kind named as Kind[.group]). */
export function checkPreconditions(p: Preconditions | undefined, obj: KubeObject, info: ResourceInfo): void {
  if (!p) return;
  const on = `Operation cannot be fulfilled on ${info.group ? `${info.kind}.${info.group}` : info.kind} "${obj.metadata.name}"`;
  if (p.uid !== undefined && p.uid !== obj.metadata.uid) {
    throw new KubeApiError('Conflict', `${on}: the UID in the precondition (${p.uid}) does not match the UID in record (${obj.metadata.uid ?? ''}). The object might have been deleted and then recreated`);
  }
  if (p.resourceVersion !== undefined && p.resourceVersion !== obj.metadata.resourceVersion) {
    throw new KubeApiError('Conflict', `${on}: the ResourceVersion in the precondition (${p.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion ?? ''}). The object might have been modified`);
  }
}

export async function deleteObject(store: EmbeddedStore, clock: Clock, info: ResourceInfo, ref: { kind: string; namespace?: string; name: string }, body: unknown, params: URLSearchParams): Promise<KubeObject> {
  const opts = deleteOptions(body);
  const preconditions = preconditionsOf(opts as Record<string, unknown>);
  const dry = isDryRun(params, 'Delete', opts.dryRun);
  const before = store.getSync(ref);
  if (!before) throw KubeApiError.notFound(info.plural, ref.name);
  checkPreconditions(preconditions, before, info);
  if (dry) {
    // What the delete would leave: marked for deletion while finalizers remain, else the object as it was.
    const wouldWait = (before.metadata.finalizers?.length ?? 0) > 0;
    return wouldWait ? { ...before, metadata: { ...before.metadata, deletionTimestamp: before.metadata.deletionTimestamp ?? rfc3339(clock.now()), deletionGracePeriodSeconds: 0 } as KubeObject['metadata'] } : before;
  }
  await store.delete(ref);
  const after = store.getSync(ref);
  return after ?? { ...before, metadata: { ...before.metadata } };
}

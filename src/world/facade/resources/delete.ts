/**
 * DELETE of one object: DeleteOptions from the body (kubectl delete
 * --dry-run=server sends {dryRun: ["All"]}; ?dryRun=All works too). A dry run
 * answers what the delete would leave and changes nothing.
 */
import { rfc3339, type Clock } from '../../../core/clock.js';
import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import { KubeApiError } from '../../../core/kube/errors.js';
import type { ResourceInfo } from '../../../core/kube/resources.js';
import type { KubeObject } from '../../../core/kube/types.js';
import { deleteOptions, isDryRun } from '../access.js';

export async function deleteObject(store: EmbeddedStore, clock: Clock, info: ResourceInfo, ref: { kind: string; namespace?: string; name: string }, body: unknown, params: URLSearchParams): Promise<KubeObject> {
  const opts = deleteOptions(body);
  const dry = isDryRun(params, 'Delete', opts.dryRun);
  const before = store.getSync(ref);
  if (!before) throw KubeApiError.notFound(info.plural, ref.name);
  if (dry) {
    // What the delete would leave: marked for deletion while finalizers remain, else the object as it was.
    const wouldWait = (before.metadata.finalizers?.length ?? 0) > 0;
    return wouldWait ? { ...before, metadata: { ...before.metadata, deletionTimestamp: before.metadata.deletionTimestamp ?? rfc3339(clock.now()), deletionGracePeriodSeconds: 0 } as KubeObject['metadata'] } : before;
  }
  await store.delete(ref);
  const after = store.getSync(ref);
  return after ?? { ...before, metadata: { ...before.metadata } };
}

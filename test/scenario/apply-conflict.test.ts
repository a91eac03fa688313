/**
 * `kubectl apply` steps against a management cluster another client writes to
 * at the same time (an outside provider process, CI's outside-provider step):
 * the apply's update meets a 409 Conflict when that client wrote the object
 * between the apply's read and its write. kubectl re-reads and patches again up
 * to 5 times (maxPatchRetry, k8s.io/kubectl/pkg/cmd/apply/patcher.go); so does
 * applyObject. Seen in CI: scale-out-workers step 9 (worker-pool-4.yaml, the POOL-3
 * step that grows the pool before scaling out) failed
 * with Conflict while the Python provider wrote the pool's status.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../src/core/kube/client.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { APPLY_CONFLICT_RETRIES, applyObject } from '../../src/harness/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';

let tb: Testbed | undefined;
afterEach(async () => {
  await tb?.close();
  tb = undefined;
});

/** `client`, whose next `interfere` updates are each preceded by another client's write of the same object. */
function racing(client: KubeClient, interfere: number): KubeClient & { raced: () => number } {
  let raced = 0;
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'raced') return () => raced;
      if (prop === 'update') {
        return async (obj: KubeObject) => {
          if (raced < interfere) {
            raced++;
            await target.patch({ kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name }, 'merge', { metadata: { annotations: { [`other-writer-${raced}`]: 'x' } } });
          }
          return target.update(obj);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as KubeClient & { raced: () => number };
}

const cm = (v: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { v } }) as unknown as KubeObject;

describe('apply against a concurrent writer', () => {
  it('re-reads and writes again after a conflict, keeping the other writer\'s change', async () => {
    tb = await createTestbed({ seed: 1 });
    await applyObject(tb.world.mgmt, cm('1'));
    const client = racing(tb.world.mgmt, 2);
    const r = await applyObject(client, cm('2'));
    expect(client.raced()).toBe(2);
    expect(r.action).toBe('configured');
    const live = (await tb.world.mgmt.get({ kind: 'ConfigMap', namespace: 'default', name: 'settings' })) as unknown as { data: { v: string }; metadata: { annotations: Record<string, string> } };
    expect(live.data.v).toBe('2');
    expect(live.metadata.annotations['other-writer-2']).toBe('x');
  });

  it('gives up with the Conflict after kubectl\'s 5 retries', async () => {
    tb = await createTestbed({ seed: 1 });
    await applyObject(tb.world.mgmt, cm('1'));
    const client = racing(tb.world.mgmt, APPLY_CONFLICT_RETRIES + 1);
    await expect(applyObject(client, cm('2'))).rejects.toThrow(/the object has been modified/);
    expect(client.raced()).toBe(APPLY_CONFLICT_RETRIES + 1);
  });
});

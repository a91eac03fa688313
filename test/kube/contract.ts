/**
 * API-semantics contract shared by every KubeClient backend: the embedded
 * store, and the client-node backend talking to the HTTP facade. The same
 * tests run on both (contract-*.test.ts), so the controllers see one
 * behaviour whichever backend they run on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installAdmission } from '../../src/world/admission.js';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { installCrdSchemas } from '../../src/product/api/crds/index.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import type { KubeClient } from '../../src/core/kube/client.js';
import { KubeApiError } from '../../src/core/kube/errors.js';
import { ownerRef, type KubeObject, type WatchEvent } from '../../src/core/kube/types.js';

/** The store the contract runs against: CRD schemas + admission, a short watch history (5 events). */
export function contractStore(): EmbeddedStore {
  const store = new EmbeddedStore({ clock: new VirtualClock(Date.UTC(2026, 0, 1)), rng: new SeededRng(7), clusterName: 'contract', watchHistory: 5 });
  installCrdSchemas(store);
  installAdmission(store);
  return store;
}

export interface Backend {
  client: KubeClient;
  /** The backend's own resourceVersion-based view is remote: events arrive asynchronously. */
  remote: boolean;
  close(): Promise<void>;
  /**
   * Make every resourceVersion up to now expire (a real apiserver: compact
   * etcd). Unset: the backend has a short history (5 events) instead.
   */
  expire?(): Promise<void>;
  /** Background garbage collection of dependents runs (false on a bare apiserver: no kube-controller-manager, as in envtest). */
  garbageCollection?: boolean;
}

/** Collects watch events; `until` resolves as soon as the predicate holds (bounded by a timeout for remote backends). */
export class Collector {
  readonly events: WatchEvent[] = [];
  readonly errors: unknown[] = [];
  private waiters: (() => void)[] = [];
  push = (e: WatchEvent): void => {
    this.events.push(e);
    this.wake();
  };
  error = (e: unknown): void => {
    this.errors.push(e);
    this.wake();
  };
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  async until(pred: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(this.events.map((e) => `${e.type} ${e.object.metadata.name}`))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
  summary(): string[] {
    return this.events.map((e) => `${e.type} ${e.object.metadata.name}`);
  }
}

/** Start a watch and wait until it is established. */
export async function startWatch(c: KubeClient, kind: string, col: Collector, opts: Parameters<KubeClient['watch']>[2] = {}): Promise<() => void> {
  let ready = false;
  let readyResolve: () => void = () => {};
  const p = new Promise<void>((r) => (readyResolve = r));
  const stop = c.watch(kind, col.push, {
    ...opts,
    onError: col.error,
    onReady: () => {
      ready = true;
      readyResolve();
    },
  });
  if (!ready) await Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error('watch not ready')), 5000))]);
  return stop;
}

const NS = 'contract';
const md = (name: string, extra: Partial<KubeObject> = {}, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'MachineDeployment',
  metadata: { name, namespace: NS, ...(labels ? { labels } : {}) },
  spec: { clusterName: 'demo', replicas: 1, template: { spec: { clusterName: 'demo', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { name: 't' } } } },
  ...extra,
});
const ref = (name: string) => ({ kind: 'MachineDeployment', namespace: NS, name });

async function err(p: Promise<unknown>): Promise<KubeApiError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'expected an error').toBeInstanceOf(KubeApiError);
  return e as KubeApiError;
}

export function kubeClientContract(name: string, make: () => Promise<Backend>): void {
  describe(`KubeClient contract: ${name}`, () => {
    let b: Backend;
    let c: KubeClient;
    beforeEach(async () => {
      b = await make();
      c = b.client;
    });
    afterEach(async () => {
      await b.close();
    });

    it('create sets server fields; get returns the stored object; duplicates are AlreadyExists (409)', async () => {
      const o = await c.create(md('a'));
      expect(o.metadata.uid).toBeTruthy();
      expect(o.metadata.generation).toBe(1);
      expect(o.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(typeof o.metadata.creationTimestamp).toBe('string');
      expect(await c.get(ref('a'))).toEqual(o);
      expect(await c.get(ref('missing'))).toBeUndefined();
      const e = await err(c.create(md('a')));
      expect([e.reason, e.code]).toEqual(['AlreadyExists', 409]);
    });

    it('lists by namespace, equality and set-based label selectors, and field selectors', async () => {
      await c.create(md('a', {}, { tier: 'x', env: 'prod' }));
      await c.create(md('b', {}, { tier: 'y' }));
      await c.create(md('c'));
      await c.create({ ...md('d'), metadata: { name: 'd', namespace: 'other' } });
      const names = async (opts: Parameters<KubeClient['list']>[1]) => (await c.list('MachineDeployment', opts)).map((o) => o.metadata.name);
      expect(await names({ namespace: NS })).toEqual(['a', 'b', 'c']);
      expect(await names({ namespace: NS, labelSelector: { tier: 'x' } })).toEqual(['a']);
      expect(await names({ namespace: NS, labelSelector: 'tier in (x,y),!env' })).toEqual(['b']);
      expect(await names({ namespace: NS, labelSelector: 'tier' })).toEqual(['a', 'b']);
      expect(await names({ namespace: NS, labelSelector: 'tier notin (x)' })).toEqual(['b', 'c']);
      expect(await names({ fieldSelector: 'metadata.name=d' })).toEqual(['d']);
      expect(await names({ fieldSelector: 'metadata.namespace!=other' })).toEqual(['a', 'b', 'c']);
      const e = await err(c.list('MachineDeployment', { fieldSelector: 'spec.replicas=1' }));
      expect(e.reason).toBe('BadRequest');
    });

    it('optimistic concurrency: stale update is Conflict; generation follows spec only; update ignores status', async () => {
      const o = await c.create(md('a'));
      const st = await c.updateStatus({ ...o, status: { replicas: 1, phase: 'Running' } });
      expect(st.metadata.generation).toBe(1);
      expect(Number(st.metadata.resourceVersion)).toBeGreaterThan(Number(o.metadata.resourceVersion));
      const e = await err(c.update({ ...o, spec: { ...(o.spec as object), replicas: 2 } }));
      expect([e.reason, e.code]).toEqual(['Conflict', 409]);
      const up = await c.update({ ...st, spec: { ...(st.spec as object), replicas: 2 }, status: { replicas: 99 } });
      expect(up.metadata.generation).toBe(2);
      expect(up.status).toEqual({ replicas: 1, phase: 'Running' });
    });

    it('patches: merge and json (spec and status); a json patch on a missing path is rejected', async () => {
      await c.create(md('a'));
      const m = await c.patch<KubeObject>(ref('a'), 'merge', { metadata: { annotations: { x: 'y' } }, spec: { replicas: 3 } });
      expect(m.metadata.annotations).toEqual({ x: 'y' });
      expect((m.spec as { replicas: number }).replicas).toBe(3);
      const j = await c.patch<KubeObject>(ref('a'), 'json', [{ op: 'replace', path: '/spec/replicas', value: 4 }]);
      expect((j.spec as { replicas: number }).replicas).toBe(4);
      expect(j.metadata.generation).toBe(3);
      const s = await c.patch<KubeObject>(ref('a'), 'merge', { status: { phase: 'ScalingUp' } }, { subresource: 'status' });
      expect(s.status).toEqual({ phase: 'ScalingUp' });
      const e = await err(c.patch(ref('a'), 'json', [{ op: 'replace', path: '/spec/nope/x', value: 1 }]));
      expect(e.code).toBe(422);
    });

    it('delete honours finalizers; removing the last one deletes; dependents are garbage-collected', async () => {
      await c.create(md('a', { metadata: { name: 'a', namespace: NS, finalizers: ['test/x'] } }));
      await c.delete(ref('a'));
      const marked = await c.get(ref('a'));
      expect(marked?.metadata.deletionTimestamp).toBeTruthy();
      await c.update({ ...marked!, metadata: { ...marked!.metadata, finalizers: [] } });
      expect(await c.get(ref('a'))).toBeUndefined();
      await c.delete(ref('a'), { ignoreNotFound: true });
      expect((await err(c.delete(ref('a')))).reason).toBe('NotFound');

      if (b.garbageCollection === false) return;
      const owner = await c.create(md('owner'));
      await c.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'dep', namespace: NS, ownerReferences: [ownerRef(owner)] }, type: 'Opaque' } as KubeObject);
      await c.delete(ref('owner'));
      expect(await c.get({ kind: 'Secret', namespace: NS, name: 'dep' })).toBeUndefined();
    });

    it('watch: ADDED, MODIFIED, DELETED in order; a label-selected watch sees objects leave and enter', async () => {
      const all = new Collector();
      const sel = new Collector();
      const stopAll = await startWatch(c, 'MachineDeployment', all, { namespace: NS });
      const stopSel = await startWatch(c, 'MachineDeployment', sel, { namespace: NS, labelSelector: 'tier=x' });
      await c.create(md('a', {}, { tier: 'x' }));
      await c.patch(ref('a'), 'merge', { spec: { replicas: 2 } });
      await c.patch(ref('a'), 'merge', { metadata: { labels: { tier: 'y' } } });
      await c.patch(ref('a'), 'merge', { metadata: { labels: { tier: 'x' } } });
      await c.delete(ref('a'));
      await all.until(() => all.events.length >= 5, '5 events');
      await sel.until(() => sel.events.length >= 5, '5 selected events');
      stopAll();
      stopSel();
      expect(all.summary()).toEqual(['ADDED a', 'MODIFIED a', 'MODIFIED a', 'MODIFIED a', 'DELETED a']);
      expect(sel.summary()).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a', 'ADDED a', 'DELETED a']);
      const versions = all.events.map((e) => Number(e.object.metadata.resourceVersion));
      expect([...versions].sort((x, y) => x - y)).toEqual(versions);
    });

    it('watch resumes from a resourceVersion; a version older than the history is 410 Gone', async () => {
      const a = await c.create(md('a'));
      await c.create(md('b'));
      await c.patch(ref('a'), 'merge', { spec: { replicas: 5 } });
      const col = new Collector();
      const stop = await startWatch(c, 'MachineDeployment', col, { namespace: NS, resourceVersion: a.metadata.resourceVersion! });
      await col.until(() => col.events.length >= 2, 'replayed events');
      expect(col.summary()).toEqual(['ADDED b', 'MODIFIED a']);
      stop();

      // The backends are built with a short history (5 events): push the first version out of it.
      for (let i = 0; i < 8; i++) await c.patch(ref('b'), 'merge', { spec: { replicas: i } });
      await b.expire?.();
      const gone = new Collector();
      let thrown: unknown;
      let stop2: (() => void) | undefined;
      try {
        stop2 = c.watch('MachineDeployment', gone.push, { namespace: NS, resourceVersion: a.metadata.resourceVersion!, onError: gone.error });
      } catch (e) {
        thrown = e;
      }
      if (!thrown) await gone.until(() => gone.errors.length > 0, 'a 410 Gone');
      stop2?.();
      const e = (thrown ?? gone.errors[0]) as KubeApiError;
      expect(e).toBeInstanceOf(KubeApiError);
      expect([e.reason, e.code]).toEqual(['Gone', 410]);
    });

    it('structural schema: unknown fields are pruned (or rejected with fieldValidation=Strict), wrong types are 422 naming the field', async () => {
      const o = await c.create({ ...md('a'), spec: { ...(md('a').spec as object), bogus: 1 } });
      expect(o.spec).not.toHaveProperty('bogus');
      const strict = await err(c.create({ ...md('b'), spec: { ...(md('b').spec as object), bogus: 1 } }, { fieldValidation: 'Strict' }));
      expect(strict.reason).toBe('BadRequest');
      expect(strict.message).toContain('unknown field "spec.bogus"');
      const warnings: string[] = [];
      await c.create({ ...md('w'), spec: { ...(md('w').spec as object), bogus: 1 } }, { fieldValidation: 'Warn', warnings });
      expect(warnings.join()).toContain('unknown field "spec.bogus"');
      const typed = await err(c.create({ ...md('c'), spec: { ...(md('c').spec as object), replicas: 'three' } }));
      expect([typed.reason, typed.code]).toEqual(['Invalid', 422]);
      expect(typed.causes[0]?.field).toBe('spec.replicas');
      expect(typed.message).toContain('must be of type integer');
      expect(await c.get(ref('c'))).toBeUndefined();
      const dry = await c.create(md('dry'), { dryRun: true });
      expect(dry.metadata.name).toBe('dry');
      expect(await c.get(ref('dry'))).toBeUndefined();
    });

    it('admission rejections keep the SPEC rule ID in their causes', async () => {
      const e = await err(
        c.create({
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'HCSMachineTemplate',
          metadata: { name: 't', namespace: NS },
          spec: { template: { spec: { imageName: 'i', flavorName: 'f', availabilityZone: 'az1', serverId: 'abc' } } },
        }),
      );
      expect(e.reason).toBe('Invalid');
      expect(e.causes).toContainEqual(expect.objectContaining({ field: 'spec.template.spec.serverId', rule: 'TPL-4' }));
      expect(e.message).toContain('TPL-4');
    });
  });
}

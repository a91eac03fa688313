/**
 * The facade answers as the apiserver does, and a client's mistake is a 4xx
 * Status with nothing written (docs/kube.md "Errors"): the `spec: null`
 * merge patch, a create carrying resourceVersion, non-string label /
 * annotation / data values, deep or oversized bodies, bad URLs; the /scale
 * subresource (`kubectl scale`), `kubectl logs -f`, `get all` categories.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MachineDeployment } from '../../src/product/api/capi.js';
import { startWorkerCluster, type FacadeBed } from './fixture.js';
import { raw } from './http.js';
import { haveKubectl, KubectlRunner } from './kubectl.js';

const NS = 'cpaas-system';
const MD = `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}/machinedeployments/demo-md-0`;

describe('OPS-1: facade fidelity (raw HTTP and the real kubectl)', () => {
  let bed: FacadeBed;
  const md = () => bed.tb.env.mgmt.getSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' })!;
  const call = (method: string, path: string, body?: string, contentType = 'application/json') => raw(bed.facade, method, path, body !== undefined ? { body, contentType } : {});

  beforeAll(async () => {
    bed = await startWorkerCluster();
  });
  afterAll(async () => {
    await bed?.close();
  });

  it('merge patch {"spec":null} on a MachineDeployment: 422 spec Required value; the object stays intact and writable', async () => {
    const before = md();
    const r = await call('PATCH', MD, '{"spec":null}', 'application/merge-patch+json');
    expect(r.code).toBe(422);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422, details: { causes: [{ field: 'spec', reason: 'FieldValueRequired' }] } });
    expect(md().spec).toEqual(before.spec);
    expect(md().metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const j = await call('PATCH', MD, '[{"op":"remove","path":"/spec"}]', 'application/json-patch+json');
    expect(j.code).toBe(422);
    const put = await call('PUT', MD, JSON.stringify({ ...before, spec: undefined }));
    expect(put.code).toBe(422);
    expect(md().spec).toEqual(before.spec);
    // Still writable.
    const ok = await call('PATCH', MD, '{"metadata":{"labels":{"demo":"yes"}}}', 'application/merge-patch+json');
    expect(ok.code).toBe(200);
    expect(md().metadata.labels?.demo).toBe('yes');
  });

  it('a create carrying metadata.resourceVersion is refused with the apiserver\'s message; nothing is created', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'with-rv', namespace: NS, resourceVersion: '12' }, data: { a: 'b' } };
    const r = await call('POST', `/api/v1/namespaces/${NS}/configmaps`, JSON.stringify(cm));
    expect(r.json).toMatchObject({ kind: 'Status', message: 'resourceVersion should not be set on objects to be created' });
    expect(r.code).toBe(500); // the apiserver's code for it (k8s.io/apiserver storage ErrResourceVersionSetOnCreate)
    expect(bed.tb.env.mgmt.getSync({ kind: 'ConfigMap', namespace: NS, name: 'with-rv' })).toBeUndefined();
  });

  it('non-string label, annotation and data values: 422 naming the field, nothing stored', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed', namespace: NS, labels: { n: 1 }, annotations: { ok: 'x', b: true } }, data: { a: 2 } };
    const r = await call('POST', `/api/v1/namespaces/${NS}/configmaps`, JSON.stringify(cm));
    expect(r.code).toBe(422);
    const fields = ((r.json.details as { causes: { field: string }[] }).causes).map((c) => c.field);
    expect(fields).toEqual(['metadata.labels.n', 'metadata.annotations.b', 'data.a']);
    expect(bed.tb.env.mgmt.getSync({ kind: 'ConfigMap', namespace: NS, name: 'typed' })).toBeUndefined();
    const p = await call('PATCH', MD, '{"metadata":{"annotations":{"x":5}}}', 'application/merge-patch+json');
    expect(p.code).toBe(422);
    expect(md().metadata.annotations?.x).toBeUndefined();
    const sec = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bad64', namespace: NS }, data: { k: 'not base64!' } };
    expect((await call('POST', `/api/v1/namespaces/${NS}/secrets`, JSON.stringify(sec))).code).toBe(422);
  });

  it('bodies nested 10,000 deep, bad URLs, GET //, unknown media types, oversized bodies: Status objects, never a 500', async () => {
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    const d = await call('PATCH', MD, deep, 'application/merge-patch+json');
    expect(d.code).toBe(400);
    expect(d.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    const root = await call('GET', '//');
    expect(root.code).toBe(200);
    expect(root.json.paths).toContain('/api');
    const bad = await call('GET', '/api/v1/namespaces/%zz/configmaps');
    expect(bad.code).toBe(400);
    expect(bad.json.kind).toBe('Status');
    const media = await call('PATCH', MD, '{}', 'text/x-unknown');
    expect(media.code).toBe(415);
    expect(media.json.kind).toBe('Status');
    const big = await call('POST', `/api/v1/namespaces/${NS}/configmaps`, 'x'.repeat(17 * 1024 * 1024));
    expect(big.code).toBe(413);
    expect(big.json).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    const nf = await call('GET', '/no/such/path');
    expect(nf.code).toBe(404);
    expect(nf.json.kind).toBe('Status');
  });

  it('anonymous requests get 401 (a Status); /healthz, /livez, /readyz, /version stay public as on a kubeadm apiserver', async () => {
    for (const p of ['/api', '/apis/cluster.x-k8s.io/v1beta1/machinedeployments', `/api/v1/namespaces/${NS}/secrets`, '/', '/clusters/cpaas-system/demo/api/v1/nodes', '/_testbed/time']) {
      const r = await raw(bed.facade, 'GET', p, { anonymous: true });
      expect(r.code, p).toBe(401);
      expect(r.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    }
    const wrong = await raw(bed.facade, 'DELETE', MD, { headers: { Authorization: 'Bearer not-the-token' }, anonymous: true });
    expect(wrong.code).toBe(401);
    expect(md()).toBeDefined();
    for (const p of ['/healthz', '/version']) expect((await raw(bed.facade, 'GET', p, { anonymous: true })).code).toBe(200);
    expect(bed.facade.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
  });

  it('discovery: the `all` category holds no namespaces, secrets, events; cluster-api kinds carry cluster-api; /scale subresources', async () => {
    const core = (await call('GET', '/api/v1')).json as { resources: { name: string; categories?: string[] }[] };
    const inAll = core.resources.filter((r) => r.categories?.includes('all')).map((r) => r.name);
    expect(inAll).toContain('pods');
    for (const n of ['namespaces', 'secrets', 'events', 'configmaps', 'nodes']) expect(inAll).not.toContain(n);
    const capi = (await call('GET', '/apis/cluster.x-k8s.io/v1beta1')).json as { resources: { name: string; categories?: string[]; kind: string; group?: string }[] };
    expect(capi.resources.find((r) => r.name === 'machinedeployments')?.categories).toEqual(['cluster-api']);
    expect(capi.resources.find((r) => r.name === 'machinedeployments/scale')).toMatchObject({ kind: 'Scale', group: 'autoscaling', version: 'v1' });
    const scale = await call('GET', `${MD}/scale`);
    expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 }, status: { replicas: 3 } });
    const neg = await call('PATCH', `${MD}/scale`, '{"spec":{"replicas":-1}}', 'application/merge-patch+json');
    expect(neg.code).toBe(422);
    expect(md().spec.replicas).toBe(3);
  });

  describe.skipIf(!haveKubectl)('with the real kubectl', () => {
    let k: KubectlRunner;
    beforeAll(() => {
      k = new KubectlRunner(bed.facade.kubeconfigPath);
    });

    it('kubectl scale machinedeployment / machineset (the /scale subresource)', async () => {
      expect(await k.ok('kubectl scale machinedeployment demo-md-0 -n cpaas-system --replicas=2')).toBe('machinedeployment.cluster.x-k8s.io/demo-md-0 scaled\n');
      expect(md().spec.replicas).toBe(2);
      expect(await k.ok('kubectl scale md demo-md-0 -n cpaas-system --current-replicas=2 --replicas=3')).toContain('scaled');
      expect(md().spec.replicas).toBe(3);
      const err = await k.fails('kubectl scale md demo-md-0 -n cpaas-system --current-replicas=7 --replicas=4');
      expect(err).toMatch(/expected/i);
      expect(md().spec.replicas).toBe(3);
    });

    it('kubectl get all -A lists no namespaces, secrets or events', async () => {
      const out = await k.ok('kubectl get all -A');
      expect(out).toMatch(/pod\/capi-controller-manager/);
      expect(out).not.toMatch(/namespace\/|secret\/|event\//);
    });

    it('kubectl logs -f streams new lines until stopped (bounded)', async () => {
      const f = k.spawn('kubectl logs -f -n cpaas-system deployment/capi-controller-manager --tail=1');
      await f.waitFor((o) => o.split('\n').filter(Boolean).length >= 1);
      const had = f.out().split('\n').filter(Boolean).length;
      await k.ok('kubectl scale machinedeployment demo-md-0 -n cpaas-system --replicas=2');
      await bed.tb.sim.advance(30_000);
      await f.waitFor((o) => o.split('\n').filter(Boolean).length > had, 20_000);
      expect(f.child.exitCode).toBeNull(); // still following
      f.child.kill('SIGTERM');
      await f.exited;
      expect(f.out()).toMatch(/machinedeployment|machineset/i);
    });
  });
});

describe.skipIf(!haveKubectl)('server-side apply keeps managedFields (kubectl apply --server-side)', () => {
  let bed: FacadeBed;
  let k: KubectlRunner;
  beforeAll(async () => {
    bed = await startWorkerCluster();
    k = new KubectlRunner(bed.facade.kubeconfigPath);
  });
  afterAll(async () => {
    await bed?.close();
  });

  it('an Apply entry per field manager with the applied fields; fieldManager required', async () => {
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: cpaas-system\n  labels: {team: a}\ndata:\n  k: v\n';
    writeFileSync(join(k.cwd, 'cm.yaml'), cm);
    expect(await k.ok('kubectl apply --server-side -f cm.yaml')).toBe('configmap/ssa serverside-applied\n');
    const out = await k.ok('kubectl get configmap ssa -n cpaas-system -o json --show-managed-fields');
    const mf = (JSON.parse(out) as { metadata: { managedFields: { manager: string; operation: string; fieldsV1: Record<string, unknown> }[] } }).metadata.managedFields;
    expect(mf).toHaveLength(1);
    expect(mf[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k': {} }, 'f:metadata': { 'f:labels': { 'f:team': {} } } } });
    expect(await k.ok('kubectl apply --server-side --field-manager=other -f cm.yaml')).toContain('serverside-applied');
    const again = JSON.parse(await k.ok('kubectl get configmap ssa -n cpaas-system -o json --show-managed-fields')) as { metadata: { managedFields: { manager: string }[] } };
    expect(again.metadata.managedFields.map((e) => e.manager)).toEqual(['kubectl', 'other']);
    const r = await raw(bed.facade, 'PATCH', '/api/v1/namespaces/cpaas-system/configmaps/ssa', { body: cm, contentType: 'application/apply-patch+yaml' });
    expect(r.code).toBe(422);
    expect(r.json.message).toMatch(/fieldManager: Required value/);
  });
});

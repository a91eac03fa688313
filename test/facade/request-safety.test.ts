/**
 * Issue 24, the facade half: requests that used to be served wrongly, with
 * the real kubectl where a user would type them.
 * - dry run on every verb, delete included (DeleteOptions body and ?dryRun=All);
 *   an unknown dryRun value is 422, never a real write;
 * - impersonation (kubectl --as) refused with a Status, never served as admin;
 *   kubectl auth can-i answered (SelfSubjectAccessReview / SelfSubjectRulesReview);
 * - every error a Status: DELETE/OPTIONS/TRACE with a body, a body longer than
 *   its Content-Length, merge patch {"kind":null} (422, nothing committed);
 * - kubectl create namespace (a protobuf body); a namespaced create into a
 *   missing namespace is 404 NotFound namespaces "x" (NamespaceLifecycle).
 */
import { connect } from 'node:tls';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';
import { raw } from './http.js';
import { haveKubectl, KubectlRunner } from './kubectl.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe.skipIf(!haveKubectl)('issue 24: requests a bad client sends are refused with a Status (real kubectl)', () => {
  let tb: Testbed;
  let facade: Facade;
  let k: KubectlRunner;
  const get = (name: string, namespace = 'default'): KubeObject | undefined => tb.env.mgmt.getSync({ kind: 'ConfigMap', namespace, name });

  beforeAll(async () => {
    tb = await createTestbed({ seed: 24 });
    facade = await startFacade({ mgmt: tb.env.mgmt, workloads: tb.env.workloads, logs: tb.env.logs, clock: tb.clock, kubeconfigDir: mkdtempSync(join(tmpdir(), 'req-safety-')) });
    k = new KubectlRunner(facade.kubeconfigPaths.combined);
    await k.ok('kubectl create configmap keep --from-literal=x=1 -n default');
  }, 60_000);
  afterAll(async () => {
    await facade?.close();
    await tb?.close();
  }, 30_000);

  it('kubectl delete --dry-run=server deletes nothing (DeleteOptions body), nor does ?dryRun=All; a real delete still deletes', async () => {
    const rv = get('keep')!.metadata.resourceVersion;
    expect(await k.clean('kubectl delete configmap keep -n default --dry-run=server')).toMatch(/configmap "keep" deleted \(server dry run\)/);
    expect(get('keep')?.metadata.resourceVersion).toBe(rv);
    const q = await raw(facade, 'DELETE', `${CM}/keep?dryRun=All`);
    expect(q.code).toBe(200);
    expect(get('keep')?.metadata.resourceVersion).toBe(rv);
    const body = await raw(facade, 'DELETE', `${CM}/keep`, { body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] }) });
    expect(body.code, body.text).toBe(200);
    expect(get('keep')).toBeDefined();
    // An object with a finalizer: the dry run shows it marked for deletion, the store keeps it unmarked.
    await k.ok(`kubectl create configmap fin -n default --from-literal=a=b`);
    await k.ok(`kubectl patch configmap fin -n default --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}'`);
    const fin = await raw(facade, 'DELETE', `${CM}/fin?dryRun=All`);
    expect((fin.json.metadata as Record<string, unknown>).deletionTimestamp).toBeDefined();
    expect(get('fin')?.metadata.deletionTimestamp).toBeUndefined();
    // dryRun must be "All": anything else is refused (422), never taken for a real delete.
    for (const [path, opts] of [[`${CM}/keep?dryRun=true`, {}], [`${CM}/keep`, { body: JSON.stringify({ dryRun: ['Yes'] }) }]] as const) {
      const r = await raw(facade, 'DELETE', path, opts);
      expect(r.code, path).toBe(422);
      expect(r.json).toMatchObject({ kind: 'Status', reason: 'Invalid' });
      expect(String(r.json.message)).toMatch(/DeleteOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value/);
    }
    expect(get('keep')).toBeDefined();
    await k.ok('kubectl delete configmap fin -n default --wait=false');
    await k.ok('kubectl create configmap gone -n default --from-literal=a=b');
    await k.ok('kubectl delete configmap gone -n default');
    expect(get('gone')).toBeUndefined();
  }, 60_000);

  it('dry run on create, patch, replace and server-side apply writes nothing; ?dryRun=bogus on create is 422', async () => {
    const rv = get('keep')!.metadata.resourceVersion;
    await k.clean('kubectl create configmap dry -n default --from-literal=a=b --dry-run=server');
    expect(get('dry')).toBeUndefined();
    await k.clean(`kubectl patch configmap keep -n default --type=merge -p '{"data":{"x":"2"}}' --dry-run=server`);
    const dir = mkdtempSync(join(tmpdir(), 'req-safety-yaml-'));
    writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: default\ndata:\n  x: "3"\n');
    await k.clean(`kubectl replace -f ${join(dir, 'cm.yaml')} --dry-run=server`);
    await k.clean(`kubectl apply --server-side -f ${join(dir, 'cm.yaml')} --dry-run=server`);
    expect(get('keep')?.metadata.resourceVersion).toBe(rv);
    expect((get('keep') as KubeObject & { data: Record<string, string> }).data.x).toBe('1');
    const bogus = await raw(facade, 'POST', `${CM}?dryRun=bogus`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bogus' } }) });
    expect(bogus.code).toBe(422);
    expect(String(bogus.json.message)).toMatch(/CreateOptions\.meta\.k8s\.io/);
    expect(get('bogus')).toBeUndefined();
  }, 60_000);

  it('kubectl --as is refused with 403 (Status, no data), groups without a user with 400; auth can-i answers', async () => {
    await k.ok(`kubectl create secret generic s1 -n default --from-literal=k=v`);
    const as = await k.run('kubectl --as=nobody get secrets -A');
    expect(as.code).not.toBe(0);
    expect(as.stdout).toBe('');
    expect(as.stderr).toMatch(/Error from server \(Forbidden\): users "nobody" is forbidden: User "testbed-admin" cannot impersonate resource "users"/);
    const r = await raw(facade, 'GET', '/api/v1/secrets', { headers: { 'Impersonate-Group': 'system:masters' } });
    expect(r.code).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(String(r.json.message)).toMatch(/without impersonating a user/);
    // kubectl auth can-i: SelfSubjectAccessReview (protobuf from kubectl), and --list (SelfSubjectRulesReview).
    expect((await k.clean('kubectl auth can-i get pods')).trim()).toBe('yes');
    expect((await k.clean('kubectl auth can-i delete machines.cluster.x-k8s.io -n cpaas-system')).trim()).toBe('yes');
    expect(await k.clean('kubectl auth can-i --list -n default')).toMatch(/\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/);
    const bad = await raw(facade, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: {} }) });
    expect(bad.code).toBe(422);
    expect(String(bad.json.message)).toMatch(/exactly one of nonResourceAttributes or resourceAttributes/);
  }, 60_000);

  it('DELETE/OPTIONS/TRACE with a body, and a body longer than its Content-Length, are answered with Status objects', async () => {
    for (const method of ['DELETE', 'OPTIONS', 'TRACE']) {
      for (const path of [`${CM}/nope`, '/api', '/apis', '/version', CM]) {
        const r = await raw(facade, method, path, { body: '{"a":1}', contentType: 'text/plain' });
        expect(r.json.kind, `${method} ${path}: ${r.text}`).toBe('Status');
        expect(r.code).toBeGreaterThanOrEqual(400);
      }
    }
    // Not a route's answer: Node's parser refuses it (fastify's default answer was {"error":"Bad Request","message":"Client Error"}).
    const u = new URL(facade.url);
    const text = await new Promise<string>((resolve, reject) => {
      const s = connect({ host: u.hostname, port: Number(u.port), ca: facade.caPem, servername: 'localhost' }, () => {
        s.write(`DELETE /api HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${facade.token}\r\nContent-Length: 5\r\n\r\n{"a":1,"b":2}`);
      });
      let got = '';
      s.setEncoding('utf8');
      s.on('data', (d: string) => (got += d));
      s.on('close', () => resolve(got));
      s.on('error', reject);
      s.setTimeout(10_000, () => s.destroy(new Error('no answer')));
    });
    // The 8 bytes beyond the Content-Length are a malformed next request: Node's parser refuses them at once (before the
    // async answer to the first), and the answer is a Status, not fastify's {"error":"Bad Request","message":"Client Error"}.
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  }, 60_000);

  it('merge patch {"kind":null} is a 422 Status and commits nothing; a JSON patch removing apiVersion too', async () => {
    const rv = get('keep')!.metadata.resourceVersion;
    const r = await k.run(`kubectl patch configmap keep -n default --type=merge -p '{"kind":null}'`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/is invalid: kind: Invalid value: null/);
    const j = await raw(facade, 'PATCH', `${CM}/keep`, { body: '[{"op":"remove","path":"/apiVersion"}]', contentType: 'application/json-patch+json' });
    expect(j.code).toBe(422);
    expect(j.json.kind).toBe('Status');
    expect(get('keep')?.metadata.resourceVersion).toBe(rv);
    expect(get('keep')?.kind).toBe('ConfigMap');
  }, 60_000);

  it('kubectl create namespace works (protobuf body); a create into a missing namespace is 404 NotFound namespaces "x"', async () => {
    expect(await k.clean('kubectl create namespace team-a')).toMatch(/namespace\/team-a created/);
    expect(tb.env.mgmt.getSync({ kind: 'Namespace', name: 'team-a' })).toBeDefined();
    await k.clean('kubectl create configmap in-team -n team-a --from-literal=a=b');
    const miss = await k.run('kubectl create configmap lost -n missing --from-literal=a=b');
    expect(miss.code).not.toBe(0);
    expect(miss.stderr).toMatch(/namespaces "missing" not found/);
    expect(get('lost', 'missing')).toBeUndefined();
    const r = await raw(facade, 'POST', '/api/v1/namespaces/missing/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'lost' } }) });
    expect(r.code).toBe(404);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'NotFound', details: { name: 'missing', kind: 'namespaces' } });
    const ssa = await raw(facade, 'PATCH', '/api/v1/namespaces/missing/configmaps/lost?fieldManager=t', { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lost\n', contentType: 'application/apply-patch+yaml' });
    expect(ssa.code).toBe(404);
    expect(get('lost', 'missing')).toBeUndefined();
  }, 60_000);
});

/**
 * Issue 32.5, side by side with the real kube-apiserver (tools/kube; skipped
 * with the reason when its binaries are not built): the same requests to the
 * facade and to kube-apiserver get the same status.
 * - DELETE with DeleteOptions.preconditions: a wrong uid or a stale
 *   resourceVersion is 409 and deletes nothing (k8s.io/apiserver
 *   pkg/registry/rest/delete.go BeforeDelete), dry run too; the right ones
 *   delete (200).
 * - PUT of a custom resource without metadata.resourceVersion is 422
 *   (pkg/registry/generic/registry/store.go: "must be specified for an
 *   update"), a stale one 409; of a ConfigMap it is an unconditional update (200).
 * And what the apiserver itself answers for an int32 field out of range:
 * it accepts it (kube-openapi's type validator checks no int32 range);
 * Cluster API's webhooks refuse it when they decode (serve-responsive.test.ts).
 */
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import { SeededRng } from '../../src/core/rng.js';
import type { ControlPlane } from '../../src/harness/realcluster/apiserver/apiserver.js';
import { installAdmission } from '../../src/world/admission.js';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import { installCrdSchemas } from '../../src/product/api/crds/install.js';
import { realCluster, skipReason, suiteSuffix } from '../realcluster/env.js';

interface Answer {
  code: number;
  json: Record<string, unknown>;
}

type Send = (method: string, path: string, body?: unknown, contentType?: string) => Promise<Answer>;

function sender(base: string, opts: { ca: string; headers?: Record<string, string>; cert?: string; key?: string }): Send {
  const u = new URL(base);
  return (method, path, body, contentType?: string) =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers = { ...opts.headers, ...(text !== undefined ? { 'Content-Type': contentType ?? 'application/json', 'Content-Length': String(Buffer.byteLength(text)) } : {}) };
      const req = request({ host: u.hostname, port: u.port, method, path, headers, ca: opts.ca, ...(opts.cert ? { cert: opts.cert, key: opts.key } : {}), timeout: 30_000 }, (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (t += d));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, json: (t ? JSON.parse(t) : {}) as Record<string, unknown> }));
      });
      req.on('error', reject);
      if (text !== undefined) req.write(text);
      req.end();
    });
}

const CM = '/api/v1/namespaces/default/configmaps';
const AR = '/apis/app.alauda.io/v1/namespaces/default/appreleases';
const meta = (a: Answer): { uid: string; resourceVersion: string } => a.json.metadata as { uid: string; resourceVersion: string };

describe.skipIf(skipReason !== undefined)(`issue 32.5: the facade answers as kube-apiserver does (preconditions, conditional updates)${suiteSuffix}`, () => {
  let cp: ControlPlane;
  let facade: Facade;
  const both: Record<'real' | 'facade', Send> = {} as Record<'real' | 'facade', Send>;

  beforeAll(async () => {
    cp = await realCluster();
    both.real = sender(cp.url, { ca: cp.ca.certPem, cert: cp.admin.certPem, key: cp.admin.keyPem });
    const clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
    const mgmt = new EmbeddedStore({ clock, rng: new SeededRng(325), clusterName: 'm' });
    installAdmission(mgmt); // the admission the real cluster gets from the testbed's webhook
    installCrdSchemas(mgmt); // the CRDs the real cluster has (schemas, the scale subresource's replicas paths), as every testbed's store
    facade = await startFacade({ mgmt, clock });
    both.facade = sender(facade.url, { ca: facade.caPem!, headers: facade.authHeaders() });
  }, 120_000);
  afterAll(async () => facade?.close());

  /** Run `steps` against each server; the status codes must be the same, step by step. */
  async function sideBySide(steps: (send: Send) => Promise<number[]>): Promise<number[]> {
    const real = await steps(both.real);
    const ours = await steps(both.facade);
    expect(ours).toEqual(real);
    return real;
  }

  it('DELETE preconditions: a wrong uid, a stale resourceVersion (dry run too) are 409 and delete nothing; the right ones delete', async () => {
    const codes = await sideBySide(async (send) => {
      const c = await send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pc' }, data: { a: '1' } });
      const { uid, resourceVersion: rv0 } = meta(c);
      const u = await send('PUT', `${CM}/pc`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pc', resourceVersion: rv0 }, data: { a: '2' } });
      const rv = meta(u).resourceVersion;
      const out = [c.code, u.code];
      const del = (preconditions: unknown, extra: Record<string, unknown> = {}): Promise<Answer> => send('DELETE', `${CM}/pc`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions, ...extra });
      const wrongUid = await del({ uid: '00000000-0000-0000-0000-000000000000' });
      expect(wrongUid.json.message).toMatch(/^Operation cannot be fulfilled on ConfigMap "pc": the UID in the precondition \(0{8}-0{4}-0{4}-0{4}-0{12}\) does not match the UID in record/);
      out.push(wrongUid.code, (await del({ resourceVersion: rv0 })).code, (await del({ uid: 'nope' }, { dryRun: ['All'] })).code);
      out.push((await send('GET', `${CM}/pc`)).code);
      out.push((await del({ uid, resourceVersion: rv })).code, (await send('GET', `${CM}/pc`)).code);
      return out;
    });
    expect(codes).toEqual([201, 200, 409, 409, 409, 200, 200, 404]);
  }, 60_000);

  it('PUT of a custom resource: without metadata.resourceVersion 422, stale 409, current 200; a ConfigMap without one is an unconditional update', async () => {
    const codes = await sideBySide(async (send) => {
      const c = await send('POST', AR, { apiVersion: 'app.alauda.io/v1', kind: 'AppRelease', metadata: { name: 'ar' }, spec: { timeout: '5m' } });
      const rv0 = meta(c).resourceVersion;
      const body = (resourceVersion?: string) => ({ apiVersion: 'app.alauda.io/v1', kind: 'AppRelease', metadata: { name: 'ar', ...(resourceVersion ? { resourceVersion } : {}) }, spec: { timeout: '6m' } });
      const none = await send('PUT', `${AR}/ar`, body());
      expect(none.json.message).toMatch(/metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update/);
      const ok = await send('PUT', `${AR}/ar`, body(rv0));
      const stale = await send('PUT', `${AR}/ar`, body(rv0));
      const cm = await send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uncond' } });
      const cmPut = await send('PUT', `${CM}/uncond`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uncond' }, data: { b: '1' } });
      return [c.code, none.code, ok.code, stale.code, cm.code, cmPut.code];
    });
    expect(codes).toEqual([201, 422, 200, 409, 201, 200]);
  }, 60_000);

  it('a MachineSet status.replicas beyond 2^31-1: kube-apiserver refuses it (422, the scale subresource\'s statusReplicasPath is validated as int32), and so does the facade', async () => {
    const MS = '/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinesets';
    const probe = async (send: Send): Promise<{ code: number; message: string }> => {
      const c = await send('POST', MS, { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineSet', metadata: { name: 'big' }, spec: { clusterName: 'c', replicas: 1, selector: { matchLabels: { a: 'b' } } } });
      expect(c.code).toBe(201);
      const st = await send('PUT', `${MS}/big/status`, { ...c.json, status: { replicas: 2147483648 } });
      return { code: st.code, message: String(st.json.message ?? '') };
    };
    const real = await probe(both.real);
    const ours = await probe(both.facade);
    expect(real).toEqual({ code: 422, message: 'MachineSet.cluster.x-k8s.io "big" is invalid: .status.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647' });
    expect(ours.code).toBe(real.code);
    expect(ours.message).toMatch(/\.status\.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647$/);
    // Through the MachineSet webhook (the testbed's, as Cluster API's decodes): 400 on both.
    const spec = await sideBySide(async (send) => [(await send('POST', MS, { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineSet', metadata: { name: 'big2' }, spec: { clusterName: 'c', replicas: 2147483648, selector: { matchLabels: { a: 'b' } } } })).code]);
    expect(spec).toEqual([400]);
  }, 60_000);

  it('a Scale cannot hold replicas 2147483648: kube-apiserver answers 422 to a merge patch, 400 to a PUT (a Deployment /scale); the facade the same for a MachineSet /scale', async () => {
    const D = '/apis/apps/v1/namespaces/default/deployments';
    const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
    expect((await both.real('POST', D, dep)).code).toBe(201);
    const real = await patchScale(both.real, `${D}/d/scale`, 2147483648);
    const scale = (name: string) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace: 'default' }, spec: { replicas: 2147483648 } });
    const realPut = await both.real('PUT', `${D}/d/scale`, scale('d'));
    const MS = '/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinesets';
    expect((await both.facade('POST', MS, { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineSet', metadata: { name: 'sc' }, spec: { clusterName: 'c', replicas: 1, selector: { matchLabels: { a: 'b' } } } })).code).toBe(201);
    const ours = await patchScale(both.facade, `${MS}/sc/scale`, 2147483648);
    const oursPut = await both.facade('PUT', `${MS}/sc/scale`, scale('sc'));
    // A merge patch (kubectl scale) is 422 on the field "patch"; a PUT of the Scale is 400.
    expect([ours.code, oursPut.code]).toEqual([real.code, realPut.code]);
    expect([real.code, realPut.code]).toEqual([422, 400]);
    const decode = /cannot unmarshal number 2147483648 into Go struct field ScaleSpec\.spec\.replicas of type int32/;
    for (const a of [real, realPut, ours, oursPut]) expect(a.json.message).toMatch(decode);
    expect((ours.json.details as { causes: { field: string }[] }).causes[0]!.field).toBe((real.json.details as { causes: { field: string }[] }).causes[0]!.field);
    expect((await patchScale(both.facade, `${MS}/sc/scale`, 5)).code).toBe(200);
  }, 60_000);
});

/** A merge patch of /scale, as kubectl scale sends it. */
function patchScale(send: Send, path: string, replicas: number): Promise<Answer> {
  return send('PATCH', path, { spec: { replicas } }, 'application/merge-patch+json');
}

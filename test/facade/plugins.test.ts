/**
 * The facade's fastify plugins (issue 33), each driven with app.inject():
 * auth, discovery, resources, subresources (logs), watch, and the
 * per-cluster scope and listeners.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerPodName } from '../../src/world/facade/controllers.js';
import { PUBLIC_PATHS } from '../../src/world/facade/auth.js';
import { appBed, AUTH, TOKEN, until, type AppBed } from './app-fixture.js';

let bed: AppBed;
beforeAll(async () => {
  bed = await appBed({
    extension: {
      handle: (_req, reply, path) => (path === '/_testbed/hello' ? reply.code(200).send({ hello: 'extension' }) : undefined),
    },
  });
});
afterAll(async () => bed?.app.close());

const json = (body: string): Record<string, unknown> => JSON.parse(body) as Record<string, unknown>;

describe('plugins/auth', () => {
  it('no credentials: 401 Status (public paths answered); a wrong token is no credential', async () => {
    const r = await bed.app.inject({ url: '/api/v1/namespaces' });
    expect(r.statusCode).toBe(401);
    expect(json(r.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect((await bed.app.inject({ url: '/api', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
    for (const p of PUBLIC_PATHS) expect((await bed.app.inject({ url: p })).statusCode, p).toBe(200);
  });

  it('an unauthenticated request is answered before its body is parsed', async () => {
    // A body no parser could read: had it been parsed first, the answer would be 400, not 401.
    const r = await bed.app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: '{not json', headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(401);
    expect(bed.mgmt.listSync('ConfigMap', { namespace: 'default' })).toEqual([]);
  });

  it('the dashboard link sets the cookie once (303), and the cookie authenticates browser paths only', async () => {
    const login = await bed.app.inject({ url: `/?token=${TOKEN}` });
    expect(login.statusCode).toBe(303);
    expect(String(login.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    expect((await bed.app.inject({ url: '/_testbed/hello', headers: { cookie } })).json()).toEqual({ hello: 'extension' });
    expect((await bed.app.inject({ url: '/api', headers: { cookie } })).statusCode).toBe(401);
  });

  it('impersonation is refused with a Status; whoami and can-i are answered (201)', async () => {
    const imp = await bed.app.inject({ url: '/api', headers: { ...AUTH, 'impersonate-user': 'someone' } });
    expect(imp.statusCode).toBe(403);
    expect(json(imp.body).kind).toBe('Status');
    const who = await bed.app.inject({ method: 'POST', url: '/apis/authentication.k8s.io/v1/selfsubjectreviews', headers: AUTH, payload: {} });
    expect(who.statusCode).toBe(201);
    expect(who.json()).toMatchObject({ status: { userInfo: { username: 'testbed-admin' } } });
    expect((await bed.app.inject({ url: '/apis/authentication.k8s.io/v1/selfsubjectreviews', headers: AUTH })).statusCode).toBe(405);
    const can = await bed.app.inject({ method: 'POST', url: '/clusters/cpaas-system/demo/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', headers: AUTH, payload: { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } } });
    expect(can.statusCode).toBe(201);
    expect(can.json()).toMatchObject({ status: { allowed: true } });
  });
});

describe('plugins/discovery', () => {
  it('/, /version, /api, /apis, a group, a group version and OpenAPI v3; other verbs 405; /openapi/v2 404', async () => {
    const get = async (url: string) => bed.app.inject({ url, headers: AUTH });
    expect((await get('/')).json().paths).toContain('/apis/cluster.x-k8s.io/v1beta1');
    expect((await get('/version')).json().gitVersion).toMatch(/^v1\.33/);
    expect((await get('/api')).json().versions).toEqual(['v1']);
    expect((await get('/apis')).json().kind).toBe('APIGroupList');
    expect((await get('/apis/cluster.x-k8s.io')).json().name).toBe('cluster.x-k8s.io');
    expect((await get('/apis/cluster.x-k8s.io/v1beta1')).json().resources.map((r: { name: string }) => r.name)).toContain('machinedeployments');
    expect((await get('/apis/nope.example.com')).statusCode).toBe(404);
    expect((await get('/openapi/v3')).json().paths).toHaveProperty(['apis/cluster.x-k8s.io/v1beta1']);
    expect((await get('/openapi/v3/api/v1')).statusCode).toBe(200);
    expect((await get('/openapi/v2')).json().message).toMatch(/OpenAPI v2 is not served/);
    const del = await bed.app.inject({ method: 'DELETE', url: '/api', headers: AUTH, payload: '{}' });
    expect(del.statusCode).toBe(405);
    expect(del.json().reason).toBe('MethodNotAllowed');
    expect((await get('/healthz')).body).toBe('ok');
  });
});

describe('plugins/resources', () => {
  const CM = '/api/v1/namespaces/default/configmaps';
  it('create, get, list (as a Table too), update, merge patch, delete: each answered as the apiserver does', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' }, data: { a: '1' } };
    const c = await bed.app.inject({ method: 'POST', url: CM, headers: AUTH, payload: body });
    expect(c.statusCode).toBe(201);
    expect(c.json().metadata.namespace).toBe('default');
    expect((await bed.app.inject({ method: 'POST', url: CM, headers: AUTH, payload: body })).json()).toMatchObject({ reason: 'AlreadyExists', code: 409 });
    const one = (await bed.app.inject({ url: `${CM}/one`, headers: AUTH })).json();
    expect(one.data).toEqual({ a: '1' });
    const list = await bed.app.inject({ url: CM, headers: AUTH });
    expect(list.json()).toMatchObject({ kind: 'ConfigMapList', items: [{ metadata: { name: 'one' } }] });
    const table = await bed.app.inject({ url: CM, headers: { ...AUTH, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expect(table.json().kind).toBe('Table');
    const put = await bed.app.inject({ method: 'PUT', url: `${CM}/one`, headers: AUTH, payload: { ...one, data: { a: '2' } } });
    expect(put.statusCode).toBe(200);
    expect((await bed.app.inject({ method: 'PUT', url: `${CM}/one`, headers: AUTH, payload: { ...one, metadata: { ...one.metadata, name: 'two' } } })).statusCode).toBe(400);
    const patch = await bed.app.inject({ method: 'PATCH', url: `${CM}/one`, headers: { ...AUTH, 'content-type': 'application/merge-patch+json' }, payload: '{"data":{"b":"3"}}' });
    expect(patch.json().data).toEqual({ a: '2', b: '3' });
    expect((await bed.app.inject({ method: 'DELETE', url: `${CM}/one`, headers: AUTH })).statusCode).toBe(200);
    expect((await bed.app.inject({ url: `${CM}/one`, headers: AUTH })).json()).toMatchObject({ reason: 'NotFound', message: 'configmaps "one" not found' });
  });

  it('unknown resources and subresources are 404; a strategic merge patch of a custom resource is 415; a create into a missing namespace is 404', async () => {
    expect((await bed.app.inject({ url: '/api/v1/nopes', headers: AUTH })).statusCode).toBe(404);
    expect((await bed.app.inject({ url: '/api/v1/namespaces/default/configmaps/x/nope', headers: AUTH })).statusCode).toBe(404);
    const cluster = { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name: 'c1', namespace: 'default' }, spec: {} };
    expect((await bed.app.inject({ method: 'POST', url: '/apis/cluster.x-k8s.io/v1beta1/namespaces/default/clusters', headers: AUTH, payload: cluster })).statusCode).toBe(201);
    const smp = await bed.app.inject({ method: 'PATCH', url: '/apis/cluster.x-k8s.io/v1beta1/namespaces/default/clusters/c1', headers: { ...AUTH, 'content-type': 'application/strategic-merge-patch+json' }, payload: '{}' });
    expect(smp.statusCode).toBe(415);
    const missing = await bed.app.inject({ method: 'POST', url: '/api/v1/namespaces/gone/configmaps', headers: AUTH, payload: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });
    expect(missing.json()).toMatchObject({ code: 404, message: 'namespaces "gone" not found' });
  });

  it('namespaces/<name>/status is the Namespace, not a namespaced list', async () => {
    const r = await bed.app.inject({ url: '/api/v1/namespaces/default/status', headers: AUTH });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'Namespace', metadata: { name: 'default' } });
  });
});

describe('plugins/subresources', () => {
  it('pods/log of a controller Deployment: its lines, the last ?tailLines; an unknown Pod is 404', async () => {
    const pod = controllerPodName('capi-controller-manager');
    const all = await bed.app.inject({ url: `/api/v1/namespaces/cpaas-system/pods/${pod}/log`, headers: AUTH });
    expect(all.statusCode).toBe(200);
    expect(all.body.trim().split('\n')).toHaveLength(2);
    const tail = await bed.app.inject({ url: `/api/v1/namespaces/cpaas-system/pods/${pod}/log?tailLines=1`, headers: AUTH });
    expect(tail.body).toMatch(/"machine":"m-2"/);
    expect(tail.body).not.toMatch(/m-1/);
    const none = await bed.app.inject({ url: '/api/v1/namespaces/cpaas-system/pods/nope/log', headers: AUTH });
    expect(none.json()).toMatchObject({ code: 404, message: 'pods "nope" not found' });
  });

  it('pods/portforward is served to upgrades on the workload addresses (app.portForwards)', () => {
    expect(typeof bed.app.portForwards.upgrade).toBe('function');
    expect(bed.app.portForwards.etcd('cpaas-system/demo')).toBeDefined();
    expect(bed.app.portForwards.etcd('cpaas-system/none')).toBeUndefined();
  });
});

describe('plugins/watch', () => {
  it('?watch=true streams the current objects as ADDED, then every change, until the facade ends it', async () => {
    await bed.mgmt.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1', namespace: 'kube-public' } });
    const before = bed.ctx.streams.size;
    const res = bed.app.inject({ url: '/api/v1/namespaces/kube-public/configmaps?watch=true', headers: AUTH });
    await until(() => bed.ctx.streams.size === before + 1);
    await bed.mgmt.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w2', namespace: 'kube-public' } });
    bed.ctx.streams.endAll();
    const r = await res;
    const events = r.body.trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED w1', 'ADDED w2']);
  });

  it('watch=false (the last value) is a plain list', async () => {
    const r = await bed.app.inject({ url: '/api/v1/namespaces/kube-public/configmaps?watch=true&watch=false', headers: AUTH });
    expect(r.json().kind).toBe('ConfigMapList');
  });

  it('a watch with a label selector sees the matching objects only', async () => {
    await bed.mgmt.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'l1', namespace: 'kube-node-lease', labels: { pick: 'yes' } } });
    await bed.mgmt.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'l2', namespace: 'kube-node-lease' } });
    const before = bed.ctx.streams.size;
    const res = bed.app.inject({ url: '/api/v1/namespaces/kube-node-lease/configmaps?watch=1&labelSelector=pick%3Dyes', headers: AUTH });
    await until(() => bed.ctx.streams.size === before + 1);
    bed.ctx.streams.endAll();
    const names = (await res).body.trim().split('\n').map((l) => (JSON.parse(l) as { object: { metadata: { name: string } } }).object.metadata.name);
    expect(names).toEqual(['l1']);
  });
});

describe('plugins/listeners: the per-cluster scope and addresses', () => {
  it('/clusters/<ns>/<name>/... is that workload cluster; an unknown one is 404 naming it', async () => {
    await bed.workload.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'only-in-workload', namespace: 'default' } });
    const w = await bed.app.inject({ url: '/clusters/cpaas-system/demo/api/v1/namespaces/default/configmaps', headers: AUTH });
    expect(w.json().items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['only-in-workload']);
    expect((await bed.app.inject({ url: '/api/v1/namespaces/default/configmaps/only-in-workload', headers: AUTH })).statusCode).toBe(404);
    const gone = await bed.app.inject({ url: '/clusters/cpaas-system/nope/api', headers: AUTH });
    expect(gone.json()).toMatchObject({ code: 404, message: 'workload cluster "cpaas-system/nope" not found' });
    expect((await bed.app.inject({ url: '/clusters/cpaas-system/nope', headers: AUTH })).json().message).toBe('workload cluster "cpaas-system/nope" not found');
    expect((await bed.app.inject({ url: '/clusters/cpaas-system/demo/version', headers: AUTH })).statusCode).toBe(200);
  });

  it('a workload cluster gets its own address, whose paths are the cluster scope (closed with the app)', async () => {
    const url = await bed.app.workloadListeners.ensure('cpaas-system/demo');
    const r = await fetch(`${url}/api/v1/namespaces/default/configmaps`, { headers: AUTH });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { items: unknown[] }).items).toHaveLength(1);
    expect(bed.app.workloadListeners.url('cpaas-system/demo')).toBe(url);
  });

  it('the extension is asked first on the management address only', async () => {
    expect((await bed.app.inject({ url: '/_testbed/hello', headers: AUTH })).json()).toEqual({ hello: 'extension' });
    expect((await bed.app.inject({ url: '/clusters/cpaas-system/demo/_testbed/hello', headers: AUTH })).statusCode).toBe(404);
  });
});

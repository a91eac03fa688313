import { afterEach, describe, expect, it } from 'vitest';
import { createMockHcs, defaultCloudConfig, type MockHcs } from '../../mock-hcs/src/index.js';
import { RealClock, SeededRng } from '../../src/core/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
let extra: MockHcs | undefined;
afterEach(async () => {
  await env?.hcs.close();
  await extra?.close();
  extra = undefined;
});

type ErrJson = { error: { code: string; message: string } };

async function admin(hcs: MockHcs, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
  const token = { 'x-admin-token': hcs.adminToken ?? '' };
  const res = await hcs.app.inject({
    method,
    url,
    headers: { ...token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  let json: unknown;
  try {
    json = JSON.parse(res.body);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, json };
}

describe('mock-hcs admin API', () => {
  it('catalog lists the provider API values (TPL-2): flavors per AZ, AZs, images with Kubernetes versions, volume types, subnets', async () => {
    env = await setup();
    const r = await admin(env.hcs, 'GET', '/_admin/catalog');
    expect(r.status).toBe(200);
    const c = r.json as ReturnType<MockHcs['catalog']>;
    expect(c.availabilityZones).toEqual(['az1', 'az2']);
    expect(c.flavors.find((f) => f.id === 'c6.4xlarge.4')!.availabilityZones).toEqual([{ name: 'az1', soldOut: false, status: 'normal' }]);
    expect(c.images.map((i) => [i.name, i.kubernetesVersion])).toContainEqual(['alauda-os-v4.1-k8s-v1.31.6', 'v1.31.6']);
    expect(c.volumeTypes).toContain('SSD');
    expect(c.subnets.map((s) => s.name)).toEqual(['cp-subnet', 'worker-subnet']);
    expect(JSON.stringify(c)).not.toContain(env.config.projects[0]!.sk);
  });

  it('needs no signature, and is absent when admin is false', async () => {
    env = await setup();
    expect((await admin(env.hcs, 'GET', '/_admin/seed')).json).toEqual({ seed: 42 });
    extra = await createMockHcs({ clock: env.clock, rng: new SeededRng(1), admin: false });
    const r = await admin(extra, 'GET', '/_admin/catalog');
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect((r.json as ErrJson).error.code).toMatch(/^APIGW\./);
  });

  it('dump -> reset -> restore round-trips the state and re-arms pending transitions', async () => {
    env = await setup();
    const c = await env.client.createServers(serverBody(env));
    const id = c.serverIds[0]!;
    env.hcs.faults.add({ service: 'ecs', operation: 'showServer', effect: { type: 'error', status: 500, code: 'Ecs.0002' }, count: 1 });
    const dump = await admin(env.hcs, 'GET', '/_admin/state');
    expect(dump.status).toBe(200);
    expect(dump.json).toMatchObject({ format: 'mock-hcs-state', version: 1, seed: 42, faults: [{ id: 'fault-1' }] });

    expect((await admin(env.hcs, 'POST', '/_admin/reset')).json).toEqual({ reset: true });
    expect(env.hcs.hypervisor.listServers()).toEqual([]);
    expect(env.hcs.faults.list()).toEqual([]);
    // The id streams restart: a fresh creation gets the same id as on a new cloud.
    const again = await env.client.createServers(serverBody(env));
    expect(again.serverIds[0]).toBe(id);

    const put = await admin(env.hcs, 'PUT', '/_admin/state', dump.json);
    expect(put).toEqual({ status: 200, json: { restored: true } });
    expect(env.hcs.faults.list().map((f) => f.id)).toEqual(['fault-1']);
    env.hcs.faults.clear();
    expect((await env.client.showServer(id))?.status).toBe('BUILD');
    settle(env);
    expect((await env.client.showServer(id))?.status).toBe('ACTIVE');
    expect((await env.client.showJob(c.job_id)).status).toBe('SUCCESS');
    expect(env.hcs.hypervisor.listServers()).toHaveLength(1);
  });

  it('PUT /_admin/state refuses a bad document with Admin.0400 and changes nothing', async () => {
    env = await setup();
    await env.client.createServers(serverBody(env));
    const before = env.hcs.dumpState();
    const cases: [unknown, string][] = [
      ['[1,2]', 'must be object'],
      [{ format: 'other' }, 'format'],
      [{ version: 2 }, 'version'],
      [{ ...(before.data as object), servers: [] }, 'servers must be an object'],
      [{ ...(before.data as object), servers: { x: { id: 'x' } } }, 'servers.x.projectId'],
      [{ format: 'mock-hcs-state', data: before.data, faults: [{ service: 'nope' }] }, 'faults[0]'],
      [{ ...(before.data as object), jobs: { j: { job_id: 'j', projectId: 'nobody', job_type: 'x', status: 'INIT', begin_time: 0, entities: {} } } }, 'project nobody'],
    ];
    for (const [body, text] of cases) {
      const r = await admin(env.hcs, 'PUT', '/_admin/state', body);
      expect(r.status, text).toBe(400);
      expect((r.json as ErrJson).error.code, text).toBe('Admin.0400');
      expect((r.json as ErrJson).error.message, text).toContain(text);
    }
    const malformed = await admin(env.hcs, 'PUT', '/_admin/state', '{"data": ');
    expect([malformed.status, (malformed.json as ErrJson).error.code]).toEqual([400, 'Admin.0400']);
    expect(env.hcs.dumpState().data).toEqual(before.data);
  });

  it('advances a virtual clock, and refuses with 409 on a real clock', async () => {
    env = await setup();
    const c = await env.client.createServers(serverBody(env));
    const t0 = env.clock.now();
    const r = await admin(env.hcs, 'POST', '/_admin/clock/advance', { ms: 120_000 });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ nowMs: t0 + 120_000 });
    expect((await env.client.showServer(c.serverIds[0]!))?.status).toBe('ACTIVE');
    for (const body of [{}, { ms: -1 }, { ms: 'x' }, { ms: 1.5 }, { ms: 1, extra: true }]) {
      const b = await admin(env.hcs, 'POST', '/_admin/clock/advance', body);
      expect(b.status, JSON.stringify(body)).toBe(400);
      expect((b.json as ErrJson).error.code).toBe('Admin.0400');
    }
    extra = await createMockHcs({ clock: new RealClock(), rng: new SeededRng(1), config: defaultCloudConfig() });
    const real = await admin(extra, 'POST', '/_admin/clock/advance', { ms: 5 });
    expect([real.status, (real.json as ErrJson).error.code]).toEqual([409, 'Admin.0409']);
  });

  it('manages fault rules over HTTP', async () => {
    env = await setup();
    const add = await admin(env.hcs, 'POST', '/_admin/faults', { service: 'ims', operation: 'listImages', effect: { type: 'error', status: 503, code: 'IMG.0503' } });
    expect(add.status).toBe(201);
    expect(add.json).toMatchObject({ id: 'fault-1', fault: { service: 'ims', seen: 0, fired: 0 } });
    expect((await env.req('GET', '/v2/cloudimages')).status).toBe(503);
    expect((await admin(env.hcs, 'GET', '/_admin/faults')).json).toMatchObject({ faults: [{ id: 'fault-1', fired: 1 }] });
    const bad = await admin(env.hcs, 'POST', '/_admin/faults', { service: 'ims', operation: 'deleteImage', effect: { type: 'stuck' } });
    expect([bad.status, (bad.json as ErrJson).error.code]).toEqual([400, 'Admin.0400']);
    expect((bad.json as ErrJson).error.message).toContain('operation');
    expect((await admin(env.hcs, 'DELETE', '/_admin/faults/fault-9')).status).toBe(404);
    expect((await admin(env.hcs, 'DELETE', '/_admin/faults/fault-1')).json).toEqual({ removed: 1 });
    expect((await env.req('GET', '/v2/cloudimages')).status).toBe(200);
    await admin(env.hcs, 'POST', '/_admin/faults', { service: 'ecs', operation: 'detachVolume', effect: { type: 'stuck' } });
    expect((await admin(env.hcs, 'DELETE', '/_admin/faults')).json).toEqual({ removed: 1 });
    expect((await admin(env.hcs, 'POST', '/_admin/faults/release', {})).json).toEqual({ released: 0 });
    expect(env.events.all().some((e) => e.source === 'fault' && e.type === 'fault.added')).toBe(true);
  });
});

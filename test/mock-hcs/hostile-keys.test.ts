/**
 * Request values used as keys (ids, metadata keys, fault services, body
 * fields) never reach an inherited member of a plain object: `__proto__`,
 * `constructor`, `toString` and friends are ordinary unknown names, answered
 * with 400/404 in the cloud's error shape, never a 500 (issue 13).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

const HOSTILE = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
type Err = { error: { code: string; message: string } };

async function admin(method: 'GET' | 'POST', url: string, body?: unknown) {
  const r = await env.hcs.app.inject({ method, url, headers: { 'x-admin-token': env.hcs.adminToken!, 'content-type': 'application/json' }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
  return { status: r.statusCode, json: JSON.parse(r.body) as unknown };
}

describe('HCS-6: mock-hcs: request values as keys', () => {
  it('ListVolumes metadata whose value is not a string is 400 EVS.5400, not 500', async () => {
    env = await setup();
    const p = env.config.projects[0]!.id;
    for (const meta of ['{"a":{"toString":1}}', '{"a":{"valueOf":null,"toString":null}}', '{"a":[1]}', '{"a":null}']) {
      const r = await env.req('GET', `/v2/${p}/cloudvolumes/detail?metadata=${encodeURIComponent(meta)}`);
      expect(r.status, meta).toBe(400);
      expect((r.json as Err).error.code).toBe('EVS.5400');
    }
    // Inherited names as metadata keys match nothing unless a volume has that key of its own.
    for (const k of HOSTILE) {
      const r = await env.req('GET', `/v2/${p}/cloudvolumes/detail?metadata=${encodeURIComponent(JSON.stringify({ [k]: 'x' }))}`);
      expect(r.status, k).toBe(200);
      expect((r.json as { count: number }).count).toBe(0);
    }
  });

  it('a metadata key "__proto__" is an ordinary key: stored, shown and filtered on', async () => {
    env = await setup();
    const p = env.config.projects[0]!.id;
    const body = JSON.parse('{"volume":{"name":"pv","size":10,"volume_type":"SSD","availability_zone":"az1","metadata":{"__proto__":"a","constructor":"b"}}}');
    const c = await env.req('POST', `/v2/${p}/cloudvolumes`, body);
    expect(c.status).toBe(200);
    const id = (c.json as { volume_ids: string[] }).volume_ids[0]!;
    settle(env);
    const show = await env.req('GET', `/v2/${p}/cloudvolumes/${id}`);
    expect(Object.entries((show.json as { volume: { metadata: Record<string, string> } }).volume.metadata)).toEqual(expect.arrayContaining([['__proto__', 'a'], ['constructor', 'b']]));
    const found = await env.req('GET', `/v2/${p}/cloudvolumes/detail?metadata=${encodeURIComponent('{"__proto__":"a"}')}`);
    expect((found.json as { count: number }).count).toBe(1);
    const upd = await env.req('PUT', `/v2/${p}/cloudvolumes/${id}`, JSON.parse('{"volume":{"metadata":{"__proto__":"z"}}}'));
    expect(upd.status).toBe(200);
    expect(Object.getPrototypeOf(env.hcs.hypervisor.volume(id)!.metadata)).toBe(Object.prototype);
    expect(env.hcs.hypervisor.volume(id)!.metadata.__proto__).toBeDefined();
  });

  it('inherited names as ids are 404 on every show, delete and job route', async () => {
    env = await setup();
    const p = env.config.projects[0]!.id;
    for (const k of HOSTILE) {
      for (const [method, path] of [
        ['GET', `/v1/${p}/cloudservers/${k}`],
        ['GET', `/v1/${p}/jobs/${k}`],
        ['GET', `/v2/${p}/cloudvolumes/${k}`],
        ['DELETE', `/v2/${p}/cloudvolumes/${k}`],
        ['GET', `/v1/${p}/ports/${k}`],
        ['DELETE', `/v1/${p}/ports/${k}`],
        ['GET', `/v1/${p}/privateips/${k}`],
        ['DELETE', `/v1/${p}/privateips/${k}`],
        ['GET', `/v1/${p}/cloudservers/${k}/block_device`],
      ] as const) {
        const r = await env.req(method, path);
        expect([400, 404], `${method} ${path}: ${r.body}`).toContain(r.status);
        expect((r.json as Err).error.code).toMatch(/^[A-Za-z]+\.\d{4}$/);
      }
      const d = await env.req('POST', `/v1/${p}/cloudservers/delete`, { servers: [{ id: k }] });
      expect(d.status).toBe(404);
      const a = await env.req('POST', `/v1/${p}/cloudservers/action`, { 'os-stop': { servers: [{ id: k }] } });
      expect(a.status).toBe(404);
    }
  });

  it('inherited names as body fields are unknown fields (400), as server metadata and tags they are kept', async () => {
    env = await setup();
    const p = env.config.projects[0]!.id;
    const c = await env.client.createServers(serverBody(env));
    settle(env);
    for (const k of HOSTILE) {
      const r = await env.req('POST', `/v1/${p}/cloudservers/action`, JSON.parse(`{"os-stop":{"servers":[{"id":"${c.serverIds[0]}"}]},"${k}":1}`));
      expect(r.status, k).toBe(400);
      expect((r.json as Err).error.message).toContain(k);
    }
    const body = serverBody(env, { name: 'odd', metadata: JSON.parse('{"__proto__":"m","toString":"t"}') });
    const s = await env.req('POST', `/v1/${p}/cloudservers`, body);
    expect(s.status).toBe(200);
    const id = (s.json as { serverIds: string[] }).serverIds[0]!;
    expect(Object.keys(env.hcs.hypervisor.server(id)!.metadata).sort()).toEqual(['__proto__', 'toString']);
  });

  it('POST /_admin/faults with service or operation "__proto__" / "constructor" is 400 Admin.0400', async () => {
    env = await setup();
    for (const k of HOSTILE) {
      const bad1 = await admin('POST', '/_admin/faults', { service: k, operation: '*', effect: { type: 'error', status: 500, code: 'Ecs.0002' } });
      expect(bad1.status, k).toBe(400);
      expect((bad1.json as Err).error.code).toBe('Admin.0400');
      const bad2 = await admin('POST', '/_admin/faults', { service: 'ecs', operation: k, effect: { type: 'error', status: 500, code: 'Ecs.0002' } });
      expect(bad2.status, k).toBe(400);
      const bad3 = await admin('POST', '/_admin/faults', { service: 'ecs', operation: '*', effect: { type: k } });
      expect(bad3.status, k).toBe(400);
    }
    expect(env.hcs.faults.list()).toHaveLength(0);
  });
});

describe('HCS-5, HCS-6: mock-hcs admin authentication', () => {
  it('every /_admin route is 401 Admin.0401 without the token, or with a wrong one; cloud credentials do not open it', async () => {
    env = await setup();
    const routes = [
      ['GET', '/_admin/state'],
      ['GET', '/_admin/catalog'],
      ['GET', '/_admin/seed'],
      ['GET', '/_admin/faults'],
      ['POST', '/_admin/reset'],
      ['POST', '/_admin/faults'],
    ] as const;
    const p = env.config.projects[0]!;
    for (const [method, url] of routes) {
      for (const headers of [{}, { 'x-admin-token': 'wrong-token-wrong-token-wrong' }, { authorization: 'Bearer nope' }, { 'x-admin-token': '' }]) {
        const r = await env.hcs.app.inject({ method, url, headers });
        expect(r.statusCode, `${method} ${url} ${JSON.stringify(headers)}`).toBe(401);
        const e = JSON.parse(r.body) as Err;
        expect(e.error.code).toBe('Admin.0401');
        expect(r.body).not.toContain(p.id);
        expect(r.headers['x-request-id']).toBeDefined();
      }
      // A request signed with a project's AK/SK is not an admin request.
      const signed = await env.req(method, url);
      expect(signed.status).toBe(401);
    }
    const ok = await env.hcs.app.inject({ method: 'GET', url: '/_admin/state', headers: { 'x-admin-token': env.hcs.adminToken! } });
    expect(ok.statusCode).toBe(200);
    const bearer = await env.hcs.app.inject({ method: 'GET', url: '/_admin/seed', headers: { authorization: `Bearer ${env.hcs.adminToken!}` } });
    expect(bearer.statusCode).toBe(200);
  });

  it('each cloud gets its own random token unless one is given; admin off means no token and no routes', async () => {
    env = await setup();
    const { createMockHcs } = await import('../../mock-hcs/src/index.js');
    const { SeededRng, VirtualClock } = await import('../../src/core/index.js');
    const other = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(42) });
    const given = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(42), adminToken: 'a-given-token-0123456789' });
    const off = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(42), admin: false });
    try {
      expect(other.adminToken).toMatch(/^[0-9a-f]{48}$/);
      expect(other.adminToken).not.toBe(env.hcs.adminToken);
      expect(given.adminToken).toBe('a-given-token-0123456789');
      expect(off.adminToken).toBeUndefined();
      const r = await off.app.inject({ method: 'GET', url: '/_admin/state', headers: { 'x-admin-token': 'anything-anything' } });
      // Not an admin route any more: an unsigned cloud request (APIGW).
      expect(r.statusCode).toBe(401);
      expect((JSON.parse(r.body) as Err).error.code).toMatch(/^APIGW\./);
      await expect(createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(1), adminToken: 'short' })).rejects.toThrow(/at least 16/);
    } finally {
      await other.close();
      await given.close();
      await off.close();
    }
  });
});

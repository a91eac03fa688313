import { afterEach, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/product/cloud/index.js';
import { serverBody, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

type ErrJson = { error: { code: string; message: string } };

async function send(env: Env, headers: Record<string, string>, path: string, method = 'GET', body?: string) {
  const res = await env.hcs.app.inject({ method: method as 'GET', url: path, headers, ...(body !== undefined ? { payload: body } : {}) });
  return { status: res.statusCode, json: res.json() as ErrJson, headers: res.headers };
}

describe('mock-hcs AK/SK authentication (HCS-5)', () => {
  it('refuses a missing, malformed or wrong signature with 401', async () => {
    env = await setup();
    const p = env.config.projects[0]!;
    const path = `/v1/${p.id}/cloudservers/detail`;
    const none = await send(env, {}, path);
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe('APIGW.0301');
    expect(none.headers['x-request-id']).toBeDefined();

    const good = signRequest({ method: 'GET', path, headers: { 'content-type': 'application/json' } }, { ak: p.ak, sk: p.sk }, 'h', new Date(env.clock.now()));
    expect((await send(env, good.headers, path)).status).toBe(200);

    const wrongSk = signRequest({ method: 'GET', path, headers: {} }, { ak: p.ak, sk: 'wrong' }, 'h', new Date(env.clock.now()));
    const r1 = await send(env, wrongSk.headers, path);
    expect(r1.status).toBe(401);
    expect(r1.json.error.message).toContain('signature');

    const unknownAk = signRequest({ method: 'GET', path, headers: {} }, { ak: 'NOPE', sk: p.sk }, 'h', new Date(env.clock.now()));
    expect((await send(env, unknownAk.headers, path)).json.error.message).toContain('NOPE');

    // Tampering with the path, query, a signed header or the body breaks the signature.
    expect((await send(env, good.headers, `${path}?limit=1`)).status).toBe(401);
    expect((await send(env, { ...good.headers, 'content-type': 'text/plain' }, path)).status).toBe(401);
    const post = signRequest({ method: 'POST', path: `/v1.1/${p.id}/cloudservers`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(serverBody(env)) }, { ak: p.ak, sk: p.sk }, 'h', new Date(env.clock.now()));
    const tampered = JSON.stringify(serverBody(env, { name: 'evil' }));
    expect((await send(env, post.headers, post.path, 'POST', tampered)).status).toBe(401);
    expect(env.hcs.hypervisor.listServers()).toEqual([]);
    expect((await send(env, post.headers, post.path, 'POST', post.body)).status).toBe(200);
    expect(env.events.all().filter((e) => e.type === 'auth.rejected').length).toBeGreaterThanOrEqual(5);
  });

  it('refuses an X-Sdk-Date outside the skew window of the injected clock', async () => {
    env = await setup();
    const p = env.config.projects[0]!;
    const path = `/v1/${p.id}/cloudservers/detail`;
    const old = signRequest({ method: 'GET', path, headers: {} }, { ak: p.ak, sk: p.sk }, 'h', new Date(env.clock.now() - 16 * 60_000));
    const r = await send(env, old.headers, path);
    expect(r.status).toBe(401);
    expect(r.json.error.message).toContain('skew');
    const future = signRequest({ method: 'GET', path, headers: {} }, { ak: p.ak, sk: p.sk }, 'h', new Date(env.clock.now() + 16 * 60_000));
    expect((await send(env, future.headers, path)).status).toBe(401);
    const near = signRequest({ method: 'GET', path, headers: {} }, { ak: p.ak, sk: p.sk }, 'h', new Date(env.clock.now() - 14 * 60_000));
    expect((await send(env, near.headers, path)).status).toBe(200);
    // A valid request replayed after the window has passed is refused.
    env.clock.advanceBy(20 * 60_000);
    expect((await send(env, near.headers, path)).status).toBe(401);
  });

  it('isolates projects: another project path is 403, another project resource is 404', async () => {
    env = await setup();
    const [p0, p1] = env.config.projects;
    const id = (await env.client.createServers(serverBody(env))).serverIds[0]!;
    // Project 0 credentials on project 1 paths.
    const cross = signRequest({ method: 'GET', path: `/v1/${p1!.id}/cloudservers/${id}`, headers: {} }, { ak: p0!.ak, sk: p0!.sk }, 'h', new Date(env.clock.now()));
    const r = await send(env, cross.headers, cross.path);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('Ecs.0003');
    // Project 1 with its own credentials does not see project 0's server, volumes or jobs.
    expect(await env.other.showServer(id)).toBeUndefined();
    expect(await env.other.listServers()).toEqual([]);
    expect(await env.other.listVolumes()).toEqual([]);
    const del = await env.other.deleteServers([id]).catch((e: unknown) => e);
    expect((del as { status: number }).status).toBe(404);
    expect(await env.client.showServer(id)).toBeDefined();
  });
});

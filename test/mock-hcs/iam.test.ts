/**
 * IAM (HCS-5): Keystone v3 token issue, token authentication as the
 * alternative to AK/SK, project scoping, expiry on the injected clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { HcsApiError, HcsClient, injectTransport, issueToken } from '../../src/product/cloud/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

type ErrJson = { error: { code: string; message: string } };

function passwordBody(user: string, password: string, domain: string, scope?: unknown) {
  return { auth: { identity: { methods: ['password'], password: { user: { name: user, password, domain: { name: domain } } } }, ...(scope ? { scope } : {}) } };
}

async function post(env: Env, body: unknown, headers: Record<string, string> = {}) {
  const r = await env.hcs.app.inject({ method: 'POST', url: '/v3/auth/tokens', headers: { 'content-type': 'application/json;charset=UTF-8', ...headers }, payload: JSON.stringify(body) });
  return { status: r.statusCode, token: r.headers['x-subject-token'] as string | undefined, json: r.json() as Record<string, unknown> };
}

async function withToken(env: Env, token: string, method: string, url: string, body?: unknown) {
  const r = await env.hcs.app.inject({
    method: method as 'GET',
    url,
    headers: { 'content-type': 'application/json', 'x-auth-token': token },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: r.statusCode, json: r.json() as unknown };
}

describe('mock-hcs IAM tokens (HCS-5)', () => {
  it('issues a project-scoped token for the default user (201, X-Subject-Token, expires_at from the injected clock, catalog)', async () => {
    env = await setup();
    const p = env.config.projects[0]!;
    const r = await post(env, passwordBody('testbed-admin', 'Testbed@123', 'testbed-account', { project: { id: p.id } }));
    expect(r.status).toBe(201);
    expect(r.token).toMatch(/^MII[A-Za-z0-9_-]{100,}$/);
    const t = (r.json as { token: Record<string, unknown> }).token;
    expect(t.expires_at).toBe(new Date(env.clock.now() + 24 * 3600_000).toISOString().replace('Z', '000Z'));
    expect(t.issued_at).toBe(new Date(env.clock.now()).toISOString().replace('Z', '000Z'));
    expect(t.methods).toEqual(['password']);
    expect(t.project).toEqual({ id: p.id, name: 'testbed', domain: { id: expect.any(String), name: 'testbed-account' } });
    expect((t.user as { name: string }).name).toBe('testbed-admin');
    const catalog = t.catalog as { type: string; endpoints: { url: string; region: string }[] }[];
    expect(catalog.map((c) => c.type)).toEqual(expect.arrayContaining(['compute', 'evs', 'vpc', 'image', 'iam']));
    expect(catalog.find((c) => c.type === 'compute')!.endpoints[0]!.url).toContain(`/v1/${p.id}`);
    // Scoped by project name, without the catalog.
    const byName = await env.hcs.app.inject({
      method: 'POST',
      url: '/v3/auth/tokens?nocatalog=true',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(passwordBody('testbed-admin', 'Testbed@123', 'testbed-account', { project: { name: 'testbed' } })),
    });
    expect(byName.statusCode).toBe(201);
    expect((byName.json() as { token: Record<string, unknown> }).token.catalog).toBeUndefined();
    expect(env.events.all().some((e) => e.type === 'iam.token-issued')).toBe(true);
  });

  it('refuses wrong passwords, unknown users, projects the user has no role on and bad bodies', async () => {
    env = await setup();
    const [p0, p1] = env.config.projects;
    const wrong = await post(env, passwordBody('testbed-admin', 'nope', 'testbed-account', { project: { id: p0!.id } }));
    expect([wrong.status, (wrong.json as ErrJson).error.code, wrong.token]).toEqual([401, 'IAM.0001', undefined]);
    expect((await post(env, passwordBody('nobody', 'x', 'testbed-account'))).status).toBe(401);
    expect((await post(env, passwordBody('testbed-admin', 'Testbed@123', 'other-domain'))).status).toBe(401);
    const noRole = await post(env, passwordBody('testbed-admin', 'Testbed@123', 'testbed-account', { project: { id: p1!.id } }));
    expect([noRole.status, (noRole.json as ErrJson).error.code]).toEqual([401, 'IAM.0001']);
    const unknown = await post(env, passwordBody('testbed-admin', 'Testbed@123', 'testbed-account', { project: { name: 'ghost' } }));
    expect([unknown.status, (unknown.json as ErrJson).error.code]).toEqual([404, 'IAM.0004']);
    const bad = await post(env, { auth: { identity: { methods: ['password'] } } });
    expect([bad.status, (bad.json as ErrJson).error.code]).toEqual([400, 'IAM.0011']);
    const malformed = await env.hcs.app.inject({ method: 'POST', url: '/v3/auth/tokens', headers: { 'content-type': 'application/json' }, payload: '{' });
    expect([malformed.statusCode, (malformed.json() as ErrJson).error.code]).toEqual([400, 'IAM.0011']);
    expect(env.events.all().filter((e) => e.type === 'auth.rejected').length).toBeGreaterThanOrEqual(4);
  });

  it('accepts X-Auth-Token instead of AK/SK, scoped to the token project', async () => {
    env = await setup();
    const [p0, p1] = env.config.projects;
    const issued = await issueToken(injectTransport(env.hcs.app), { user: 'testbed-admin', password: 'Testbed@123', domain: 'testbed-account', project: { id: p0!.id } });
    expect(issued.projectId).toBe(p0!.id);
    const client = new HcsClient({ transport: injectTransport(env.hcs.app), token: issued.token, projectId: p0!.id, clock: env.clock });
    const created = await client.createServers(serverBody(env, { name: 'by-token' }));
    settle(env);
    expect((await client.showServer(created.serverIds[0]!))?.status).toBe('ACTIVE');
    // The AK/SK client of the same project sees the same server.
    expect((await env.client.listServers({ name: 'by-token' })).map((s) => s.id)).toEqual(created.serverIds);
    // Another project's path with this token: 403; another project's token does not see the server.
    const cross = await withToken(env, issued.token, 'GET', `/v1/${p1!.id}/cloudservers/detail`);
    expect([cross.status, (cross.json as ErrJson).error.code]).toEqual([403, 'Ecs.0003']);
    const other = await issueToken(injectTransport(env.hcs.app), { user: 'other-tenant-admin', password: 'Other-tenant@123', domain: 'testbed-account', project: { name: 'other-tenant' } });
    const otherClient = new HcsClient({ transport: injectTransport(env.hcs.app), token: () => other.token, projectId: p1!.id, clock: env.clock });
    expect(await otherClient.showServer(created.serverIds[0]!)).toBeUndefined();
    expect(await otherClient.listServers()).toEqual([]);
    // Wrong tokens: 401 in the cloud's error shape.
    const garbage = await withToken(env, 'MIIgarbage', 'GET', `/v1/${p0!.id}/cloudservers/detail`);
    expect(garbage.status).toBe(401);
    expect((garbage.json as ErrJson).error).toEqual({ code: 'APIGW.0301', message: 'Incorrect IAM authentication information: decrypt token fail' });
  });

  it('expires tokens on the injected clock (401 "token expires"), honours tokenTtlMs', async () => {
    const config = defaultCloudConfig();
    config.tokenTtlMs = 3600_000;
    env = await setup({ config });
    const p0 = env.config.projects[0]!;
    const { token, expiresAt } = await issueToken(injectTransport(env.hcs.app), { user: 'testbed-admin', password: 'Testbed@123', domain: 'testbed-account', project: { id: p0.id } });
    expect(expiresAt).toBe(new Date(env.clock.now() + 3600_000).toISOString().replace('Z', '000Z'));
    const url = `/v1/${p0.id}/cloudservers/detail`;
    env.clock.advanceBy(3600_000 - 1);
    expect((await withToken(env, token, 'GET', url)).status).toBe(200);
    env.clock.advanceBy(1);
    const expired = await withToken(env, token, 'GET', url);
    expect(expired.status).toBe(401);
    expect((expired.json as ErrJson).error.code).toBe('APIGW.0301');
    expect((expired.json as ErrJson).error.message).toContain(`token expires, expires_at: ${expiresAt}`);
    // The expired token cannot be exchanged for a new one either.
    const again = await post(env, { auth: { identity: { methods: ['token'], token: { id: token } }, scope: { project: { id: p0.id } } } });
    expect(again.status).toBe(401);
  });

  it('token method re-scopes; a domain-scoped token reaches IAM but not project APIs', async () => {
    env = await setup();
    const p0 = env.config.projects[0]!;
    const unscoped = await post(env, passwordBody('testbed-admin', 'Testbed@123', 'testbed-account'));
    expect(unscoped.status).toBe(201);
    expect((unscoped.json as { token: { domain?: { name: string }; project?: unknown } }).token.domain?.name).toBe('testbed-account');
    const denied = await withToken(env, unscoped.token!, 'GET', `/v1/${p0.id}/cloudservers/detail`);
    expect([denied.status, (denied.json as ErrJson).error.code]).toEqual([403, 'Ecs.0003']);
    const projects = await withToken(env, unscoped.token!, 'GET', '/v3/projects?name=testbed');
    expect(projects.status).toBe(200);
    expect((projects.json as { projects: { id: string }[] }).projects.map((p) => p.id)).toEqual([p0.id]);
    // Exchange it (token in the X-Auth-Token header) for a project-scoped one.
    const scoped = await post(env, { auth: { identity: { methods: ['token'] }, scope: { project: { id: p0.id } } } }, { 'x-auth-token': unscoped.token! });
    expect(scoped.status).toBe(201);
    expect((scoped.json as { token: { methods: string[] } }).token.methods).toEqual(['token']);
    expect((await withToken(env, scoped.token!, 'GET', `/v1/${p0.id}/cloudservers/detail`)).status).toBe(200);
  });

  it('lists projects by name with AK/SK and lists the auth domain; users come from the configuration', async () => {
    const config = defaultCloudConfig();
    config.projects[0]!.users = [{ name: 'ops', password: 'Ops@2026' }];
    config.projects[1]!.users = [];
    env = await setup({ config });
    const p0 = config.projects[0]!;
    const all = await env.client.listProjects();
    expect(all.map((p) => p.name)).toEqual(['testbed', 'other-tenant']);
    expect((await env.client.listProjects({ name: 'other-tenant' })).map((p) => p.id)).toEqual([config.projects[1]!.id]);
    expect(await env.client.listProjects({ name: 'nope' })).toEqual([]);
    const domains = await env.req('GET', '/v3/auth/domains');
    expect((domains.json as { domains: { name: string }[] }).domains.map((d) => d.name)).toEqual(['testbed-account']);
    const t = transportToken(await post(env, passwordBody('ops', 'Ops@2026', 'testbed-account', { project: { id: p0.id } })));
    expect(t).toBeDefined();
    expect((await post(env, passwordBody('testbed-admin', 'Testbed@123', 'testbed-account'))).status).toBe(401);
    expect((await post(env, passwordBody('other-tenant-admin', 'Other-tenant@123', 'testbed-account'))).status).toBe(401);
    // The X-Domain-Id header must be the credentials' domain.
    const wrongDomain = await env.req('GET', '/v3/projects', undefined, { 'x-domain-id': '0'.repeat(32) });
    expect(wrongDomain.status).toBe(403);
  });

  it('tokens survive a dump/restore (stored as hashes only)', async () => {
    env = await setup();
    const p0 = env.config.projects[0]!;
    const { token } = await issueToken(injectTransport(env.hcs.app), { user: 'testbed-admin', password: 'Testbed@123', domain: 'testbed-account', project: { id: p0.id } });
    const dump = env.hcs.dumpState();
    expect(JSON.stringify(dump)).not.toContain(token);
    await env.hcs.reset();
    expect((await withToken(env, token, 'GET', `/v1/${p0.id}/cloudservers/detail`)).status).toBe(401);
    await env.hcs.restoreState(dump);
    expect((await withToken(env, token, 'GET', `/v1/${p0.id}/cloudservers/detail`)).status).toBe(200);
    const err = await issueToken(injectTransport(env.hcs.app), { user: 'testbed-admin', password: 'bad', domain: 'testbed-account' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HcsApiError);
    expect(err).toMatchObject({ status: 401, code: 'IAM.0001' });
  });
});

function transportToken(r: { status: number; token: string | undefined }): string | undefined {
  return r.status === 201 ? r.token : undefined;
}

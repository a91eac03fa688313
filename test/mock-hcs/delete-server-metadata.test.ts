/**
 * ECS DeleteServerMetadata ("Deleting Specified ECS Metadata", ecs_02_0702; issue 33, the cloud-call
 * recipe of docs/architecture.md followed for it): DELETE /v1/{project_id}/cloudservers/{server_id}/metadata/{key},
 * synchronous, 204 with no body. The key is gone from ShowServer and ListServersDetails (and from the
 * data file); an unknown server answers ShowServer's 404 Ecs.0114; a bad key is refused with Ecs.0005
 * and changes nothing; a key the server does not have is not documented (mock-hcs: 204, nothing changes,
 * as UpdateServerMetadata never depends on whether a key exists); fault rules know the operation by name.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BasicCredentials } from '@huaweicloud/huaweicloud-sdk-core';
// Not re-exported by the package root.
import { ClientRequestException } from '@huaweicloud/huaweicloud-sdk-core/exception/ClientRequestException.js';
import { DeleteServerMetadataRequest, EcsClient, ShowServerRequest } from '@huaweicloud/huaweicloud-sdk-ecs';
import { EventLog, SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs } from '../../mock-hcs/src/index.js';
import { HcsClient, injectTransport } from '../../src/product/cloud/index.js';
import { refused, serverBody, settle, setup, type Env } from './helpers.js';

type ErrJson = { error: { code: string; message: string } };
const MISSING = '00000000-0000-4000-8000-000000000000';

let env: Env | undefined;
let dir: string | undefined;
afterEach(async () => {
  await env?.hcs.close();
  env = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** An ACTIVE server with metadata cluster=demo (serverBody) plus `extra` (UpdateServerMetadata). */
async function serverWith(e: Env, extra: Record<string, string>): Promise<string> {
  const id = (await e.client.createServers(serverBody(e))).serverIds[0]!;
  settle(e);
  const r = await e.req('POST', `/v1/${e.client.projectId}/cloudservers/${id}/metadata`, { metadata: extra });
  expect(r.status).toBe(200);
  return id;
}

const del = (e: Env, server: string, key: string) => e.req('DELETE', `/v1/${e.client.projectId}/cloudservers/${server}/metadata/${encodeURIComponent(key)}`);

describe('ECS DeleteServerMetadata (ecs_02_0702)', () => {
  it('204 with no body; the key is gone from ShowServer, ListServersDetails and the data file, the others stay', { timeout: 30_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), 'mock-hcs-dsm-'));
    const dataFile = join(dir, 'cloud.json');
    const clock = new VirtualClock();
    env = await setup({ dataFile, clock });
    const id = await serverWith(env, { owner: 'team-a', 'app:role.v1': 'web', tier: 'gold' });
    const before = (await env.client.showServer(id))!;
    expect(before.metadata).toMatchObject({ cluster: 'demo', owner: 'team-a', 'app:role.v1': 'web', tier: 'gold' });

    clock.advanceBy(5_000);
    const r = await del(env, id, 'owner');
    expect([r.status, r.body]).toEqual([204, '']);
    // The provider's client: the same call, a key with ':' and '.' (allowed in keys, ecs_02_0701) URI-encoded in the path.
    await expect(env.client.deleteServerMetadata(id, 'app:role.v1')).resolves.toBeUndefined();

    const shown = (await env.client.showServer(id))!;
    expect(Object.keys(shown.metadata)).not.toContain('owner');
    expect(Object.keys(shown.metadata)).not.toContain('app:role.v1');
    expect(shown.metadata).toMatchObject({ cluster: 'demo', tier: 'gold' });
    expect(shown.updated).not.toBe(before.updated);
    const listed = (await env.client.listServers({ name: 'worker-0' })).find((s) => s.id === id)!;
    expect(Object.keys(listed.metadata)).not.toContain('owner');
    expect(listed.metadata).toMatchObject({ cluster: 'demo', tier: 'gold' });
    const events = env.events.all().filter((e) => e.type === 'server.metadata-deleted');
    expect(events.map((e) => (e.data as { keys: string[] }).keys)).toEqual([['owner'], ['app:role.v1']]);

    // A restart on the same data file: still gone.
    await env.hcs.close();
    env = await setup({ dataFile, clock });
    const again = (await env.client.showServer(id))!;
    expect(Object.keys(again.metadata)).not.toContain('owner');
    expect(again.metadata).toMatchObject({ cluster: 'demo', tier: 'gold' });
  });

  it('a key such as __proto__ is an ordinary entry: deleted as any other, the record keeps its prototype', async () => {
    env = await setup();
    const p = env.client.projectId;
    const id = (await env.client.createServers(serverBody(env))).serverIds[0]!;
    settle(env);
    expect((await env.req('POST', `/v1/${p}/cloudservers/${id}/metadata`, '{"metadata":{"__proto__":"x","constructor":"y"}}')).status).toBe(200);
    expect(Object.keys((await env.client.showServer(id))!.metadata)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));
    expect((await del(env, id, '__proto__')).status).toBe(204);
    expect((await del(env, id, 'constructor')).status).toBe(204);
    const meta = (await env.client.showServer(id))!.metadata;
    expect(Object.keys(meta)).not.toContain('__proto__');
    expect(Object.keys(meta)).not.toContain('constructor');
    expect(meta.cluster).toBe('demo');
  });

  it('a key of 255 characters (the longest UpdateServerMetadata takes) is deleted: the path parameter reaches the route', async () => {
    env = await setup();
    const key = 'k'.repeat(255);
    const id = await serverWith(env, { [key]: 'v' });
    expect(Object.keys((await env.client.showServer(id))!.metadata)).toContain(key);
    expect((await del(env, id, key)).status).toBe(204);
    expect(Object.keys((await env.client.showServer(id))!.metadata)).not.toContain(key);
  });

  it('refusals change nothing: unknown server 404 Ecs.0114 (as ShowServer), another project\'s server 404, an empty key 400 Ecs.0005 naming key', async () => {
    env = await setup();
    const p = env.client.projectId;
    const id = await serverWith(env, { owner: 'team-a' });
    const state = JSON.stringify(env.hcs.dumpState().data);

    const none = await del(env, MISSING, 'owner');
    const show = await env.req('GET', `/v1/${p}/cloudservers/${MISSING}`);
    expect([none.status, (none.json as ErrJson).error.code]).toEqual([404, 'Ecs.0114']);
    expect((none.json as ErrJson).error).toEqual((show.json as ErrJson).error);
    const e404 = await refused(env.client.deleteServerMetadata(MISSING, 'owner'));
    expect([e404.status, e404.code, e404.operation]).toEqual([404, 'Ecs.0114', 'DeleteServerMetadata']);
    // The server exists, but in project "testbed": the other project's credentials do not see it.
    const other = await refused(env.other.deleteServerMetadata(id, 'owner'));
    expect([other.status, other.code]).toEqual([404, 'Ecs.0114']);

    const empty = await env.req('DELETE', `/v1/${p}/cloudservers/${id}/metadata/`);
    expect([empty.status, (empty.json as ErrJson).error.code]).toEqual([400, 'Ecs.0005']);
    expect((empty.json as ErrJson).error.message).toMatch(/^Invalid request parameter key: a metadata key must be 1-255 characters/);
    // Over 255 characters: the route refuses it naming the field (fastify's maxParamLength is raised to 512 in
    // mock-hcs/src/index.ts, so a key of up to 255 reaches the route).
    const long = await del(env, id, 'k'.repeat(256));
    expect([long.status, (long.json as ErrJson).error.code]).toEqual([400, 'Ecs.0005']);
    expect((long.json as ErrJson).error.message).toMatch(/^Invalid request parameter key: a metadata key must be 1-255 characters/);

    expect(JSON.stringify(env.hcs.dumpState().data)).toBe(state);
    expect((await env.client.showServer(id))!.metadata).toMatchObject({ cluster: 'demo', owner: 'team-a' });
    expect(env.events.all().some((e) => e.type === 'server.metadata-deleted')).toBe(false);
  });

  it('a key the server does not have (undocumented): 204 and nothing changes; a key ECS sets itself stays shown', async () => {
    env = await setup();
    const id = await serverWith(env, { owner: 'team-a' });
    const state = JSON.stringify(env.hcs.dumpState().data);
    const r = await del(env, id, 'never-set');
    expect([r.status, r.body]).toEqual([204, '']);
    // vpc_id is rendered by the cloud (render.ts), not a key of the record: not refused, not removed.
    expect((await del(env, id, 'vpc_id')).status).toBe(204);
    expect(JSON.stringify(env.hcs.dumpState().data)).toBe(state);
    const meta = (await env.client.showServer(id))!.metadata;
    expect(meta).toMatchObject({ cluster: 'demo', owner: 'team-a', vpc_id: env.config.vpcs[0]!.id });
    expect(env.events.all().some((e) => e.type === 'server.metadata-deleted')).toBe(false);
    // Deleting a key twice: the second answer is the same 204.
    expect((await del(env, id, 'owner')).status).toBe(204);
    expect((await del(env, id, 'owner')).status).toBe(204);
    expect(Object.keys((await env.client.showServer(id))!.metadata)).not.toContain('owner');
  });

  it('the official Node SDK (EcsClient.deleteServerMetadata) against a listening mock-hcs: 204, the key gone; 404 Ecs.0114', async () => {
    // The SDK signs with the wall clock: mock-hcs checks X-Sdk-Date against it (authNow), as sdk-coverage.test.ts does.
    const clock = new VirtualClock(Date.now());
    const hcs = await createMockHcs({ clock, rng: new SeededRng(3), events: new EventLog(clock), authNow: () => Date.now() });
    try {
      const endpoint = await hcs.app.listen({ port: 0, host: '127.0.0.1' });
      const p0 = hcs.config.projects[0]!;
      const ecs = EcsClient.newBuilder().withCredential(new BasicCredentials().withAk(p0.ak).withSk(p0.sk).withProjectId(p0.id)).withEndpoint(endpoint).build();
      // The server through the provider's client (signed with the virtual clock, still at wall time); serverBody reads only the config.
      const client = new HcsClient({ transport: injectTransport(hcs.app), ak: p0.ak, sk: p0.sk, projectId: p0.id, clock });
      const id = (await client.createServers(serverBody({ config: hcs.config } as Env))).serverIds[0]!;
      clock.advanceBy(120_000);
      expect((await ecs.showServer(new ShowServerRequest().withServerId(id))).server?.metadata).toMatchObject({ cluster: 'demo' });
      const r = await ecs.deleteServerMetadata(new DeleteServerMetadataRequest().withServerId(id).withKey('cluster'));
      expect(r.httpStatusCode).toBe(204);
      expect(Object.keys((await ecs.showServer(new ShowServerRequest().withServerId(id))).server?.metadata ?? {})).not.toContain('cluster');
      const e = await ecs.deleteServerMetadata(new DeleteServerMetadataRequest().withServerId(MISSING).withKey('cluster')).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ClientRequestException);
      expect([(e as ClientRequestException).httpStatusCode, (e as ClientRequestException).errorCode]).toEqual([404, 'Ecs.0114']);
    } finally {
      await hcs.close();
    }
  });

  it('fault rules name the operation deleteServerMetadata (HCS-6) and match the server of the path; a refused call keeps the key', async () => {
    env = await setup();
    const [a, b] = (await env.client.createServers(serverBody(env, { count: 2 }))).serverIds as [string, string];
    settle(env);
    for (const id of [a, b]) expect((await env.req('POST', `/v1/${env.client.projectId}/cloudservers/${id}/metadata`, { metadata: { owner: 'team-a' } })).status).toBe(200);
    const rule = env.hcs.faults.add({ service: 'ecs', operation: 'deleteServerMetadata', match: { id: a }, effect: { type: 'error', status: 503, code: 'Ecs.0002', message: 'try later' }, count: 1 });

    const hit = await del(env, a, 'owner');
    expect([hit.status, hit.json]).toEqual([503, { error: { code: 'Ecs.0002', message: 'try later' } }]);
    expect((await env.client.showServer(a))!.metadata.owner).toBe('team-a');
    // Another server, and another operation on the same server, are not matched.
    expect((await del(env, b, 'owner')).status).toBe(204);
    expect((await env.req('POST', `/v1/${env.client.projectId}/cloudservers/${a}/metadata`, { metadata: { more: '1' } })).status).toBe(200);
    expect(env.hcs.faults.list().find((f) => f.id === rule)).toMatchObject({ fired: 1 });
    // count 1: the retry goes through.
    expect((await del(env, a, 'owner')).status).toBe(204);
    expect(Object.keys((await env.client.showServer(a))!.metadata)).not.toContain('owner');

    // By the server's metadata (resource matching sees the server of the path, its tags and metadata).
    env.hcs.faults.add({ service: 'ecs', operation: 'deleteServerMetadata', match: { tag: 'more=1' }, effect: { type: 'error', status: 500, code: 'Ecs.0002' } });
    expect((await del(env, a, 'more')).status).toBe(500);
    expect((await env.client.showServer(a))!.metadata.more).toBe('1');
  });
});

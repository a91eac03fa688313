/**
 * ECS ShowServer/ListServers send server JSON text remembered per record
 * (serverJson) instead of returning objects for fastify to serialise
 * (docs/performance.md). The text must always be
 * JSON.stringify(renderServer(e, s)) of the record as it is now (records,
 * their NICs, volumes, metadata and tags change in place; so may the flavor
 * and image they name), and the responses what the object replies gave.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CloudEngine } from '../../mock-hcs/src/cloud.js';
import { renderServer, serverJson } from '../../mock-hcs/src/render.js';
import type { ServerRec } from '../../mock-hcs/src/state.js';
import { SeededRng } from '../../src/core/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

describe('serverJson', () => {
  it('is JSON.stringify(renderServer(s)) after every kind of in-place change, down to a NIC, a volume, a tag and the flavor', async () => {
    env = await setup();
    const engine = env.hcs.hypervisor as unknown as CloudEngine;
    const { serverIds } = await env.client.createServers(serverBody(env, { count: 3 }));
    settle(env);
    const servers = serverIds.map((id) => engine.serverRec(env.client.projectId, id)!);
    expect(servers).toHaveLength(3);
    const rng = new SeededRng(23);
    const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
    const flavor = engine.flavors.get(servers[0]!.flavorId)!;
    const image = engine.images.get(servers[0]!.imageId)!;
    const changes: ((s: ServerRec) => void)[] = [
      (s) => (s.status = pick(['BUILD', 'ACTIVE', 'SHUTOFF', 'ERROR'] as const)),
      (s) => (s.taskState = pick([null, 'deleting', 'rebooting'])),
      (s) => (s.name = pick(['a', 'b', 'worker-0002'])),
      (s) => (s.updated += pick([0, 1, 1000])),
      (s) => (rng.next() < 0.5 ? delete s.launchedAt : (s.launchedAt = 1_767_225_600_000 + rng.int(3))),
      (s) => (s.userData = pick(['', 'aGVsbG8=', `${s.userData ?? ''}x`])),
      (s) => (s.metadata[pick(['a', 'hcs.io/hostname', 'k'])] = pick(['x', 'y'])),
      (s) => delete s.metadata[pick(['a', 'hcs.io/hostname', 'k'])],
      (s) => (s.metadata = Object.fromEntries(Object.entries(s.metadata).reverse())),
      (s) => s.tags.push({ key: pick(['t1', 't2']), value: pick(['v1', 'v2']) }),
      (s) => s.tags.pop(),
      (s) => {
        if (s.tags[0]) s.tags[0].value = pick(['v1', 'v2', 'v3']);
      },
      (s) => {
        if (s.nics[0]) s.nics[0].ip = pick(['192.168.0.9', '192.168.0.10']);
      },
      (s) => {
        if (s.volumes[0]) s.volumes[0].device = pick(['/dev/vda', '/dev/vdb']);
      },
      (s) => {
        if (s.volumes.length > 1) s.volumes.push(s.volumes.shift()!);
      },
      (s) => s.volumes.push({ ...s.volumes[0]!, volumeId: `vol-${rng.int(9)}`, bootIndex: -1 }),
      (s) => {
        if (s.volumes.length > 1) s.volumes.pop();
      },
      (s) => (s.fault = { code: pick([500, 400]), message: pick(['boom', 'bang']), created: 1_767_225_600_000 }),
      (s) => delete s.fault,
      (s) => (s.flavorId = pick([flavor.id, 'no-such-flavor'])),
      () => (flavor.name = pick(['s6.large.2', 's6.large.2-renamed'])),
      () => (flavor.vcpus = pick([2, 4])),
      () => (image.name = pick(['img-a', 'img-b'])),
      (s) => s.deleteJobs.push('job'), // not rendered
      () => undefined,
    ];
    for (let i = 0; i < 5_000; i++) {
      const s = pick(servers);
      if (rng.next() < 0.7) pick(changes)(s);
      expect(serverJson(engine, s), `step ${i}`).toBe(JSON.stringify(renderServer(engine, s)));
    }
  });

  it('ShowServer and ListServers bodies equal the serialised renderings, with the JSON content type, and a partial fault still answers its error', async () => {
    env = await setup();
    const engine = env.hcs.hypervisor as unknown as CloudEngine;
    const p = env.client.projectId;
    const { serverIds } = await env.client.createServers(serverBody(env, { count: 2 }));
    const check = async (label: string): Promise<void> => {
      const all = engine.serversOf(p);
      for (const s of all) {
        const one = await env.req('GET', `/v1/${p}/cloudservers/${s.id}`);
        expect(one.body, `${label}: ${s.id}`).toBe(JSON.stringify({ server: renderServer(engine, s) }));
        expect(one.headers['content-type']).toBe('application/json; charset=utf-8');
      }
      const list = await env.req('GET', `/v1/${p}/cloudservers/detail`);
      expect(list.body, label).toBe(JSON.stringify({ count: all.length, servers: all.map((s) => renderServer(engine, s)) }));
      const named = await env.req('GET', `/v1/${p}/cloudservers/detail?name=${encodeURIComponent(all[0]!.name)}&limit=1`);
      expect(named.status, label).toBe(200);
      const marker = await env.req('GET', `/v1/${p}/cloudservers/detail?marker=${all[0]!.id}`);
      expect(marker.body, label).toBe(JSON.stringify({ count: all.length, servers: all.slice(1).map((s) => renderServer(engine, s)) }));
    };
    await check('building');
    settle(env);
    await check('active');
    expect((await env.req('POST', `/v1/${p}/cloudservers/${serverIds[0]}/metadata`, { metadata: { role: 'worker' } })).status).toBe(200);
    await check('metadata added');
    await env.client.deleteServerMetadata(serverIds[0]!, 'role');
    await check('metadata deleted');
    env.hcs.faults.add({ service: 'ecs', operation: 'showServer', effect: { type: 'partial', status: 502, code: 'Ecs.5002', message: 'gateway' }, count: 1 });
    const show = await env.req('GET', `/v1/${p}/cloudservers/${serverIds[0]}`);
    expect({ status: show.status, body: show.body }).toEqual({ status: 502, body: '{"error":{"code":"Ecs.5002","message":"gateway"}}' });
    expect((await env.req('GET', `/v1/${p}/cloudservers/${serverIds[0]}`)).status).toBe(200);
  });
});

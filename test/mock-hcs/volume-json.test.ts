/**
 * EVS ListVolumes/ShowVolume send volume JSON text remembered per record
 * (volumeJson) instead of returning objects for fastify to serialise. The
 * text must always be JSON.stringify(renderVolume(v)) of the record as it is
 * now (records change in place), and the responses what the object replies
 * gave: same body, content type, and fault `partial` handling.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CloudEngine } from '../../mock-hcs/src/cloud.js';
import { renderVolume, volumeJson } from '../../mock-hcs/src/render.js';
import type { VolumeRec } from '../../mock-hcs/src/state.js';
import { SeededRng } from '../../src/core/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

function volume(i: number): VolumeRec {
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    projectId: 'p',
    name: `pd-${i}`,
    size: 10,
    volumeType: 'SSD',
    az: 'az1',
    status: 'available',
    metadata: { 'hcs.io/cluster': 'demo', slot: '0' },
    bootable: false,
    createdAt: 1_767_225_600_000,
    updatedAt: 1_767_225_600_000,
    fs: { files: {} },
    jobs: [],
  };
}

describe('volumeJson', () => {
  it('is JSON.stringify(renderVolume(v)) after every kind of in-place change', () => {
    const rng = new SeededRng(17);
    const vols = [volume(1), volume(2), volume(3)];
    const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
    const changes: ((v: VolumeRec) => void)[] = [
      (v) => (v.status = pick(['creating', 'available', 'attaching', 'in-use', 'detaching', 'deleting', 'error'] as const)),
      (v) => (v.name = pick(['a', 'b', `pd-${rng.int(3)}`])),
      (v) => (v.size = pick([10, 20, 100])),
      (v) => (v.volumeType = pick(['SSD', 'SAS'])),
      (v) => (v.az = pick(['az1', 'az2'])),
      (v) => (v.projectId = pick(['p', 'q'])),
      (v) => (v.bootable = !v.bootable),
      (v) => (rng.next() < 0.5 ? delete v.description : (v.description = pick(['', 'x', 'y']))),
      (v) => (rng.next() < 0.5 ? delete v.imageId : (v.imageId = pick(['img-1', 'img-2']))),
      (v) => (v.createdAt += pick([0, 1, 1000])),
      (v) => (v.updatedAt += pick([0, 1, 1000])),
      (v) => (v.metadata[pick(['a', 'slot', 'hcs.io/cluster', '1', '0'])] = pick(['x', 'y', '0'])),
      (v) => delete v.metadata[pick(['a', 'slot', 'hcs.io/cluster', '1'])],
      (v) => (v.metadata = Object.fromEntries(Object.entries(v.metadata).reverse())),
      (v) => (v.metadata = { ...v.metadata }),
      (v) => (v.attachment = { serverId: pick(['s1', 's2']), device: pick(['/dev/vdb', '/dev/vdc']), attachmentId: pick(['a1', 'a2']), attachedAt: 1_767_225_600_000 + rng.int(3) }),
      (v) => delete v.attachment,
      (v) => {
        if (v.attachment) v.attachment.device = pick(['/dev/vdb', '/dev/vdc', '/dev/vdd']);
      },
      (v) => {
        if (v.attachment) v.attachment.serverId = pick(['s1', 's2', 's3']);
      },
      (v) => {
        if (v.attachment) v.attachment.attachedAt += 1;
      },
      (v) => {
        if (v.attachment) v.attachment.attachmentId = pick(['a1', 'a2', 'a3']);
      },
      (v) => (v.pendingServerId = pick(['s1', 's2'])), // not rendered
      (v) => (v.fs.files['/x'] = String(rng.int(9))), // not rendered
      () => undefined,
    ];
    for (let i = 0; i < 20_000; i++) {
      const v = pick(vols);
      if (rng.next() < 0.7) pick(changes)(v);
      expect(volumeJson(v), `step ${i}`).toBe(JSON.stringify(renderVolume(v)));
    }
  });
});

describe('EVS routes with remembered volume JSON', () => {
  it('ListVolumes and ShowVolume bodies equal the serialised renderings of the records, through a lifecycle, with the JSON content type', async () => {
    env = await setup();
    const engine = env.hcs.hypervisor as unknown as CloudEngine; // the hypervisor view is the engine itself
    const p = env.client.projectId;
    const check = async (label: string): Promise<void> => {
      const all = engine.volumesOf(p);
      const list = await env.req('GET', `/v2/${p}/cloudvolumes/detail`);
      expect(list.status, label).toBe(200);
      expect(list.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(list.body, label).toBe(JSON.stringify({ count: all.length, volumes: all.map((v) => renderVolume(v)) }));
      const paged = await env.req('GET', `/v2/${p}/cloudvolumes/detail?limit=2&offset=1&metadata=${encodeURIComponent('{"k":"v"}')}`);
      const tagged = all.filter((v) => v.metadata.k === 'v');
      expect(paged.body, label).toBe(JSON.stringify({ count: tagged.length, volumes: tagged.slice(1, 3).map((v) => renderVolume(v)) }));
      for (const v of all) {
        const one = await env.req('GET', `/v2/${p}/cloudvolumes/${v.id}`);
        expect(one.body, `${label}: ${v.id}`).toBe(JSON.stringify({ volume: renderVolume(v) }));
        expect(one.headers['content-type']).toBe('application/json; charset=utf-8');
      }
    };
    const { serverIds } = await env.client.createServers(serverBody(env));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await env.client.createVolume({ volume: { name: `pd-${i}`, size: 10, volume_type: 'SSD', availability_zone: 'az1', metadata: { k: 'v' } } })).volume_ids[0]!);
    await check('creating');
    settle(env);
    await check('available');
    await env.client.attachVolume(serverIds[0]!, ids[0]!);
    await check('attaching');
    settle(env);
    await check('attached');
    await env.client.updateVolume(ids[1]!, { name: 'renamed', description: 'd', metadata: { k: null, extra: 'x' } });
    await check('updated');
    await env.client.detachVolume(serverIds[0]!, ids[0]!);
    await check('detaching');
    settle(env);
    await env.client.deleteVolume(ids[2]!);
    await check('deleting');
    settle(env);
    await check('deleted');
    await env.hcs.restoreState(env.hcs.dumpState());
    await check('restored');
  });

  it('a partial fault on a list or a show answers with its error, as before', async () => {
    env = await setup();
    const p = env.client.projectId;
    const id = (await env.client.createVolume({ volume: { name: 'pd', size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).volume_ids[0]!;
    env.hcs.faults.add({ service: 'evs', operation: 'listVolumes', effect: { type: 'partial', status: 502, code: 'EVS.5002', message: 'gateway' }, count: 1 });
    env.hcs.faults.add({ service: 'evs', operation: 'showVolume', effect: { type: 'partial' }, count: 1 });
    const list = await env.req('GET', `/v2/${p}/cloudvolumes/detail`);
    expect({ status: list.status, body: list.body, type: list.headers['content-type'] }).toEqual({ status: 502, body: '{"error":{"code":"EVS.5002","message":"gateway"}}', type: 'application/json; charset=utf-8' });
    const show = await env.req('GET', `/v2/${p}/cloudvolumes/${id}`);
    expect(show.status).toBe(500);
    expect((show.json as { error: { code: string } }).error.code).toBe('Ecs.0002');
    expect((await env.req('GET', `/v2/${p}/cloudvolumes/${id}`)).status).toBe(200);
  });
});

import { describe, expect, it } from 'vitest';
import { HcsApiError } from '../../src/product/cloud/index.js';
import { serverBody, setup } from './helpers.js';

describe('HCS-2: EVS update and list by server', () => {
  it('updates name, description and metadata keys; refuses unknown fields; lists volumes of one server', async () => {
    const env = await setup();
    const { volume_ids } = await env.client.createVolume({ volume: { name: 'pd', size: 10, volume_type: 'SSD', availability_zone: 'az1', metadata: { a: '1', b: '2' } } });
    const id = volume_ids[0]!;
    env.clock.advanceBy(60_000);
    const v = await env.client.updateVolume(id, { name: 'pd-renamed', description: 'kept across replacements', metadata: { b: null, c: '3' } });
    expect(v).toMatchObject({ id, name: 'pd-renamed', description: 'kept across replacements', metadata: { a: '1', c: '3' } });
    expect((await env.client.showVolume(id))?.metadata).toEqual({ a: '1', c: '3' });
    const bad = await env.req('PUT', `/v2/${env.config.projects[0]!.id}/cloudvolumes/${id}`, { volume: { size: 20 } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('volume.size cannot be updated');
    await expect(env.client.updateVolume('nope', { name: 'x' })).rejects.toBeInstanceOf(HcsApiError);

    const { serverIds } = await env.client.createServers(serverBody(env));
    env.clock.advanceBy(120_000);
    await env.client.attachVolume(serverIds[0]!, id);
    env.clock.advanceBy(60_000);
    const onServer = await env.client.listVolumes({ serverId: serverIds[0]! });
    // root + data volume created with the server, and the attached one.
    expect(onServer.map((x) => x.id)).toContain(id);
    expect(onServer).toHaveLength(3);
    expect(await env.client.listVolumes({ serverId: 'other' })).toEqual([]);
    await env.hcs.close();
  });
});

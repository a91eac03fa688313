import { afterEach, describe, expect, it } from 'vitest';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

describe('mock-hcs EVS server_id filter (volumes indexed by server)', () => {
  it('lists exactly the volumes a scan of all volumes finds, in the same order, through attach, detach, re-attach elsewhere, a state restore and server deletion', async () => {
    env = await setup();
    const { client } = env;
    const a = (await client.createServers(serverBody(env, { name: 'a' }, { ip: '192.168.10.21' }))).serverIds[0]!;
    const b = (await client.createServers(serverBody(env, { name: 'b' }, { ip: '192.168.10.22' }))).serverIds[0]!;
    const vols: string[] = [];
    for (let i = 0; i < 3; i++) vols.push((await client.createVolume({ volume: { name: `pd-${i}`, size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).volume_ids[0]!);
    settle(env);
    /** Settled (nothing attaching): the filter equals the full list's volumes attached to the server, in its order. */
    const check = async (): Promise<void> => {
      const all = await client.listVolumes();
      for (const id of [a, b]) {
        const listed = (await client.listVolumes({ serverId: id })).map((v) => v.id);
        expect(listed).toEqual(all.filter((v) => v.attachments.some((x) => x.server_id === id)).map((v) => v.id));
      }
    };
    await check();
    expect(await client.listVolumes({ serverId: a })).toHaveLength(2); // root + data volume of the server
    await client.attachVolume(a, vols[2]!);
    await client.attachVolume(a, vols[0]!);
    // Attaching volumes count (pendingServerId).
    expect((await client.listVolumes({ serverId: a })).map((v) => v.id)).toEqual(expect.arrayContaining([vols[0], vols[2]]));
    settle(env);
    await check();
    const onA = (await client.listVolumes({ serverId: a })).map((v) => v.id);
    expect(onA.slice(-2)).toEqual([vols[0], vols[2]]); // creation order, not attach order
    await client.detachVolume(a, vols[0]!);
    settle(env);
    expect((await client.listVolumes({ serverId: a })).map((v) => v.id)).not.toContain(vols[0]);
    await client.attachVolume(b, vols[0]!);
    settle(env);
    expect((await client.listVolumes({ serverId: b })).map((v) => v.id)).toContain(vols[0]);
    expect((await client.listVolumes({ serverId: a })).map((v) => v.id)).not.toContain(vols[0]);
    await check();
    // A restored document is reindexed.
    await env.hcs.restoreState(env.hcs.dumpState());
    await check();
    expect((await client.listVolumes({ serverId: b })).map((v) => v.id)).toContain(vols[0]);
    await client.deleteServers([a]);
    settle(env);
    expect(await client.listVolumes({ serverId: a })).toEqual([]);
    expect((await client.listVolumes({ serverId: b })).map((v) => v.id)).toContain(vols[0]);
  });
});

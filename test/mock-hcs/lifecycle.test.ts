import { afterEach, describe, expect, it } from 'vitest';
import { HcsApiError } from '../../src/product/cloud/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

describe('mock-hcs server and volume lifecycle', () => {
  it('create -> job -> ACTIVE -> attach -> detach -> delete keeps the persistent disk (DISK-9)', async () => {
    env = await setup();
    const { client, hcs, clock } = env;
    const serverChanges: string[] = [];
    hcs.onServerChange((s) => serverChanges.push(`${s.name}:${s.status}`));

    const created = await client.createServers(serverBody(env, { data_volumes: [{ volumetype: 'SSD', size: 50, delete_on_termination: true }] }, { ip: '192.168.10.20' }));
    expect(created.serverIds).toHaveLength(1);
    const id = created.serverIds[0]!;
    let job = await client.showJob(created.job_id);
    expect(job.job_type).toBe('createServer');
    expect(['INIT', 'RUNNING']).toContain(job.status);
    expect(job.entities.sub_jobs?.[0]?.entities.server_id).toBe(id);

    let s = await client.showServer(id);
    expect(s?.status).toBe('BUILD');
    expect(s?.['OS-EXT-STS:vm_state']).toBe('building');
    const vpcId = env.config.vpcs[0]!.id;
    expect(s?.addresses[vpcId]?.[0]?.addr).toBe('192.168.10.20');
    expect(s?.addresses[vpcId]?.[0]?.['OS-EXT-IPS:type']).toBe('fixed');
    expect(s?.['os-extended-volumes:volumes_attached']).toHaveLength(2);
    expect(s?.flavor).toMatchObject({ id: 's6.large.2', vcpus: '2', ram: '4096' });
    expect(s?.tags).toEqual(['cluster=demo']);
    expect(s?.created).toBe('2026-01-01T00:00:00Z');
    expect(s).not.toHaveProperty('user_data');

    clock.advanceBy(10_000);
    job = await client.showJob(created.job_id);
    expect(job.status).toBe('RUNNING');
    settle(env);
    job = await client.showJob(created.job_id);
    expect(job.status).toBe('SUCCESS');
    expect(job.end_time).toMatch(/^2026-01-01T00:0\d:\d\d\.\d{3}Z$/);
    s = await client.showServer(id);
    expect(s?.status).toBe('ACTIVE');
    expect(s?.['OS-EXT-AZ:availability_zone']).toBe('az1');
    const guest = hcs.hypervisor.server(id)!;
    expect(guest.userData).toBe('#cloud-config\nhostname: worker-0\n');
    // Decoded when read, and still a plain enumerable field of the view (copies and JSON carry it, in place).
    expect(Object.keys(guest)).toEqual(['id', 'name', 'status', 'projectId', 'userData', 'metadata', 'ips', 'volumes', 'availabilityZone', 'flavorId', 'imageId']);
    expect({ ...guest }.userData).toBe(guest.userData);
    expect((JSON.parse(JSON.stringify(guest)) as { userData: string }).userData).toBe(guest.userData);
    expect(guest.ips).toEqual(['192.168.10.20']);
    const rootId = guest.volumes.find((v) => v.bootIndex === 0)!.volumeId;
    const dataId = guest.volumes.find((v) => v.bootIndex === undefined)!.volumeId;
    expect((await client.showVolume(rootId))?.status).toBe('in-use');

    // A persistent disk, created separately (DISK-3).
    const cv = await client.createVolume({ volume: { name: 'pd-worker-0-0', size: 20, volume_type: 'SSD', availability_zone: 'az1', metadata: { hostname: 'worker-0', slot: '0' } } });
    const pd = cv.volume_ids[0]!;
    expect((await client.showVolume(pd))?.status).toBe('creating');
    settle(env);
    expect((await client.showJob(cv.job_id)).status).toBe('SUCCESS');
    expect((await client.showVolume(pd))?.status).toBe('available');
    const found = await client.listVolumes({ metadata: { hostname: 'worker-0', slot: '0' } });
    expect(found.map((v) => v.id)).toEqual([pd]);

    const att = await client.attachVolume(id, pd);
    expect((await client.showVolume(pd))?.status).toBe('attaching');
    settle(env);
    expect((await client.showJob(att.job_id)).status).toBe('SUCCESS');
    let vol = await client.showVolume(pd);
    expect(vol?.status).toBe('in-use');
    expect(vol?.attachments[0]).toMatchObject({ server_id: id, device: '/dev/vdc', volume_id: pd });
    expect((await client.showServer(id))?.['os-extended-volumes:volumes_attached'].map((v) => v.id)).toContain(pd);

    // The guest formats it and writes data (DISK-8).
    hcs.hypervisor.format(pd, 'ext4', 'pd0');
    hcs.hypervisor.writeFile(pd, '/data/state.txt', 'hello');

    const det = await client.detachVolume(id, pd);
    expect((await client.showVolume(pd))?.status).toBe('detaching');
    settle(env);
    expect((await client.showJob(det.job_id)).status).toBe('SUCCESS');
    expect((await client.showVolume(pd))?.status).toBe('available');

    await client.attachVolume(id, pd, '/dev/vdd');
    settle(env);
    expect((await client.showVolume(pd))?.attachments[0]?.device).toBe('/dev/vdd');

    // delete_volume=false (the default, ecs_02_0103): the data volume goes only because of its own delete_on_termination.
    const del = await client.deleteServers([id]);
    expect((await client.showServer(id))?.['OS-EXT-STS:task_state']).toBe('deleting');
    settle(env);
    expect((await client.showJob(del.job_id)).status).toBe('SUCCESS');
    expect(await client.showServer(id)).toBeUndefined();
    expect(await client.showVolume(rootId)).toBeUndefined();
    expect(await client.showVolume(dataId)).toBeUndefined();
    vol = await client.showVolume(pd);
    expect(vol?.status).toBe('available');
    expect(vol?.attachments).toEqual([]);
    expect(hcs.hypervisor.readFile(pd, 'data/state.txt')).toBe('hello');
    expect(serverChanges).toEqual(['worker-0:BUILD', 'worker-0:ACTIVE', 'worker-0:DELETED']);

    // The IP is free again.
    const again = await client.createServers(serverBody(env, { name: 'worker-0b' }, { ip: '192.168.10.20' }));
    expect(again.serverIds).toHaveLength(1);

    const types = env.events.all().map((e) => e.type);
    for (const t of ['server.created', 'server.active', 'volume.created', 'volume.available', 'volume.attached', 'volume.detached', 'server.deleted', 'volume.deleted', 'job.succeeded']) {
      expect(types).toContain(t);
    }
    expect(env.events.all().every((e) => e.source === 'cloud')).toBe(true);
  });

  it('refuses multi-attach and deleting an in-use volume (DISK-9)', async () => {
    env = await setup();
    const { client } = env;
    const a = (await client.createServers(serverBody(env, { name: 'a' }))).serverIds[0]!;
    const b = (await client.createServers(serverBody(env, { name: 'b' }))).serverIds[0]!;
    const pd = (await client.createVolume({ volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).volume_ids[0]!;
    settle(env);
    await client.attachVolume(a, pd);
    const e1 = await client.attachVolume(b, pd).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(HcsApiError);
    expect((e1 as HcsApiError).code).toBe('Ecs.0057');
    expect((e1 as HcsApiError).status).toBe(400);
    settle(env);
    const e2 = await client.attachVolume(b, pd).catch((e: unknown) => e);
    expect((e2 as HcsApiError).code).toBe('Ecs.0057');
    const e3 = await client.deleteVolume(pd).catch((e: unknown) => e);
    expect((e3 as HcsApiError).code).toBe('EVS.1046');
    expect((await client.showVolume(pd))?.attachments.map((x) => x.server_id)).toEqual([a]);
    const rejected = env.events.all().filter((e) => e.type === 'api.rejected');
    expect(rejected.some((e) => e.rules?.includes('DISK-9'))).toBe(true);

    // A volume in another AZ cannot be attached.
    const far = (await client.createVolume({ volume: { size: 10, volume_type: 'SSD', availability_zone: 'az2' } })).volume_ids[0]!;
    settle(env);
    const e4 = await client.attachVolume(b, far).catch((e: unknown) => e);
    // No ECS code documents an AZ mismatch (Ecs.0062 is a QingTian flavor): Ecs.0005 "Invalid parameters" (ecs_07_0002).
    expect((e4 as HcsApiError).code).toBe('Ecs.0005');
    expect((e4 as HcsApiError).message).toContain('availability zone');
    // Deleting an available volume works.
    await client.deleteVolume(far);
    expect((await client.showVolume(far))?.status).toBe('deleting');
    settle(env);
    expect(await client.showVolume(far)).toBeUndefined();
  });

  it('delete_volume=true deletes attached data volumes too, and says so', async () => {
    env = await setup();
    const { client } = env;
    const a = (await client.createServers(serverBody(env))).serverIds[0]!;
    const pd = (await client.createVolume({ volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).volume_ids[0]!;
    settle(env);
    await client.attachVolume(a, pd);
    settle(env);
    await client.deleteServers([a], { deleteVolume: true });
    settle(env);
    expect(await client.showVolume(pd)).toBeUndefined();
    const ev = env.events.all().find((e) => e.type === 'volume.deleted' && (e.data as { volumeId: string }).volumeId === pd);
    expect(ev?.message).toContain('delete_volume=true');
    expect(ev?.rules).toContain('DISK-9');
  });

  it('deleting a server during BUILD fails the create job and frees everything', async () => {
    env = await setup();
    const { client } = env;
    const c = await client.createServers(serverBody(env, {}, { ip: '192.168.10.30' }));
    const id = c.serverIds[0]!;
    env.clock.advanceBy(1000);
    await client.deleteServers([id]);
    settle(env);
    const job = await client.showJob(c.job_id);
    expect(job.status).toBe('FAIL');
    expect(job.error_code).toBeTruthy();
    expect(job.fail_reason).toContain('deleted');
    expect(await client.showServer(id)).toBeUndefined();
    // The system disk goes; the data disk is kept (delete_volume defaults to false, ecs_02_0103).
    expect(env.hcs.hypervisor.listVolumes().map((v) => v.status)).toEqual(['available']);
  });

  it('honours X-Client-Token idempotency', async () => {
    env = await setup();
    const { client } = env;
    const r1 = await client.createServers(serverBody(env), 'token-1');
    const r2 = await client.createServers(serverBody(env), 'token-1');
    expect(r2).toEqual(r1);
    expect(env.hcs.hypervisor.listServers()).toHaveLength(1);
    const r3 = await client.createServers(serverBody(env, { name: 'worker-1' }), 'token-2');
    expect(r3.serverIds[0]).not.toBe(r1.serverIds[0]);
    expect(env.hcs.hypervisor.listServers()).toHaveLength(2);
  });

  it('creates count servers with suffixed names and lists with fuzzy names and pages', async () => {
    env = await setup();
    const { client } = env;
    const r = await client.createServers(serverBody(env, { name: 'md-a', count: 3 }));
    expect(r.serverIds).toHaveLength(3);
    await client.createServers(serverBody(env, { name: 'mdxa' }));
    const names = (await client.listServers()).map((s) => s.name).sort();
    expect(names).toEqual(['md-a-0001', 'md-a-0002', 'md-a-0003', 'mdxa']);
    // "." matches any character; the match is on a substring.
    expect((await client.listServers({ name: 'md.a' })).map((s) => s.name).sort()).toEqual(['md-a-0001', 'md-a-0002', 'md-a-0003', 'mdxa']);
    expect((await client.listServers({ name: 'a-0002' })).map((s) => s.name)).toEqual(['md-a-0002']);
    const page2 = await env.req('GET', `/v1/${client.projectId}/cloudservers/detail?limit=3&offset=2`);
    expect(page2.json).toMatchObject({ count: 4 });
    expect((page2.json as { servers: unknown[] }).servers).toHaveLength(1);
    expect(await client.listServers({ status: 'ACTIVE' })).toEqual([]);
    settle(env);
    expect(await client.listServers({ status: 'ACTIVE', tags: 'cluster=demo' })).toHaveLength(4);
    expect(await client.listServers({ tags: 'cluster=other' })).toHaveLength(0);
  });

  it('is deterministic: same seed and calls give the same ids and event log', async () => {
    const run = async () => {
      const e = await setup({ seed: 7 });
      await e.client.createServers(serverBody(e));
      await e.client.createVolume({ volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
      settle(e);
      const log = e.events.toJsonLines();
      await e.hcs.close();
      return log;
    };
    const a = await run();
    const b = await run();
    expect(a).toBe(b);
    env = await setup();
  });
});

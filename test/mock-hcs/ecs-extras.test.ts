/**
 * ECS extras: os-stop / os-start / reboot through jobs on the injected clock
 * (HCS-1: SHUTOFF), the ERROR state's `fault`, block devices, and the sell
 * status of flavors per AZ (TPL-2).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

type ErrJson = { error: { code: string; message: string } };

async function activeServer(env: Env, name = 'worker-0'): Promise<string> {
  const id = (await env.client.createServers(serverBody(env, { name }))).serverIds[0]!;
  settle(env);
  return id;
}

describe('mock-hcs server actions', () => {
  it('stops, starts and reboots through jobs on the injected clock', async () => {
    env = await setup();
    const id = await activeServer(env);
    const changes: string[] = [];
    env.hcs.onServerChange((s) => changes.push(s.status));
    const stop = await env.client.stopServers([id]);
    let s = await env.client.showServer(id);
    expect([s!.status, s!['OS-EXT-STS:task_state']]).toEqual(['ACTIVE', 'powering-off']);
    expect((await env.client.showJob(stop.job_id)).job_type).toBe('batchStopServer');
    env.clock.advanceBy(5_000);
    expect((await env.client.showJob(stop.job_id)).status).toBe('RUNNING');
    settle(env, 20_000);
    s = await env.client.showServer(id);
    expect([s!.status, s!['OS-EXT-STS:vm_state'], s!['OS-EXT-STS:power_state'], s!['OS-EXT-STS:task_state']]).toEqual(['SHUTOFF', 'stopped', 4, null]);
    const job = await env.client.showJob(stop.job_id);
    expect(job.status).toBe('SUCCESS');
    expect(job.entities.sub_jobs?.[0]).toMatchObject({ job_type: 'stopServer', status: 'SUCCESS', entities: { server_id: id } });
    expect((await env.client.listPorts({ deviceId: id }))[0]!.status).toBe('DOWN');

    // Wrong state: 400 Ecs.0100 "The ECS status does not meet requirements" (ECS error codes, ecs_07_0002), nothing changes.
    const p = env.client.projectId;
    const again = await env.req('POST', `/v1/${p}/cloudservers/action`, { 'os-stop': { servers: [{ id }] } });
    expect([again.status, (again.json as ErrJson).error.code]).toEqual([400, 'Ecs.0100']);
    const reboot = await env.req('POST', `/v1/${p}/cloudservers/action`, { reboot: { servers: [{ id }], type: 'SOFT' } });
    expect(reboot.status).toBe(400);

    const start = await env.client.startServers([id]);
    expect((await env.client.showServer(id))!['OS-EXT-STS:task_state']).toBe('powering-on');
    settle(env, 20_000);
    expect((await env.client.showServer(id))!.status).toBe('ACTIVE');
    expect((await env.client.showJob(start.job_id)).status).toBe('SUCCESS');

    const hard = await env.client.rebootServers([id], 'HARD');
    s = await env.client.showServer(id);
    expect([s!.status, s!['OS-EXT-STS:task_state']]).toEqual(['HARD_REBOOT', 'rebooting_hard']);
    settle(env, 30_000);
    expect((await env.client.showServer(id))!.status).toBe('ACTIVE');
    expect((await env.client.showJob(hard.job_id)).job_type).toBe('batchRebootServer');
    expect(changes).toEqual(['SHUTOFF', 'ACTIVE', 'HARD_REBOOT', 'ACTIVE']);
    expect(env.events.all().map((e) => e.type)).toEqual(expect.arrayContaining(['server.stop-requested', 'server.stopped', 'server.started', 'server.rebooted']));
  });

  it('validates action bodies and is all or nothing', async () => {
    env = await setup();
    const id = await activeServer(env);
    const p = env.client.projectId;
    const path = `/v1/${p}/cloudservers/action`;
    const bad = [
      {},
      { 'os-stop': { servers: [{ id }] }, 'os-start': { servers: [{ id }] } },
      { 'os-stop': { servers: [] } },
      { 'os-stop': { servers: [{ id }], type: 'GENTLE' } },
      { reboot: { servers: [{ id }] } },
      { 'os-start': { servers: [{ id }], type: 'SOFT' } },
      { 'os-stop': { servers: [{ id }, { id }] } },
      { 'os-pause': { servers: [{ id }] } },
    ];
    for (const b of bad) {
      const r = await env.req('POST', path, b);
      expect([JSON.stringify(b), r.status, (r.json as ErrJson).error.code]).toEqual([JSON.stringify(b), 400, 'Ecs.0005']);
    }
    const missing = await env.req('POST', path, { 'os-stop': { servers: [{ id }, { id: '00000000-0000-4000-8000-000000000000' }] } });
    expect([missing.status, (missing.json as ErrJson).error.code]).toEqual([404, 'Ecs.0114']);
    expect((await env.client.showServer(id))!['OS-EXT-STS:task_state']).toBeNull();
    // Another project's server is not found.
    const other = await env.other.stopServers([id]).catch((e: unknown) => e);
    expect(other).toMatchObject({ status: 404, code: 'Ecs.0114' });
  });

  it('deleting a server during a stop fails the stop sub-job; faults apply to actions', async () => {
    env = await setup();
    const [a, b] = [await activeServer(env, 'a'), await activeServer(env, 'b')];
    const stop = await env.client.stopServers([a]);
    await env.client.deleteServers([a]);
    settle(env);
    const job = await env.client.showJob(stop.job_id);
    expect(job.status).toBe('FAIL');
    expect(job.error_code).toBe('Ecs.0100');
    env.hcs.faults.add({ service: 'ecs', operation: 'batchRebootServers', effect: { type: 'jobFail', errorCode: 'Ecs.0002', failReason: 'hypervisor lost' } });
    const reboot = await env.client.rebootServers([b]);
    settle(env);
    const s = await env.client.showServer(b);
    expect(s!.status).toBe('ERROR');
    expect(s!.fault).toMatchObject({ code: 500, message: 'hypervisor lost', details: 'Ecs.0002' });
    expect((await env.client.showJob(reboot.job_id)).status).toBe('FAIL');
    env.hcs.faults.clear();
    const c = await activeServer(env, 'c');
    env.hcs.faults.add({ service: 'ecs', operation: 'batchStopServers', effect: { type: 'stuck' } });
    await env.client.stopServers([c]);
    settle(env);
    expect((await env.client.showServer(c))!['OS-EXT-STS:task_state']).toBe('powering-off');
    expect(env.hcs.faults.releaseStuck(c)).toBe(1);
    settle(env);
    expect((await env.client.showServer(c))!.status).toBe('SHUTOFF');
  });

  it('a failed build leaves the server ERROR with a fault {code, message, created}', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'jobFail', errorCode: 'Ecs.1000', failReason: 'no valid host was found' } });
    const id = (await env.client.createServers(serverBody(env))).serverIds[0]!;
    expect((await env.client.showServer(id))!.fault).toBeUndefined();
    env.clock.advanceBy(120_000);
    const s = await env.client.showServer(id);
    expect(s!.status).toBe('ERROR');
    expect(s!.fault).toEqual({ code: 500, message: 'no valid host was found', details: 'Ecs.1000', created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
  });
});

describe('mock-hcs block devices', () => {
  it('lists and shows the disks attached to a server', async () => {
    env = await setup();
    const id = await activeServer(env);
    const vm = env.hcs.hypervisor.server(id)!;
    const list = await env.client.listServerBlockDevices(id);
    expect(list).toEqual([
      { id: vm.volumes[0]!.volumeId, volumeId: vm.volumes[0]!.volumeId, serverId: id, device: '/dev/vda', size: 40, bootIndex: 0, bus: 'virtio', pciAddress: '0000:02:01.0' },
      { id: vm.volumes[1]!.volumeId, volumeId: vm.volumes[1]!.volumeId, serverId: id, device: '/dev/vdb', size: 50, bootIndex: -1, bus: 'virtio', pciAddress: '0000:02:02.0' },
    ]);
    expect((await env.client.showServerBlockDevice(id, vm.volumes[1]!.volumeId))?.device).toBe('/dev/vdb');
    const p = env.client.projectId;
    const raw = await env.req('GET', `/v1/${p}/cloudservers/${id}/block_device`);
    expect((raw.json as { attachableQuantity: { free_blk: number } }).attachableQuantity.free_blk).toBe(22);
    const notAttached = await env.req('GET', `/v1/${p}/cloudservers/${id}/block_device/00000000-0000-4000-8000-000000000000`);
    // Ecs.0111 "The disk is not in the attachment list" (ecs_07_0002); 404 as a read of a missing sub-resource.
    expect([notAttached.status, (notAttached.json as ErrJson).error.code]).toEqual([404, 'Ecs.0111']);
    const noServer = await env.req('GET', `/v1/${p}/cloudservers/00000000-0000-4000-8000-000000000000/block_device`);
    expect([noServer.status, (noServer.json as ErrJson).error.code]).toEqual([404, 'Ecs.0114']);
    expect(await env.client.listServerBlockDevices('00000000-0000-4000-8000-000000000000')).toBeUndefined();
  });
});

describe('mock-hcs flavor sell status (cond:operation:az)', () => {
  it('reflects AZ offers, configured status, capacity and capacity faults', async () => {
    const config = defaultCloudConfig();
    config.capacity = [{ availabilityZone: 'az1', flavor: 's6.large.2', max: 1 }];
    config.flavors.find((f) => f.id === 's6.2xlarge.2')!.azStatus = { az2: 'obt' };
    env = await setup({ config });
    const spec = async (id: string, az?: string) => (await env.client.listFlavors(az)).find((f) => f.id === id)?.os_extra_specs;
    expect(await spec('s6.large.2')).toMatchObject({ 'cond:operation:status': 'normal', 'cond:operation:az': 'az1(normal),az2(normal)' });
    expect(await spec('c6.4xlarge.4')).toMatchObject({ 'cond:operation:az': 'az1(normal),az2(abandon)' });
    expect(await spec('c6.4xlarge.4', 'az2')).toBeUndefined();
    expect(await spec('s6.2xlarge.2', 'az2')).toMatchObject({ 'cond:operation:status': 'obt', 'cond:operation:az': 'az1(normal),az2(obt)' });
    await env.client.createServers(serverBody(env));
    expect(await spec('s6.large.2', 'az1')).toMatchObject({ 'cond:operation:status': 'sellout', 'cond:operation:az': 'az1(sellout),az2(normal)' });
    expect(await spec('s6.large.2')).toMatchObject({ 'cond:operation:status': 'normal' });
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'capacity', flavor: 's6.xlarge.2', az: 'az2' } });
    expect(await spec('s6.xlarge.2', 'az2')).toMatchObject({ 'cond:operation:status': 'sellout', 'cond:operation:az': 'az1(normal),az2(sellout)' });
    // A configured sellout refuses creation like exhausted capacity.
    config.flavors.find((f) => f.id === 's6.2xlarge.2')!.azStatus = { az2: 'sellout' };
    const r = await env.req('POST', `/v1.1/${env.client.projectId}/cloudservers`, serverBody(env, { flavorRef: 's6.2xlarge.2', availability_zone: 'az2' }));
    expect([r.status, (r.json as ErrJson).error.code]).toEqual([400, 'Ecs.0319']);
    // flavor_id filter and marker paging.
    const p = env.client.projectId;
    const one = await env.req('GET', `/v1/${p}/cloudservers/flavors?flavor_id=s6.xlarge.2`);
    expect((one.json as { flavors: { id: string }[] }).flavors.map((f) => f.id)).toEqual(['s6.xlarge.2']);
    const after = await env.req('GET', `/v1/${p}/cloudservers/flavors?marker=s6.xlarge.2&limit=1`);
    expect((after.json as { flavors: { id: string }[] }).flavors.map((f) => f.id)).toEqual(['s6.2xlarge.2']);
  });
});

/**
 * EVS ResizeVolume (os-extend, "Expanding Capacity of an EVS Disk", evs_04_2004), through the
 * provider's HcsClient: the disk is `extending` while its extendVolume job runs ("Querying Task
 * Status", evs_04_0054), then has the new size; an in-use disk grows while its server is ACTIVE or
 * SHUTOFF; bad sizes and states are refused naming the field, and change nothing; job faults (HCS-6)
 * apply to it.
 */
import { describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { refused, serverBody, setup, type Env } from './helpers.js';

async function volume(env: Env, size = 10): Promise<string> {
  const { volume_ids } = await env.client.createVolume({ volume: { name: 'pd', size, volume_type: 'SSD', availability_zone: 'az1' } });
  env.clock.advanceBy(60_000);
  return volume_ids[0]!;
}

describe('HCS-2: EVS ResizeVolume (os-extend)', () => {
  it('an available disk: extending while the extendVolume job runs, then available with the new size', async () => {
    const env = await setup();
    const id = await volume(env);
    const { job_id } = await env.client.resizeVolume(id, 20);
    expect(await env.client.showVolume(id)).toMatchObject({ status: 'extending', size: 10 });
    expect(await env.client.showJob(job_id)).toMatchObject({ job_type: 'extendVolume', entities: { volume_id: id, size: 20 } });
    env.clock.advanceBy(60_000);
    expect(await env.client.showVolume(id)).toMatchObject({ status: 'available', size: 20 });
    expect(await env.client.showJob(job_id)).toMatchObject({ status: 'SUCCESS' });
    expect(env.events.all().some((e) => e.type === 'volume.extended' && (e.data as { size?: number }).size === 20)).toBe(true);
    await env.hcs.close();
  });

  it('an in-use disk grows on its ACTIVE server and stays attached; refused while the server is not ACTIVE or SHUTOFF', async () => {
    const env = await setup();
    const id = await volume(env);
    const { serverIds } = await env.client.createServers(serverBody(env));
    const server = serverIds[0]!;
    env.clock.advanceBy(120_000);
    await env.client.attachVolume(server, id);
    env.clock.advanceBy(60_000);
    expect((await env.client.showVolume(id))?.status).toBe('in-use');
    // While the server reboots: not now.
    await env.client.rebootServers([server]);
    const rebooting = await refused(env.client.resizeVolume(id, 30));
    expect(rebooting.status).toBe(400);
    expect(rebooting.message).toMatch(/which is REBOOT: an in-use disk can be expanded while its server is ACTIVE or SHUTOFF/);
    env.clock.advanceBy(120_000);
    const { job_id } = await env.client.resizeVolume(id, 30);
    env.clock.advanceBy(60_000);
    expect(await env.client.showVolume(id)).toMatchObject({ status: 'in-use', size: 30, attachments: [{ server_id: server }] });
    expect((await env.client.showJob(job_id)).status).toBe('SUCCESS');
    await env.hcs.close();
  });

  it('refuses a size not above the current one, over the maximum, a missing os-extend, a disk in transition or not found — and changes nothing', async () => {
    const env = await setup();
    const id = await volume(env, 40);
    const pid = env.config.projects[0]!.id;
    const before = JSON.stringify(env.hcs.dumpState().data);
    for (const [size, what] of [
      [40, /os-extend\.new_size: must be greater than the disk's size \(40 GB\)/],
      [10, /os-extend\.new_size: must be greater than/],
      [32769, /os-extend\.new_size/],
    ] as const) {
      const e = await refused(env.client.resizeVolume(id, size));
      expect(e.status).toBe(400);
      expect(e.code).toBe('EVS.5400');
      expect(e.message).toMatch(what);
    }
    const noBody = await env.req('POST', `/v2.1/${pid}/cloudvolumes/${id}/action`, { 'os-migrate': {} });
    expect(noBody.status).toBe(400);
    expect(JSON.stringify(noBody.json)).toContain('os-extend');
    expect(JSON.stringify(env.hcs.dumpState().data)).toBe(before);
    expect((await refused(env.client.resizeVolume('nope', 50))).status).toBe(404);

    await env.client.resizeVolume(id, 50);
    const again = await refused(env.client.resizeVolume(id, 60));
    expect(again.message).toMatch(/is extending: only an available or in-use disk can be expanded/);
    // Not deleted half-way either.
    expect((await refused(env.client.deleteVolume(id))).message).toMatch(/cannot be deleted while extending/);
    await env.hcs.close();
  });

  it('the new gigabytes count against the quota (EVS.1042)', async () => {
    const config = defaultCloudConfig();
    config.projects[0]!.quotas = { gigabytes: 100 };
    const env = await setup({ config });
    const id = await volume(env, 10);
    const e = await refused(env.client.resizeVolume(id, 200));
    expect(e.code).toBe('EVS.1042');
    await env.hcs.close();
  });

  it('faults: jobFail leaves the disk at its size and available, the job FAIL; stuck keeps it extending until released', async () => {
    const env = await setup();
    const id = await volume(env);
    env.hcs.faults.add({ service: 'evs', operation: 'resizeVolume', effect: { type: 'jobFail', errorCode: 'EVS.2024', failReason: 'backend full' }, count: 1 });
    const failed = await env.client.resizeVolume(id, 20);
    env.clock.advanceBy(60_000);
    expect(await env.client.showVolume(id)).toMatchObject({ status: 'available', size: 10 });
    expect(await env.client.showJob(failed.job_id)).toMatchObject({ status: 'FAIL', error_code: 'EVS.2024', fail_reason: 'backend full' });

    env.hcs.faults.add({ service: 'evs', operation: 'resizeVolume', effect: { type: 'stuck' }, count: 1 });
    const stuck = await env.client.resizeVolume(id, 25);
    env.clock.advanceBy(600_000);
    expect((await env.client.showVolume(id))?.status).toBe('extending');
    expect(env.hcs.faults.releaseStuck(id)).toBe(1);
    env.clock.advanceBy(1);
    expect(await env.client.showVolume(id)).toMatchObject({ status: 'available', size: 25 });
    expect((await env.client.showJob(stuck.job_id)).status).toBe('SUCCESS');
    await env.hcs.close();
  });
});

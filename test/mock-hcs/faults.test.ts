import { afterEach, describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { HcsApiError } from '../../src/product/cloud/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

type ErrJson = { error: { code: string; message: string } };

async function activeServer(e: Env, over: Record<string, unknown> = {}): Promise<string> {
  const id = (await e.client.createServers(serverBody(e, over))).serverIds[0]!;
  settle(e);
  return id;
}

function fired(e: Env): { ruleId: string; effect: string }[] {
  return e.events
    .all()
    .filter((x) => x.source === 'fault' && x.type === 'fault.fired')
    .map((x) => ({ ruleId: x.data!.ruleId as string, effect: x.data!.effect as string }));
}

describe('mock-hcs fault injection (HCS-6)', () => {
  it('error: refuses matching calls with the given status/code, honours count and records the firing', async () => {
    env = await setup();
    const id = await activeServer(env);
    const other = await activeServer(env, { name: 'worker-1' });
    const rule = env.hcs.faults.add({ service: 'ecs', operation: 'showServer', match: { id }, effect: { type: 'error', status: 503, code: 'Ecs.0002', message: 'try later' }, count: 2 });
    expect(rule).toBe('fault-1');
    const p = env.client.projectId;
    for (let i = 0; i < 2; i++) {
      const r = await env.req('GET', `/v1/${p}/cloudservers/${id}`);
      expect(r.status).toBe(503);
      expect(r.json).toEqual({ error: { code: 'Ecs.0002', message: 'try later' } });
    }
    expect((await env.req('GET', `/v1/${p}/cloudservers/${id}`)).status).toBe(200);
    expect((await env.req('GET', `/v1/${p}/cloudservers/${other}`)).status).toBe(200);
    expect(fired(env)).toEqual([
      { ruleId: 'fault-1', effect: 'error' },
      { ruleId: 'fault-1', effect: 'error' },
    ]);
    const ev = env.events.all().find((x) => x.type === 'fault.fired')!;
    expect(ev.rules).toContain('HCS-6');
    expect(env.hcs.faults.list()[0]).toMatchObject({ id: 'fault-1', seen: 3, fired: 2 });
  });

  it('after, atMs, name and tag matching', async () => {
    env = await setup();
    const p = env.client.projectId;
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', match: { name: 'md-b' }, effect: { type: 'error', status: 500, code: 'Ecs.0002' }, after: 1 });
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', match: { tag: 'pool=gpu' }, effect: { type: 'error', status: 400, code: 'Ecs.0005' }, atMs: env.clock.now() + 1000 });
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'md-b-0' }))).status).toBe(200);
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'md-b-1' }))).status).toBe(500);
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'md-a-0' }))).status).toBe(200);
    const gpu = { name: 'g-0', metadata: { pool: 'gpu' } };
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, gpu))).status).toBe(200);
    env.clock.advanceBy(1000);
    const r = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { ...gpu, name: 'g-1' }));
    expect(r.status).toBe(400);
    expect((r.json as ErrJson).error.code).toBe('Ecs.0005');
    expect(env.hcs.hypervisor.listServers().map((s) => s.name).sort()).toEqual(['g-0', 'md-a-0', 'md-b-0']);
  });

  it('probability is drawn from the seeded Rng: same seed, same outcomes', async () => {
    const outcomes: number[][] = [];
    for (let run = 0; run < 2; run++) {
      env = await setup({ seed: 7 });
      env.hcs.faults.add({ service: 'ims', operation: 'listImages', effect: { type: 'error', status: 500, code: 'IMG.0002' }, probability: 0.3 });
      const got: number[] = [];
      for (let i = 0; i < 60; i++) got.push((await env.req('GET', '/v2/cloudimages')).status);
      outcomes.push(got);
      await env.hcs.close();
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    const failures = outcomes[0]!.filter((s) => s === 500).length;
    expect(failures).toBeGreaterThan(5);
    expect(failures).toBeLessThan(35);
  });

  it('jobFail: the create job ends FAIL with error_code/fail_reason and the server is ERROR', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'jobFail', errorCode: 'Ecs.0319', failReason: 'no host available' } });
    const c = await env.client.createServers(serverBody(env));
    settle(env);
    const job = await env.client.showJob(c.job_id);
    expect(job.status).toBe('FAIL');
    expect(job.error_code).toBe('Ecs.0319');
    expect(job.fail_reason).toBe('no host available');
    expect(job.entities.sub_jobs?.[0]).toMatchObject({ status: 'FAIL', error_code: 'Ecs.0319' });
    expect((await env.client.showServer(c.serverIds[0]!))?.status).toBe('ERROR');
    // The failed server can be deleted and frees its resources.
    await env.client.deleteServers(c.serverIds);
    settle(env);
    expect(env.hcs.hypervisor.listServers()).toEqual([]);
  });

  it('jobFail on attach and detach leaves the volume in its previous state', async () => {
    env = await setup();
    const id = await activeServer(env);
    const vol = (await env.client.createVolume({ volume: { name: 'pd', size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).volume_ids[0]!;
    settle(env);
    const rule = env.hcs.faults.add({ service: 'ecs', operation: 'attachVolume', match: { id: vol }, effect: { type: 'jobFail' }, count: 1 });
    const j1 = await env.client.attachVolume(id, vol);
    settle(env);
    expect((await env.client.showJob(j1.job_id)).status).toBe('FAIL');
    expect((await env.client.showVolume(vol))?.status).toBe('available');
    env.hcs.faults.remove(rule);
    await env.client.attachVolume(id, vol);
    settle(env);
    expect((await env.client.showVolume(vol))?.status).toBe('in-use');
    env.hcs.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'jobFail', errorCode: 'Ecs.0002' } });
    const j2 = await env.client.detachVolume(id, vol);
    settle(env);
    const job = await env.client.showJob(j2.job_id);
    expect([job.status, job.error_code]).toEqual(['FAIL', 'Ecs.0002']);
    expect((await env.client.showVolume(vol))?.status).toBe('in-use');
  });

  it('stuck: a detach stays detaching (also across a long wait) until released', async () => {
    env = await setup();
    const id = await activeServer(env);
    const dataVol = env.hcs.hypervisor.server(id)!.volumes.find((v) => v.bootIndex === undefined)!.volumeId;
    env.hcs.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'stuck' } });
    const j = await env.client.detachVolume(id, dataVol);
    settle(env, 3_600_000);
    expect((await env.client.showVolume(dataVol))?.status).toBe('detaching');
    expect((await env.client.showJob(j.job_id)).status).toBe('RUNNING');
    expect(env.hcs.faults.releaseStuck()).toBe(1);
    settle(env);
    expect((await env.client.showVolume(dataVol))?.status).toBe('available');
    expect((await env.client.showJob(j.job_id)).status).toBe('SUCCESS');
  });

  it('timeout: the detach job stays RUNNING (volume detaching) for ms, then ends FAIL and the volume is still in-use on its server (HCS-2, HCS-6)', async () => {
    env = await setup();
    const id = await activeServer(env);
    const dataVol = env.hcs.hypervisor.server(id)!.volumes.find((v) => v.bootIndex === undefined)!.volumeId;
    env.hcs.faults.add({ service: 'ecs', operation: 'detachVolume', match: { id: dataVol }, effect: { type: 'timeout', ms: 600_000 }, count: 1 });
    const j = await env.client.detachVolume(id, dataVol);
    settle(env, 599_000);
    expect((await env.client.showVolume(dataVol))?.status).toBe('detaching');
    expect((await env.client.showJob(j.job_id)).status).toBe('RUNNING');
    settle(env, 2_000);
    const job = await env.client.showJob(j.job_id);
    expect([job.status, job.error_code]).toEqual(['FAIL', 'Ecs.0002']);
    expect(job.fail_reason).toMatch(/^detachVolume timed out after 600s/);
    const v = await env.client.showVolume(dataVol);
    expect(v?.status).toBe('in-use');
    expect(v?.attachments?.map((a) => a.server_id)).toEqual([id]);
    expect(env.events.all().some((e) => e.type === 'volume.detach-failed' && e.message.includes('still in-use'))).toBe(true);
    // The rule is used up: a retried detach is a new job and completes.
    const j2 = await env.client.detachVolume(id, dataVol);
    settle(env);
    expect((await env.client.showJob(j2.job_id)).status).toBe('SUCCESS');
    expect((await env.client.showVolume(dataVol))?.status).toBe('available');
  });

  it('timeout: defaults (10 min, Ecs.0002), own code and reason; only on operations that start a job', async () => {
    env = await setup();
    const id = await activeServer(env);
    const dataVol = env.hcs.hypervisor.server(id)!.volumes.find((v) => v.bootIndex === undefined)!.volumeId;
    env.hcs.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'timeout', errorCode: 'Ecs.0108', failReason: 'guest did not release the disk' } });
    const j = await env.client.detachVolume(id, dataVol);
    settle(env, 9 * 60_000);
    expect((await env.client.showJob(j.job_id)).status).toBe('RUNNING');
    settle(env, 61_000);
    const job = await env.client.showJob(j.job_id);
    expect([job.status, job.error_code, job.fail_reason]).toEqual(['FAIL', 'Ecs.0108', 'guest did not release the disk']);
    expect(() => env.hcs.faults.add({ service: 'ecs', operation: 'showServer', effect: { type: 'timeout' } })).toThrow(/effect.type timeout only applies to operations that start a job/);
    expect(() => env.hcs.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'timeout', ms: 0 } })).toThrow(/effect.ms must be between 1/);
    // Deliberately ill-typed input, as it would arrive from JSON.
    expect(() => env.hcs.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'timeout', after: 5 } as unknown as { type: 'timeout' } })).toThrow(/effect.after is not a field of a timeout effect/);
  });

  it('stuck: a server stays BUILD; deleting it still works', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', match: { name: 'stuck' }, effect: { type: 'stuck' } });
    const c = await env.client.createServers(serverBody(env, { name: 'stuck-0' }));
    settle(env, 3_600_000);
    expect((await env.client.showServer(c.serverIds[0]!))?.status).toBe('BUILD');
    await env.client.deleteServers(c.serverIds);
    settle(env);
    expect(await env.client.showServer(c.serverIds[0]!)).toBeUndefined();
    expect((await env.client.showJob(c.job_id)).status).toBe('FAIL');
  });

  it('latency (job): the transitions of the call take longer on the injected clock', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'evs', operation: 'createVolume', effect: { type: 'latency', ms: 600_000 } });
    const c = await env.client.createVolume({ volume: { name: 'slow', size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
    settle(env, 300_000);
    expect((await env.client.showVolume(c.volume_ids[0]!))?.status).toBe('creating');
    settle(env, 400_000);
    expect((await env.client.showVolume(c.volume_ids[0]!))?.status).toBe('available');
  });

  it('latency (response): a read answers once the injected clock moved that far', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'vpc', operation: 'listSubnets', effect: { type: 'latency', ms: 5000 } });
    const start = env.clock.now();
    let done = false;
    const p = env.client.listSubnets().then((r) => {
      done = true;
      return r;
    });
    // Wait (microtasks/IO only) until the request parked its timer on the virtual clock.
    for (let i = 0; i < 200 && env.clock.pendingCount() === 0; i++) await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    env.clock.advanceBy(4999);
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    env.clock.advanceBy(1);
    expect((await p).length).toBe(2);
    expect(env.clock.now() - start).toBe(5000);
  });

  it('partial: the action is carried out but the client gets a 500', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'partial' }, count: 1 });
    const err = await env.client.createServers(serverBody(env)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HcsApiError);
    expect((err as HcsApiError).status).toBe(500);
    expect(env.hcs.hypervisor.listServers().map((s) => s.name)).toEqual(['worker-0']);
  });

  it('capacity and quota faults use the documented codes (Ecs.0319, Ecs.0001, EVS.1042)', async () => {
    env = await setup();
    env.hcs.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'capacity', flavor: 's6.xlarge.2', az: 'az1' } });
    const p = env.client.projectId;
    const r = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { flavorRef: 's6.xlarge.2' }));
    expect(r.status).toBe(400);
    expect((r.json as ErrJson).error.code).toBe('Ecs.0319');
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { flavorRef: 's6.xlarge.2', availability_zone: 'az2' }))).status).toBe(200);
    const soldOut = env.hcs.catalog().flavors.find((f) => f.id === 's6.xlarge.2')!.availabilityZones;
    expect(soldOut).toEqual([
      { name: 'az1', soldOut: true, status: 'sellout', reason: 'injected fault fault-1' },
      { name: 'az2', soldOut: false, status: 'normal' },
    ]);
    env.hcs.faults.add({ service: 'evs', operation: 'createVolume', effect: { type: 'quota', resource: 'gigabytes' } });
    const v = await env.req('POST', `/v2.1/${p}/cloudvolumes`, { volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
    // EVS.1042 "Insufficient disk capacity quota assigned to the tenant" (EVS error codes, evs_04_0038).
    expect([v.status, (v.json as ErrJson).error.code]).toEqual([400, 'EVS.1042']);
    env.hcs.faults.add({ service: 'ecs', operation: '*', effect: { type: 'quota', resource: 'instances' } });
    const q = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'q' }));
    expect((q.json as ErrJson).error.code).toBe('Ecs.0001');
    // The quota rule only applies to create calls.
    expect((await env.req('GET', `/v1/${p}/cloudservers/detail`)).status).toBe(200);
  });

  it('rejects invalid rules with a 400 naming the field', async () => {
    env = await setup();
    const bad: [unknown, string][] = [
      [{ service: 'rds', operation: 'x', effect: { type: 'stuck' } }, 'service'],
      [{ service: 'ecs', operation: 'createVolume', effect: { type: 'stuck' } }, 'operation'],
      [{ service: 'ecs', operation: 'showServer', effect: { type: 'stuck' } }, 'effect.type'],
      [{ service: 'ecs', operation: 'showServer', effect: { type: 'error', status: 200, code: 'x' } }, 'effect.status'],
      [{ service: 'ecs', operation: 'showServer', effect: { type: 'latency' } }, 'effect.ms'],
      [{ service: 'ecs', operation: 'showServer', effect: { type: 'error', status: 500, code: 'x' }, probability: 2 }, 'probability'],
      [{ service: 'ecs', operation: 'showServer', effect: { type: 'error', status: 500, code: 'x' }, count: 0 }, 'count'],
      [{ service: 'ecs', operation: 'showServer', effect: { type: 'error', status: 500, code: 'x' }, match: { ip: '1' } }, 'match.ip'],
      [{ service: 'ecs', operation: 'showServer', effect: { type: 'error', status: 500, code: 'x' }, bogus: 1 }, 'bogus'],
      [{ service: 'evs', operation: 'createVolume', effect: { type: 'capacity' } }, 'effect.type'],
      [{ service: 'evs', operation: 'createVolume', effect: { type: 'quota', resource: 'disks' } }, 'effect.resource'],
    ];
    for (const [rule, field] of bad) {
      // Deliberately ill-typed input, as it would arrive from JSON.
      const e = (() => {
        try {
          env.hcs.faults.add(rule as Parameters<Env['hcs']['faults']['add']>[0]);
          return undefined;
        } catch (x) {
          return x as { status: number; code: string; message: string };
        }
      })();
      expect(e?.status, field).toBe(400);
      expect(e?.code, field).toBe('Admin.0400');
      expect(e?.message, field).toContain(field);
    }
    expect(env.hcs.faults.list()).toEqual([]);
  });
});

describe('mock-hcs quotas and capacity from the configuration', () => {
  it('enforces instances, volumes and gigabytes quotas per project (Ecs.0001 / EVS.1042)', async () => {
    const config = defaultCloudConfig();
    config.projects[0]!.quotas = { instances: 2, volumes: 5, gigabytes: 300 };
    env = await setup({ config });
    const p = env.client.projectId;
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { count: 2 }))).status).toBe(200);
    const r = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'third' }));
    expect([r.status, (r.json as ErrJson).error.code]).toEqual([400, 'Ecs.0001']);
    expect((r.json as ErrJson).error.message).toMatch(/instances quota: quota 2, used 2, requested 1/);
    // 4 volumes (2 x root + data), 180 GB used.
    const gb = await env.req('POST', `/v2.1/${p}/cloudvolumes`, { volume: { size: 200, volume_type: 'SSD', availability_zone: 'az1' } });
    // EVS.1042 "Insufficient disk capacity quota assigned to the tenant" (EVS error codes, evs_04_0038).
    expect([gb.status, (gb.json as ErrJson).error.code]).toEqual([400, 'EVS.1042']);
    expect((gb.json as ErrJson).error.message).toContain('gigabytes');
    expect((await env.req('POST', `/v2.1/${p}/cloudvolumes`, { volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).status).toBe(200);
    const n = await env.req('POST', `/v2.1/${p}/cloudvolumes`, { volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
    expect((n.json as ErrJson).error.message).toContain('volumes quota');
    // The other project is not limited.
    await env.other.createServers(serverBody(env, { count: 3 }));
    expect(env.hcs.catalog().projects[0]).toMatchObject({ quotas: { instances: 2 }, usage: { instances: 2, volumes: 5, gigabytes: 190 } });
  });

  it('capacity per AZ and flavor: Ecs.0319 when exhausted, freed by deletion, shown in the catalog', async () => {
    const config = defaultCloudConfig();
    config.capacity = [{ availabilityZone: 'az1', flavor: 's6.large.2', max: 1 }];
    env = await setup({ config });
    const p = env.client.projectId;
    const first = await env.client.createServers(serverBody(env));
    const r = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'w1' }));
    expect([r.status, (r.json as ErrJson).error.code]).toEqual([400, 'Ecs.0319']);
    expect(env.hcs.catalog().flavors.find((f) => f.id === 's6.large.2')!.availabilityZones[0]).toEqual({
      name: 'az1',
      soldOut: true,
      status: 'sellout',
      reason: 'capacity 1 reached',
      capacity: { max: 1, used: 1 },
    });
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'w2', availability_zone: 'az2' }))).status).toBe(200);
    await env.client.deleteServers(first.serverIds);
    settle(env);
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'w3' }))).status).toBe(200);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

type ErrJson = { error: { code: string; message: string } };

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const r = await env.hcs.app.inject({
    method: method as 'PUT',
    url: path,
    headers: { 'x-admin-token': env.hcs.adminToken ?? '', 'content-type': 'application/json' },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: r.statusCode, json: r.json() as unknown };
}

describe('DeleteServers as ECS documents it (ecs_02_0103, issue 24)', () => {
  it('delete_volume defaults to false: data disks created with the server are detached and kept, the system disk goes', { timeout: 20_000 }, async () => {
    env = await setup();
    const { client } = env;
    const id = (await client.createServers(serverBody(env))).serverIds[0]!;
    settle(env);
    const vols = env.hcs.hypervisor.server(id)!.volumes;
    const root = vols.find((v) => v.bootIndex === 0)!.volumeId;
    const data = vols.find((v) => v.bootIndex !== 0)!.volumeId;
    await client.deleteServers([id]);
    settle(env);
    expect(await client.showVolume(root)).toBeUndefined();
    const kept = await client.showVolume(data);
    expect(kept?.status).toBe('available');
    expect(kept?.attachments ?? []).toEqual([]);
  });

  it('a data disk with delete_on_termination=true goes with its server even with delete_volume=false', { timeout: 20_000 }, async () => {
    env = await setup();
    const { client } = env;
    const id = (await client.createServers(serverBody(env, { data_volumes: [{ volumetype: 'SSD', size: 50, delete_on_termination: true }, { volumetype: 'SSD', size: 60 }] }))).serverIds[0]!;
    settle(env);
    const vols = env.hcs.hypervisor.server(id)!.volumes.filter((v) => v.bootIndex !== 0);
    expect(vols).toHaveLength(2);
    await client.deleteServers([id], { deleteVolume: false });
    settle(env);
    const after = await Promise.all(vols.map((v) => client.showVolume(v.volumeId)));
    expect(after.map((v) => v?.size)).toEqual([undefined, 60]);
  });
});

describe('per-project quotas on servers, cores, RAM, volumes and gigabytes (HCS-6)', () => {
  it('cores and RAM count the flavors of the project servers: 400 Ecs.0001 (ECS "Error Codes" ecs_07_0002)', { timeout: 20_000 }, async () => {
    const config = defaultCloudConfig();
    config.projects[0]!.quotas = { cores: 4 }; // s6.large.2 has 2 vCPUs
    env = await setup({ config });
    const p = env.client.projectId;
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { count: 2 }))).status).toBe(200);
    const r = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'third' }));
    expect([r.status, (r.json as ErrJson).error.code]).toEqual([400, 'Ecs.0001']);
    expect((r.json as ErrJson).error.message).toMatch(/cores quota: quota 4, used 4, requested 2/);
  });

  it('PUT /_admin/quotas sets a project quota at run time; the documented codes answer (Ecs.0001 ram, Ecs.0021 and EVS.1034 volumes)', { timeout: 20_000 }, async () => {
    env = await setup();
    const p = env.client.projectId;
    // Unknown project and bad bodies are refused.
    expect((await admin('PUT', '/_admin/quotas/nope', { ram: 1 })).status).toBe(404);
    expect((await admin('PUT', `/_admin/quotas/${p}`, { disks: 1 })).status).toBe(400);
    expect((await admin('PUT', `/_admin/quotas/${p}`, { ram: -1 })).status).toBe(400);

    expect((await admin('PUT', `/_admin/quotas/${p}`, { ram: 4096 })).status).toBe(200); // one s6.large.2
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env))).status).toBe(200);
    const ram = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'second' }));
    expect([ram.status, (ram.json as ErrJson).error.code]).toEqual([400, 'Ecs.0001']);

    // 2 volumes used (root + data): one more server needs 2 -> Ecs.0021 "Insufficient EVS disk quota" (ecs_07_0002).
    expect((await admin('PUT', `/_admin/quotas/${p}`, { volumes: 3 })).status).toBe(200);
    const vq = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'third' }));
    expect([vq.status, (vq.json as ErrJson).error.code]).toEqual([400, 'Ecs.0021']);
    // One more volume fits; the next is 400 EVS.1034 "Insufficient disk quantity quota" (EVS "Error Codes" evs_04_0038).
    expect((await env.req('POST', `/v2.1/${p}/cloudvolumes`, { volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).status).toBe(200);
    const ev = await env.req('POST', `/v2.1/${p}/cloudvolumes`, { volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
    expect([ev.status, (ev.json as ErrJson).error.code]).toEqual([400, 'EVS.1034']);
    // The catalog shows the quotas in force and the usage.
    const cat = (await admin('GET', '/_admin/catalog')).json as { projects: { id: string; quotas: Record<string, number>; usage: Record<string, number> }[] };
    const mine = cat.projects.find((x) => x.id === p)!;
    expect(mine.quotas).toEqual({ volumes: 3 });
    expect(mine.usage).toMatchObject({ instances: 1, cores: 2, ram: 4096, volumes: 3 });
  });
});

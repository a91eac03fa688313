import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

type ErrJson = { error: { code: string; message: string } };

let env: Env | undefined;
let dir: string | undefined;
afterEach(async () => {
  await env?.hcs.close();
  env = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

// Issue 24: calls a provider commonly makes answered 404 APIGW.0101.
describe('ECS tags, metadata, interfaces and availability zones', () => {
  it('ShowServerTags / BatchCreateServerTags / BatchDeleteServerTags and UpdateServerMetadata survive a restart', { timeout: 30_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), 'mock-hcs-extras-'));
    const dataFile = join(dir, 'cloud.json');
    const clock = new VirtualClock();
    env = await setup({ dataFile, clock });
    const p = env.client.projectId;
    const id = (await env.client.createServers(serverBody(env))).serverIds[0]!;
    settle(env);
    const base = `/v1/${p}/cloudservers/${id}`;
    expect((await env.req('GET', `${base}/tags`)).json).toEqual({ tags: [{ key: 'cluster', value: 'demo' }] });
    const add = await env.req('POST', `${base}/tags/action`, { action: 'create', tags: [{ key: 'role', value: 'worker' }, { key: 'cluster', value: 'prod' }] });
    expect(add.status).toBe(204);
    const meta = await env.req('POST', `${base}/metadata`, { metadata: { owner: 'team-a' } });
    expect((meta.json as { metadata: Record<string, string> }).metadata).toMatchObject({ cluster: 'demo', owner: 'team-a' });
    expect((await env.req('POST', `${base}/tags/action`, { action: 'delete', tags: [{ key: 'role' }] })).status).toBe(204);

    // Restart on the same data file: tags and metadata are still there, and ShowServer shows them.
    await env.hcs.close();
    env = await setup({ dataFile, clock });
    expect((await env.req('GET', `${base}/tags`)).json).toEqual({ tags: [{ key: 'cluster', value: 'prod' }] });
    const shown = await env.client.showServer(id);
    expect(shown?.metadata).toMatchObject({ owner: 'team-a' });
    expect(shown?.tags).toEqual(['cluster=prod']);
  });

  it('tag refusals use the ECS codes (ecs_07_0002): more than 10 Ecs.0905, bad characters Ecs.0907, duplicate key Ecs.0908; unknown server 404 Ecs.0114', { timeout: 30_000 }, async () => {
    env = await setup();
    const p = env.client.projectId;
    const id = (await env.client.createServers(serverBody(env))).serverIds[0]!;
    const base = `/v1/${p}/cloudservers/${id}`;
    const many = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: 'v' }));
    const tooMany = await env.req('POST', `${base}/tags/action`, { action: 'create', tags: many });
    expect([tooMany.status, (tooMany.json as ErrJson).error.code]).toEqual([400, 'Ecs.0905']);
    const chars = await env.req('POST', `${base}/tags/action`, { action: 'create', tags: [{ key: 'a b', value: 'v' }] });
    expect([chars.status, (chars.json as ErrJson).error.code]).toEqual([400, 'Ecs.0907']);
    const dup = await env.req('POST', `${base}/tags/action`, { action: 'create', tags: [{ key: 'x', value: '1' }, { key: 'x', value: '2' }] });
    expect([dup.status, (dup.json as ErrJson).error.code]).toEqual([400, 'Ecs.0908']);
    const badAction = await env.req('POST', `${base}/tags/action`, { action: 'update', tags: [{ key: 'x' }] });
    expect([badAction.status, (badAction.json as ErrJson).error.code]).toEqual([400, 'Ecs.0005']);
    // Nothing changed.
    expect((await env.req('GET', `${base}/tags`)).json).toEqual({ tags: [{ key: 'cluster', value: 'demo' }] });
    const none = await env.req('GET', `/v1/${p}/cloudservers/00000000-0000-4000-8000-000000000000/tags`);
    expect([none.status, (none.json as ErrJson).error.code]).toEqual([404, 'Ecs.0114']);
    const badMeta = await env.req('POST', `${base}/metadata`, { metadata: { k: 5 } });
    expect([badMeta.status, (badMeta.json as ErrJson).error.code]).toEqual([400, 'Ecs.0005']);
  });

  it('UpdateServerBlockDevice (ecs_02_0607) sets a data disk\'s delete_on_termination, which DeleteServers then follows; refusals change nothing', { timeout: 30_000 }, async () => {
    env = await setup();
    const p = env.client.projectId;
    const [a, b] = (await env.client.createServers(serverBody(env, { count: 2 }))).serverIds;
    settle(env);
    type Attached = { id: string; delete_on_termination: string; bootIndex: string };
    const attached = async (id: string): Promise<Attached[]> =>
      ((await env!.req('GET', `/v1/${p}/cloudservers/${id}`)).json as { server: { 'os-extended-volumes:volumes_attached': Attached[] } }).server['os-extended-volumes:volumes_attached'];
    const dataOf = async (id: string) => (await attached(id)).find((v) => v.bootIndex !== '0')!;
    const rootOf = async (id: string) => (await attached(id)).find((v) => v.bootIndex === '0')!;
    const dataA = await dataOf(a!);
    const dataB = await dataOf(b!);
    expect([dataA.delete_on_termination, dataB.delete_on_termination]).toEqual(['false', 'false']);
    const put = (server: string, volume: string, body: unknown) => env!.req('PUT', `/v1/${p}/cloudservers/${server}/block_device/${volume}`, body);

    // Refusals: each names the field or the case, and no write is applied.
    const rootA = await rootOf(a!);
    const sys = await put(a!, rootA.id, { block_device: { delete_on_termination: false } });
    expect([sys.status, (sys.json as ErrJson).error.code]).toEqual([400, 'Ecs.0005']);
    expect((sys.json as ErrJson).error.message).toMatch(/system disk.*cannot be modified/);
    const missing = await put(a!, dataA.id, { block_device: {} });
    expect([missing.status, (missing.json as ErrJson).error.code]).toEqual([400, 'Ecs.0005']);
    expect((missing.json as ErrJson).error.message).toContain('block_device.delete_on_termination');
    const notBool = await put(a!, dataA.id, { block_device: { delete_on_termination: 'true' } });
    expect(notBool.status).toBe(400);
    const other = await put(a!, dataB.id, { block_device: { delete_on_termination: true } });
    expect([other.status, (other.json as ErrJson).error.code]).toEqual([404, 'Ecs.0111']);
    const noServer = await put('00000000-0000-4000-8000-000000000000', dataA.id, { block_device: { delete_on_termination: true } });
    expect([noServer.status, (noServer.json as ErrJson).error.code]).toEqual([404, 'Ecs.0114']);
    expect((await attached(a!)).map((v) => v.delete_on_termination)).toEqual(['true', 'false']);
    expect((await dataOf(b!)).delete_on_termination).toBe('false');

    // The change: 204 with no body, shown by ShowServer; deleting both servers then removes only a's data disk.
    const ok = await put(a!, dataA.id, { block_device: { delete_on_termination: true } });
    expect([ok.status, ok.body]).toEqual([204, '']);
    expect((await dataOf(a!)).delete_on_termination).toBe('true');
    await env.client.deleteServers([a!, b!]);
    settle(env);
    expect(env.hcs.hypervisor.listVolumes().map((v) => v.id)).toEqual([dataB.id]);
  });

  it('ListServerInterfaces gives each NIC with its port, IP and MAC; NovaListAvailabilityZones the configured AZs', { timeout: 30_000 }, async () => {
    env = await setup();
    const p = env.client.projectId;
    const id = (await env.client.createServers(serverBody(env, {}, { ip: '192.168.10.40' }))).serverIds[0]!;
    settle(env);
    const r = await env.req('GET', `/v1/${p}/cloudservers/${id}/os-interface`);
    const nics = (r.json as { interfaceAttachments: { port_state: string; fixed_ips: { ip_address: string }[]; port_id: string; mac_addr: string; net_id: string }[] }).interfaceAttachments;
    const vm = env.hcs.hypervisor.server(id)!;
    expect(nics).toHaveLength(1);
    expect(nics[0]).toMatchObject({ port_state: 'ACTIVE', fixed_ips: [{ ip_address: '192.168.10.40' }] });
    expect(nics[0]!.mac_addr).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    expect(vm.ips).toEqual(['192.168.10.40']);
    const az = await env.req('GET', `/v2.1/${p}/os-availability-zone`);
    expect((az.json as { availabilityZoneInfo: { zoneName: string; zoneState: { available: boolean } }[] }).availabilityZoneInfo).toEqual(
      env.config.availabilityZones.map((zoneName) => ({ zoneName, zoneState: { available: true }, hosts: null })),
    );
  });
});

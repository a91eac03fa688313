/**
 * Wire shapes the official SDK models expect (issue 13; huaweicloud-sdk-go-v3
 * v0.1.207 and huaweicloudsdk* 3.1.219 models, checked end to end by
 * test/sdk-go and test/sdk-python): ListCloudServers (v1.1), VPC v3 ports,
 * UpdateVolume with the volume at the top level, ShowServer's
 * OS-EXT-SRV-ATTR fields and bootIndex on every attached volume, and the
 * project auto-discovery GET /v3/projects?name=<region id> (HCS-5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicCredentials, GlobalCredentials } from '@huaweicloud/huaweicloud-sdk-core';
import { EcsClient, ListCloudServersRequest } from '@huaweicloud/huaweicloud-sdk-ecs';
import { IamClient, KeystoneListProjectsRequest } from '@huaweicloud/huaweicloud-sdk-iam/v3/public-api.js';
import { VirtualClock } from '../../src/core/index.js';
import { DEFAULT_DOMAIN } from '../../mock-hcs/src/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
let endpoint: string;
let serverId: string;

beforeAll(async () => {
  // The SDKs sign with the wall clock: the virtual clock starts at "now" and is moved only a few minutes.
  env = await setup({ clock: new VirtualClock(Date.now()) });
  endpoint = await env.hcs.app.listen({ port: 0, host: '127.0.0.1' });
  const pid = env.config.projects[0]!.id;
  const r = await env.req('POST', `/v1.1/${pid}/cloudservers`, serverBody(env, { name: 'wire', count: 3 }));
  expect(r.status).toBe(200);
  serverId = (r.json as { serverIds: string[] }).serverIds[0]!;
  settle(env);
});

afterAll(async () => {
  await env?.hcs.close();
});

describe('SDK wire shapes', () => {
  it('ShowServer: bootIndex on the system disk ("0") and data disks ("-1"), OS-EXT-SRV-ATTR user_data, launch_index, reservation_id, kernel/ramdisk ids', async () => {
    const pid = env.config.projects[0]!.id;
    const r = await env.req('GET', `/v1/${pid}/cloudservers/${serverId}`);
    const s = (r.json as { server: Record<string, unknown> }).server;
    expect(s['os-extended-volumes:volumes_attached']).toEqual([
      expect.objectContaining({ device: '/dev/vda', bootIndex: '0', delete_on_termination: 'true' }),
      expect.objectContaining({ device: '/dev/vdb', bootIndex: '-1' }),
    ]);
    expect(s['OS-EXT-SRV-ATTR:user_data']).toBe(serverBody(env).server.user_data);
    expect(s['OS-EXT-SRV-ATTR:launch_index']).toBe(0);
    expect(s['OS-EXT-SRV-ATTR:reservation_id']).toMatch(/^r-[0-9a-f]{8}$/);
    expect([s['OS-EXT-SRV-ATTR:kernel_id'], s['OS-EXT-SRV-ATTR:ramdisk_id']]).toEqual(['', '']);
  });

  it('ListCloudServers through the Node EcsClient: CloudServer records, marker pages with servers_links', async () => {
    const p0 = env.config.projects[0]!;
    const ecs = EcsClient.newBuilder().withCredential(new BasicCredentials().withAk(p0.ak).withSk(p0.sk).withProjectId(p0.id)).withEndpoint(endpoint).build();
    const first = await ecs.listCloudServers(new ListCloudServersRequest().withName('wire').withLimit(2));
    type Page = { servers: Record<string, unknown>[]; servers_links: { rel: string; href: string }[] };
    const page1 = first as unknown as Page;
    expect(page1.servers.map((s) => s.name)).toEqual(['wire-0001', 'wire-0002']);
    expect(page1.servers[0]).toMatchObject({ id: serverId, status: 'ACTIVE', vm_state: 'active', power_state: 1, availability_zone: 'az1', flavor: { id: 's6.large.2', vcpus: 2, ram: 4096 } });
    expect(page1.servers[0]!.volumes_attached).toEqual([expect.objectContaining({ bootIndex: '0', delete_on_termination: true, size: 40 }), expect.objectContaining({ bootIndex: '-1', size: 50 })]);
    expect(page1.servers_links).toEqual([{ rel: 'next', href: `/v1.1/${p0.id}/cloudservers/detail?limit=2&marker=${page1.servers[1]!.id as string}` }]);
    const page2 = (await ecs.listCloudServers(new ListCloudServersRequest().withName('wire').withLimit(2).withMarker(page1.servers[1]!.id as string))) as unknown as Page;
    expect([page2.servers.map((s) => s.name), page2.servers_links]).toEqual([['wire-0003'], []]);
    const byId = (await ecs.listCloudServers(new ListCloudServersRequest().withId(serverId))) as unknown as Page;
    expect(byId.servers.map((s) => s.id)).toEqual([serverId]);
  });

  it('VPC v3 ports: list with filters and show, in the v3 Port shape; 404 VPC.2501', async () => {
    const pid = env.config.projects[0]!.id;
    const worker = env.config.subnets.find((s) => s.name === 'worker-subnet')!;
    const list = await env.req('GET', `/v3/${pid}/ports?device_id=${serverId}`);
    expect(list.status).toBe(200);
    const body = list.json as { ports: Record<string, unknown>[]; page_info: Record<string, unknown>; request_id: string };
    expect(body.ports).toHaveLength(1);
    const port = body.ports[0]!;
    expect(port).toMatchObject({ device_id: serverId, virsubnet_id: worker.id, vpc_id: worker.vpc_id, instance_id: serverId, instance_type: 'ecs', status: 'ACTIVE' });
    expect(port.private_ips).toEqual([{ subnet_cidr_id: worker.neutron_subnet_id, ip_address: expect.stringMatching(/^192\.168\.10\./) }]);
    expect(body.page_info).toEqual({ previous_marker: port.id, current_count: 1 });
    expect(body.request_id).toBe(list.headers['x-request-id']);
    const shown = await env.req('GET', `/v3/${pid}/ports/${port.id as string}`);
    expect((shown.json as { port: { id: string } }).port.id).toBe(port.id);
    const two = await env.req('GET', `/v3/${pid}/ports?virsubnet_id=${worker.id}&limit=2`);
    const twoBody = two.json as { ports: { id: string }[]; page_info: { next_marker?: string } };
    expect(twoBody.ports).toHaveLength(2);
    expect(twoBody.page_info.next_marker).toBe(twoBody.ports[1]!.id);
    const missing = await env.req('GET', `/v3/${pid}/ports/00000000-0000-4000-8000-000000000000`);
    expect([missing.status, (missing.json as { error: { code: string } }).error.code]).toEqual([404, 'VPC.2501']);
  });

  it('UpdateVolume answers with the volume fields at the top level', async () => {
    const pid = env.config.projects[0]!.id;
    const created = await env.req('POST', `/v2/${pid}/cloudvolumes`, { volume: { name: 'pd', size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
    const id = (created.json as { volume_ids: string[] }).volume_ids[0]!;
    const r = await env.req('PUT', `/v2/${pid}/cloudvolumes/${id}`, { volume: { name: 'pd-2' } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id, name: 'pd-2', size: 10, volume_type: 'SSD' });
    expect((r.json as Record<string, unknown>).volume).toBeUndefined();
  });

  it('GET /v3/projects?name=<region id> finds the credentials\' project (project auto-discovery of the SDKs)', async () => {
    const [p0, p1] = env.config.projects;
    for (const p of [p0!, p1!]) {
      const iam = IamClient.newBuilder().withCredential(new GlobalCredentials().withAk(p.ak).withSk(p.sk).withDomainId(DEFAULT_DOMAIN.id)).withEndpoint(endpoint).build();
      const res = await iam.keystoneListProjects(new KeystoneListProjectsRequest().withName(p.region));
      expect(res.projects?.map((x) => x.id)).toEqual([p.id]);
    }
    const iam = IamClient.newBuilder().withCredential(new GlobalCredentials().withAk(p0!.ak).withSk(p0!.sk).withDomainId(DEFAULT_DOMAIN.id)).withEndpoint(endpoint).build();
    expect((await iam.keystoneListProjects(new KeystoneListProjectsRequest().withName('no-such-region'))).projects).toEqual([]);
  });
});

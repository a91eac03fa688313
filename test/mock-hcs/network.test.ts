/**
 * VPC ports and private IPs (HCS-3, NET-7): one IP index shared with the
 * servers' NICs; conflicts, addresses outside the CIDR and exhausted subnets
 * give the same errors as CreateServers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { HcsApiError } from '../../src/product/cloud/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

type ErrJson = { error: { code: string; message: string } };

const worker = (env: Env) => env.config.subnets.find((s) => s.name === 'worker-subnet')!;

describe('mock-hcs VPC ports and private IPs', () => {
  it("shows a server's fixed IPs as ports and private IPs; they go with the server", async () => {
    env = await setup();
    const sub = worker(env);
    const id = (await env.client.createServers(serverBody(env, {}, { ip: '192.168.10.50' }))).serverIds[0]!;
    const ports = await env.client.listPorts({ deviceId: id });
    expect(ports).toHaveLength(1);
    const port = ports[0]!;
    expect(port).toMatchObject({ device_id: id, device_owner: 'compute:az1', status: 'BUILD', network_id: sub.neutron_network_id, fixed_ips: [{ subnet_id: sub.neutron_subnet_id, ip_address: '192.168.10.50' }] });
    const server = await env.client.showServer(id);
    expect(server!.addresses[env.config.vpcs[0]!.id]![0]!['OS-EXT-IPS:port_id']).toBe(port.id);
    settle(env);
    expect((await env.client.showPort(port.id))?.status).toBe('ACTIVE');
    expect((await env.client.listPorts({ ipAddress: '192.168.10.50' })).map((p) => p.id)).toEqual([port.id]);
    const ips = await env.client.listPrivateIps(sub.id);
    expect(ips).toEqual([{ id: port.id, status: 'ACTIVE', subnet_id: sub.id, tenant_id: env.client.projectId, device_owner: 'compute:az1', ip_address: '192.168.10.50' }]);
    // A server's port cannot be deleted through the VPC API.
    for (const del of [() => env.client.deletePort(port.id), () => env.client.deletePrivateIp(port.id)]) {
      const e = await del().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(HcsApiError);
      expect((e as HcsApiError).status).toBe(409);
    }
    // Other projects see nothing.
    expect(await env.other.listPorts()).toEqual([]);
    expect(await env.other.showPort(port.id)).toBeUndefined();
    await env.client.deleteServers([id]);
    settle(env);
    expect(await env.client.listPorts()).toEqual([]);
    expect(await env.client.listPrivateIps(sub.id)).toEqual([]);
  });

  it('reserves private IPs (given or next free), refuses conflicts both ways, releases on delete', async () => {
    env = await setup();
    const sub = worker(env);
    const [fixed, auto] = await env.client.createPrivateIps([{ subnetId: sub.id, ipAddress: '192.168.10.20' }, { subnetId: sub.id }]);
    expect(fixed).toMatchObject({ ip_address: '192.168.10.20', status: 'DOWN', device_owner: '', subnet_id: sub.id });
    expect(auto!.ip_address).toBe('192.168.10.4');
    // A server asking for a reserved IP gets the same error as for another server's IP.
    const r = await env.req('POST', `/v1.1/${env.client.projectId}/cloudservers`, serverBody(env, {}, { ip: '192.168.10.20' }));
    expect([r.status, (r.json as ErrJson).error.code]).toEqual([400, 'Ecs.0010']);
    expect((r.json as ErrJson).error.message).toContain(`privateip ${fixed!.id}`);
    // Automatic allocation for servers skips reserved addresses.
    const sid = (await env.client.createServers(serverBody(env))).serverIds[0]!;
    expect(env.hcs.hypervisor.server(sid)!.ips).toEqual(['192.168.10.5']);
    // ... and a private IP on the server's address is refused (and nothing of the batch is reserved).
    const p = env.client.projectId;
    const clash = await env.req('POST', `/v1/${p}/privateips`, { privateips: [{ subnet_id: sub.id, ip_address: '192.168.10.30' }, { subnet_id: sub.id, ip_address: '192.168.10.5' }] });
    // CreatePrivateip: 409 VPC.0701, the address is in use (VPC error codes, vpc_api_0003).
    expect([clash.status, (clash.json as ErrJson).error.code]).toEqual([409, 'VPC.0701']);
    expect((clash.json as ErrJson).error.message).toContain(`server ${sid}`);
    const dup = await env.req('POST', `/v1/${p}/privateips`, { privateips: [{ subnet_id: sub.id, ip_address: '192.168.10.31' }, { subnet_id: sub.id, ip_address: '192.168.10.31' }] });
    expect([dup.status, (dup.json as ErrJson).error.code]).toEqual([409, 'VPC.0701']);
    expect((await env.client.listPrivateIps(sub.id)).map((x) => x.ip_address).sort()).toEqual(['192.168.10.20', '192.168.10.4', '192.168.10.5']);
    // Outside the CIDR, the gateway and the network address: 400 VPC.0001 (VPC's "param invalid"; Ecs.0039 is CreateServers' code).
    for (const ip of ['192.168.11.9', '192.168.10.1', '192.168.10.0', '192.168.10.255']) {
      const o = await env.req('POST', `/v1/${p}/privateips`, { privateips: [{ subnet_id: sub.id, ip_address: ip }] });
      expect([ip, o.status, (o.json as ErrJson).error.code]).toEqual([ip, 400, 'VPC.0001']);
    }
    const nope = await env.req('POST', `/v1/${p}/privateips`, { privateips: [{ subnet_id: '00000000-0000-4000-8000-000000000000' }] });
    expect([nope.status, (nope.json as ErrJson).error.code]).toEqual([404, 'VPC.0202']);
    // Release: the address can be used by a server again.
    await env.client.deletePrivateIp(fixed!.id);
    const missing = await env.req('DELETE', `/v1/${p}/privateips/${fixed!.id}`);
    expect([missing.status, (missing.json as ErrJson).error.code]).toEqual([404, 'VPC.0702']);
    expect((await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'w2' }, { ip: '192.168.10.20' }))).status).toBe(200);
    expect(env.events.all().some((e) => e.type === 'privateip.created' && e.rules?.includes('NET-7'))).toBe(true);
  });

  it('creates, shows, filters, pages and deletes ports', async () => {
    env = await setup();
    const sub = worker(env);
    const cp = env.config.subnets.find((s) => s.name === 'cp-subnet')!;
    const vip = await env.client.createPort({ port: { network_id: sub.id, name: 'vip', device_owner: 'neutron:VIP_PORT', fixed_ips: [{ subnet_id: sub.neutron_subnet_id, ip_address: '192.168.10.100' }] } });
    expect(vip).toMatchObject({ name: 'vip', device_owner: 'neutron:VIP_PORT', status: 'DOWN', admin_state_up: true, fixed_ips: [{ ip_address: '192.168.10.100' }] });
    expect(vip.mac_address).toMatch(/^fa:16:3e(:[0-9a-f]{2}){3}$/);
    const plain = await env.client.createPort({ port: { network_id: cp.neutron_network_id } });
    expect(plain.fixed_ips[0]!.ip_address).toBe('192.168.1.4');
    expect((await env.client.showPort(vip.id))?.name).toBe('vip');
    expect((await env.client.listPorts({ networkId: cp.id })).map((p) => p.id)).toEqual([plain.id]);
    expect((await env.client.listPorts({ name: 'vip' })).map((p) => p.id)).toEqual([vip.id]);
    expect((await env.client.listPorts({ deviceOwner: 'neutron:VIP_PORT' })).map((p) => p.id)).toEqual([vip.id]);
    // Ports are private IPs too.
    expect((await env.client.listPrivateIps(sub.id)).map((x) => x.id)).toEqual([vip.id]);
    // Marker paging over the raw API.
    const p = env.client.projectId;
    const page1 = await env.req('GET', `/v1/${p}/ports?limit=1`);
    const first = (page1.json as { ports: { id: string }[] }).ports;
    expect(first).toHaveLength(1);
    const page2 = await env.req('GET', `/v1/${p}/ports?limit=1&marker=${first[0]!.id}`);
    expect((page2.json as { ports: { id: string }[] }).ports.map((x) => x.id)).toEqual([plain.id]);
    const byIds = await env.req('GET', `/v1/${p}/ports?id=${vip.id}&id=${plain.id}&fixed_ips=${encodeURIComponent('ip_address=192.168.1.4')}`);
    expect((byIds.json as { ports: { id: string }[] }).ports.map((x) => x.id)).toEqual([plain.id]);
    // Refusals.
    const conflict = await env.req('POST', `/v1/${p}/ports`, { port: { network_id: sub.id, fixed_ips: [{ ip_address: '192.168.10.100' }] } });
    // CreatePort: 409 VPC.0701 (vpc_api_0003).
    expect([conflict.status, (conflict.json as ErrJson).error.code]).toEqual([409, 'VPC.0701']);
    const wrongSubnet = await env.req('POST', `/v1/${p}/ports`, { port: { network_id: sub.id, fixed_ips: [{ subnet_id: cp.neutron_subnet_id }] } });
    // CreatePort's parameter errors: 400 VPC.2500 "Param is invalid." (vpc_api_0003, 创建端口 / Create Port), not the
    // module-wide VPC.0001 stand-in that CreatePrivateip keeps (no code is documented for it).
    expect([wrongSubnet.status, (wrongSubnet.json as ErrJson).error.code]).toEqual([400, 'VPC.2500']);
    const owner = await env.req('POST', `/v1/${p}/ports`, { port: { network_id: sub.id, device_owner: 'compute:az1' } });
    expect([owner.status, (owner.json as ErrJson).error.code]).toEqual([400, 'VPC.2500']);
    expect((owner.json as ErrJson).error.message).toContain('port.device_owner');
    const outside = await env.req('POST', `/v1/${p}/ports`, { port: { network_id: sub.id, fixed_ips: [{ ip_address: '192.168.11.9' }] } });
    expect([outside.status, (outside.json as ErrJson).error.code]).toEqual([400, 'VPC.2500']);
    const twoIps = await env.req('POST', `/v1/${p}/ports`, { port: { network_id: sub.id, fixed_ips: [{ ip_address: '192.168.10.120' }, { ip_address: '192.168.10.121' }] } });
    expect([twoIps.status, (twoIps.json as ErrJson).error.code]).toEqual([400, 'VPC.2500']);
    const noNet = await env.req('POST', `/v1/${p}/ports`, { port: { network_id: 'nope' } });
    expect([noNet.status, (noNet.json as ErrJson).error.code]).toEqual([404, 'VPC.0202']);
    // Delete: 204, then 404.
    const del = await env.req('DELETE', `/v1/${p}/ports/${vip.id}`);
    expect([del.status, del.body]).toEqual([204, '']);
    const again = await env.req('DELETE', `/v1/${p}/ports/${vip.id}`);
    expect([again.status, (again.json as ErrJson).error.code]).toEqual([404, 'VPC.2501']);
    expect(await env.client.showPort(vip.id)).toBeUndefined();
  });

  it('an exhausted subnet gives Ecs.0012 for servers and VPC.0703 for ports and private IPs', async () => {
    const config = defaultCloudConfig();
    const tiny = { ...config.subnets[1]!, id: '8a1f0c2e-1b1a-4c8e-9f2d-0000000000f0', name: 'tiny', cidr: '10.9.0.0/29', gateway_ip: '10.9.0.1', neutron_network_id: '8a1f0c2e-1b1a-4c8e-9f2d-0000000000f0', neutron_subnet_id: '5c2e9d1a-1b1a-4c8e-9f2d-0000000000f0' };
    config.subnets.push(tiny);
    env = await setup({ config });
    const p = env.client.projectId;
    // /29: hosts .1-.6, gateway .1, automatic allocation from .4: .4, .5, .6.
    expect((await env.client.createPrivateIps([{ subnetId: tiny.id }, { subnetId: tiny.id }])).map((x) => x.ip_address)).toEqual(['10.9.0.4', '10.9.0.5']);
    await env.client.createPort({ port: { network_id: tiny.id } });
    const ip = await env.req('POST', `/v1/${p}/privateips`, { privateips: [{ subnet_id: tiny.id }] });
    const port = await env.req('POST', `/v1/${p}/ports`, { port: { network_id: tiny.id } });
    const srv = await env.req('POST', `/v1.1/${p}/cloudservers`, { server: { ...serverBody(env).server, nics: [{ subnet_id: tiny.id }] } });
    // VPC (vpc_api_0003): 409 VPC.0703; ECS (ecs_07_0002): 400 Ecs.0012 "The number of IP addresses in the subnet is insufficient".
    for (const r of [ip, port]) expect([r.status, (r.json as ErrJson).error.code]).toEqual([409, 'VPC.0703']);
    expect([srv.status, (srv.json as ErrJson).error.code]).toEqual([400, 'Ecs.0012']);
    // An explicit address below the automatic range still works.
    expect((await env.client.createPrivateIps([{ subnetId: tiny.id, ipAddress: '10.9.0.2' }]))[0]!.ip_address).toBe('10.9.0.2');
  });

  it('ports and private IPs survive dump/restore and a reset clears them', async () => {
    env = await setup();
    const sub = worker(env);
    const [ip] = await env.client.createPrivateIps([{ subnetId: sub.id, ipAddress: '192.168.10.21' }]);
    const dump = env.hcs.dumpState();
    await env.hcs.reset();
    expect(await env.client.listPrivateIps(sub.id)).toEqual([]);
    await env.hcs.restoreState(dump);
    expect((await env.client.listPrivateIps(sub.id)).map((x) => x.id)).toEqual([ip!.id]);
    const r = await env.req('POST', `/v1.1/${env.client.projectId}/cloudservers`, serverBody(env, {}, { ip: '192.168.10.21' }));
    expect((r.json as ErrJson).error.code).toBe('Ecs.0010');
    // A state document without ports/tokens (written before they existed) still restores.
    const old = structuredClone(dump.data) as Record<string, unknown>;
    delete old.ports;
    delete old.tokens;
    await env.hcs.restoreState(old);
    expect(await env.client.listPrivateIps(sub.id)).toEqual([]);
  });
});

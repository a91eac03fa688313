import { afterEach, describe, expect, it } from 'vitest';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

type ErrJson = { error: { code: string; message: string } };

describe('mock-hcs input validation and error shape', () => {
  it('rejects an IP already in use (Ecs.0010, NET-7) and changes nothing', async () => {
    env = await setup();
    const p = env.client.projectId;
    const ok = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, {}, { ip: '192.168.10.50' }));
    expect(ok.status).toBe(200);
    const before = env.hcs.hypervisor.listServers().length;
    const r = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'w2' }, { ip: '192.168.10.50' }));
    expect(r.status).toBe(400);
    expect((r.json as ErrJson).error.code).toBe('Ecs.0010');
    expect((r.json as ErrJson).error.message).toContain('192.168.10.50');
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(env.hcs.hypervisor.listServers()).toHaveLength(before);
    const ev = env.events.all().find((e) => e.type === 'api.rejected');
    expect(ev?.rules).toContain('NET-7');
  });

  it('rejects an IP outside the subnet CIDR, the gateway and the broadcast address (Ecs.0039)', async () => {
    env = await setup();
    const p = env.client.projectId;
    for (const ip of ['192.168.1.20', '192.168.10.1', '192.168.10.255', '192.168.10.0']) {
      const r = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, {}, { ip }));
      expect(r.status, ip).toBe(400);
      expect((r.json as ErrJson).error.code, ip).toBe('Ecs.0039');
    }
    const bad = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, {}, { ip: '192.168.10.300' }));
    expect((bad.json as ErrJson).error.code).toBe('Ecs.0005');
  });

  it('rejects unknown image, unknown flavor and a flavor not sold in the AZ (TPL-2, TPL-6)', async () => {
    env = await setup();
    const p = env.client.projectId;
    const img = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { imageRef: 'no-such-image' }));
    expect(img.status).toBe(400);
    expect((img.json as ErrJson).error.code).toBe('Ecs.0031');
    const fl = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { flavorRef: 'm9.huge' }));
    // Ecs.0029 "The flavor does not exist or has been abandoned" (ecs_07_0002; Ecs.0023 is a token/URL project mismatch).
    expect((fl.json as ErrJson).error.code).toBe('Ecs.0029');
    expect((fl.json as ErrJson).error.message).toContain('s6.large.2');
    const az = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { flavorRef: 'c6.4xlarge.4', availability_zone: 'az2' }));
    expect((az.json as ErrJson).error.code).toBe('Ecs.0029'); // flavor abandoned / not sold in the AZ (ecs_07_0002)
    const badAz = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { availability_zone: 'AZ-1 (UI name)' }));
    expect((badAz.json as ErrJson).error.code).toBe('Ecs.0005');
    const sub = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { nics: [{ subnet_id: 'nope' }] }));
    expect((sub.json as ErrJson).error.code).toBe('Ecs.0038'); // "The subnet does not exist" (ecs_07_0002)
    expect(env.hcs.hypervisor.listServers()).toEqual([]);
    // The valid values can be listed (TPL-2).
    const az2 = await env.client.listFlavors('az2');
    expect(az2.map((f) => f.id)).not.toContain('c6.4xlarge.4');
    expect((await env.client.listFlavors()).map((f) => f.id)).toContain('c6.4xlarge.4');
  });

  it('validates body fields with a 400 naming the field', async () => {
    env = await setup();
    const p = env.client.projectId;
    const cases: [unknown, string][] = [
      [{}, 'server'],
      [serverBody(env, { name: '' }), 'server.name'],
      [serverBody(env, { nics: [] }), 'server.nics'],
      [serverBody(env, { root_volume: { volumetype: 'GOLD' } }), 'server.root_volume.volumetype'],
      [serverBody(env, { data_volumes: [{ volumetype: 'SSD', size: 5 }] }), 'server.data_volumes[0].size'],
      [serverBody(env, { user_data: 'not base64!' }), 'server.user_data'],
      [serverBody(env, { count: 2, nics: [{ subnet_id: env.config.subnets[1]!.id, ip_address: '192.168.10.9' }] }), 'ip_address'],
    ];
    for (const [body, field] of cases) {
      const r = await env.req('POST', `/v1.1/${p}/cloudservers`, body);
      expect(r.status, field).toBe(400);
      expect((r.json as ErrJson).error.message, field).toContain(field);
    }
  });

  it('malformed JSON is a 400, unknown routes a 404, missing resources the documented 404s', async () => {
    env = await setup();
    const p = env.client.projectId;
    const r = await env.req('POST', `/v1.1/${p}/cloudservers`, '{"server": ');
    expect(r.status).toBe(400);
    expect((r.json as ErrJson).error.code).toBe('Ecs.0000');
    const evs = await env.req('POST', `/v2.1/${p}/cloudvolumes`, '[[');
    expect(evs.status).toBe(400);
    expect((evs.json as ErrJson).error.code).toBe('EVS.5400');
    const nf = await env.req('GET', `/v1/${p}/nothing-here`);
    expect(nf.status).toBe(404);
    expect((nf.json as ErrJson).error.code).toBe('APIGW.0101');
    const srv = await env.req('GET', `/v1/${p}/cloudservers/00000000-0000-4000-8000-000000000000`);
    expect(srv.status).toBe(404);
    expect((srv.json as ErrJson).error.code).toBe('Ecs.0114');
    const vol = await env.req('GET', `/v2/${p}/cloudvolumes/00000000-0000-4000-8000-000000000000`);
    expect((vol.json as ErrJson).error.code).toBe('EVS.5404');
    const job = await env.req('GET', `/v1/${p}/jobs/ffff`);
    // Common.0011 "Invalid job ID" (ecs_07_0002).
    expect([job.status, (job.json as ErrJson).error.code]).toEqual([400, 'Common.0011']);
    const del = await env.req('POST', `/v1/${p}/cloudservers/delete`, { servers: [{ id: 'nope' }] });
    expect((del.json as ErrJson).error.code).toBe('Ecs.0114');
    const bad = await env.req('GET', `/v1/${p}/cloudservers/detail?limit=abc`);
    expect(bad.status).toBe(400);
    const meta = await env.req('GET', `/v2/${p}/cloudvolumes/detail?metadata=${encodeURIComponent('{oops')}`);
    expect((meta.json as ErrJson).error.code).toBe('EVS.5400');
  });

  it('accepts a DELETE with content-type json and an empty body, and a GET with a "{}" body', async () => {
    env = await setup();
    const p = env.client.projectId;
    const id = (await env.client.createServers(serverBody(env))).serverIds[0]!;
    settle(env);
    const g = await env.req('GET', `/v1/${p}/cloudservers/${id}`, '{}');
    expect(g.status).toBe(200);
    const vol = env.hcs.hypervisor.server(id)!.volumes.find((v) => v.bootIndex === undefined)!.volumeId;
    const d = await env.req('DELETE', `/v1/${p}/cloudservers/${id}/detachvolume/${vol}`, '');
    expect(d.status).toBe(200);
    expect(d.json).toHaveProperty('job_id');
  });

  it('serves IMS images with their Kubernetes version and VPC subnets', async () => {
    env = await setup();
    const imgs = await env.client.listImages({ name: 'alauda-os-v4.1-k8s-v1.31.6' });
    expect(imgs).toHaveLength(1);
    expect(imgs[0]).toMatchObject({ status: 'active', __support_kubernetes_version: 'v1.31.6', min_disk: 40 });
    expect(await env.client.listImages({ name: 'alauda-os-v4.1' })).toEqual([]);
    expect((await env.client.listImages()).map((i) => i.__support_kubernetes_version).sort()).toEqual(['v1.30.10', 'v1.31.6', 'v1.32.3']);
    const subnets = await env.client.listSubnets({ vpcId: env.config.vpcs[0]!.id });
    expect(subnets.map((s) => [s.name, s.cidr])).toEqual([
      ['cp-subnet', '192.168.1.0/24'],
      ['worker-subnet', '192.168.10.0/24'],
    ]);
    expect(await env.client.listSubnets({ vpcId: 'other' })).toEqual([]);
  });

  it('rejects a fixed IP taken by another server of the same batch and runs out of addresses cleanly', async () => {
    const { defaultCloudConfig } = await import('../../mock-hcs/src/index.js');
    const config = defaultCloudConfig();
    config.subnets[1]!.cidr = '192.168.10.0/29'; // hosts .1-.6; .1 gateway; allocation starts at .4
    env = await setup({ config });
    const p = env.client.projectId;
    const ok = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { count: 3 }));
    expect(ok.status).toBe(200);
    const full = await env.req('POST', `/v1.1/${p}/cloudservers`, serverBody(env, { name: 'x' }));
    expect(full.status).toBe(400);
    // Ecs.0012 "The number of IP addresses in the subnet is insufficient" (ecs_07_0002; Ecs.0013 is the EIP quota).
    expect((full.json as ErrJson).error.code).toBe('Ecs.0012');
    expect(env.hcs.hypervisor.listServers()).toHaveLength(3);
  });
});

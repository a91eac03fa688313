/**
 * Finished jobs are pruned (the state stays bounded), and errors never name
 * another project's resources (HCS-5, NET-7; issue 13).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-jobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

const volume = (name: string) => ({ volume: { name, size: 10, volume_type: 'SSD', availability_zone: 'az1' } });

describe('mock-hcs job pruning', () => {
  it('keeps at most jobs.maxFinished finished jobs, drops those older than jobs.retentionMs, never a running one', async () => {
    const dataFile = join(dir, 'jobs.json');
    env = await setup({ dataFile, config: { ...defaultCloudConfig(), jobs: { retentionMs: 600_000, maxFinished: 5 } } });
    const jobs: string[] = [];
    for (let i = 0; i < 12; i++) {
      jobs.push((await env.client.createVolume(volume(`v${i}`))).job_id);
      settle(env, 10_000);
    }
    const running = (await env.client.createVolume(volume('running'))).job_id;
    await env.hcs.flush();
    const doc = () => JSON.parse(readFileSync(dataFile, 'utf8')) as { jobs: Record<string, { status: string }> };
    expect(Object.keys(doc().jobs).sort()).toEqual([...jobs.slice(-5), running].sort());
    // The dropped jobs are gone for ShowJob too; the kept and the running one answer.
    // Common.0011 "Invalid job ID" / "Failed to obtain the job" (ECS error codes ecs_07_0002, EVS evs_04_0038).
    await expect(env.client.showJob(jobs[0]!)).rejects.toMatchObject({ status: 400, code: 'Common.0011' });
    expect((await env.client.showJob(jobs[11]!)).status).toBe('SUCCESS');
    expect((await env.client.showJob(running)).status).not.toBe('SUCCESS');
    // Past the retention every finished job goes (the one that was running too, once finished), on the next job event.
    settle(env, 700_000);
    const late = (await env.client.createVolume(volume('late'))).job_id;
    await env.hcs.flush();
    expect(Object.keys(doc().jobs)).toEqual([late]);
  });

  it('a pruned create job takes its X-Client-Token entry with it; the state stays bounded over many creates and deletes', async () => {
    env = await setup({ config: { ...defaultCloudConfig(), jobs: { retentionMs: 3_600_000, maxFinished: 10 } } });
    const first = await env.client.createServers(serverBody(env, { name: 'tok' }), 'tok-1');
    settle(env);
    for (let i = 0; i < 30; i++) {
      const { volume_ids } = await env.client.createVolume(volume(`c${i}`));
      settle(env, 10_000);
      await env.client.deleteVolume(volume_ids[0]!);
      settle(env, 10_000);
    }
    const d = env.hcs.dumpState().data as { jobs: Record<string, unknown>; clientTokens: Record<string, unknown> };
    expect(Object.keys(d.jobs).length).toBeLessThanOrEqual(10);
    expect(d.jobs[first.job_id]).toBeUndefined();
    expect(Object.keys(d.clientTokens)).toHaveLength(0);
  });
});

describe('mock-hcs errors name only the caller\'s own resources', () => {
  it('Ecs.0010 names the holder of an IP to its own project only', async () => {
    env = await setup();
    const a = await env.client.createServers(serverBody(env, { name: 'a' }, { ip: '192.168.10.40' }));
    settle(env);
    const aServer = env.hcs.hypervisor.server(a.serverIds[0]!)!;
    const dump = JSON.stringify(env.hcs.dumpState().data);
    const portId = (JSON.parse(dump) as { servers: Record<string, { nics: { portId: string }[] }> }).servers[aServer.id]!.nics[0]!.portId;
    const [pip] = await env.client.createPrivateIps([{ subnetId: env.config.subnets.find((s) => s.name === 'worker-subnet')!.id, ipAddress: '192.168.10.41' }]);

    for (const ip of ['192.168.10.40', '192.168.10.41']) {
      const e = (await env.other.createServers(serverBody(env, { name: 'b' }, { ip })).catch((x: unknown) => x)) as { code: string; message: string };
      expect(e.code).toBe('Ecs.0010');
      expect(e.message).toContain(ip);
      for (const id of [aServer.id, portId, pip!.id, env.config.projects[0]!.id]) expect(e.message).not.toContain(id);
      const v = (await env.other.createPrivateIps([{ subnetId: env.config.subnets.find((s) => s.name === 'worker-subnet')!.id, ipAddress: ip }]).catch((x: unknown) => x)) as { code: string; message: string };
      // CreatePrivateip answers the VPC code: 409 VPC.0701 (VPC error codes, vpc_api_0003).
      expect([(v as unknown as { status: number }).status, v.code]).toEqual([409, 'VPC.0701']);
      for (const id of [aServer.id, portId, pip!.id]) expect(v.message).not.toContain(id);
    }
    // The owner still learns which of its own resources holds the address.
    const own = (await env.client.createServers(serverBody(env, { name: 'c' }, { ip: '192.168.10.40' })).catch((x: unknown) => x)) as { message: string };
    expect(own.message).toContain(aServer.id);
  });

  it('another project\'s server, volume, job and port ids are 404 to a project, with nothing about the owner', async () => {
    env = await setup();
    const a = await env.client.createServers(serverBody(env));
    settle(env);
    const vid = env.hcs.hypervisor.server(a.serverIds[0]!)!.volumes[1]!.volumeId;
    const p1 = env.config.projects[1]!.id;
    const probes: [string, string][] = [
      ['GET', `/v1/${p1}/cloudservers/${a.serverIds[0]}`],
      ['GET', `/v1/${p1}/jobs/${a.job_id}`],
      ['GET', `/v2/${p1}/cloudvolumes/${vid}`],
      ['DELETE', `/v2/${p1}/cloudvolumes/${vid}`],
    ];
    for (const [method, path] of probes) {
      const res = await (env.other as unknown as { raw(m: string, p: string): Promise<{ status: number; body: string }> }).raw(method, path);
      // A job of another project cannot be obtained: 400 Common.0011 (ecs_07_0002), like an unknown one.
      expect(res.status, path).toBe(path.includes('/jobs/') ? 400 : 404);
      expect(res.body).not.toContain(env.config.projects[0]!.id);
    }
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/index.js';
import { serverBody, settle, setup } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mock-hcs persistence (HCS-6)', () => {
  it('state and pending transitions survive a restart from the data file', async () => {
    const dataFile = join(dir, 'cloud.json');
    const env1 = await setup({ dataFile });
    const c = await env1.client.createServers(serverBody(env1, {}, { ip: '192.168.10.40' }), 'tok-1');
    const id = c.serverIds[0]!;
    const pd = (await env1.client.createVolume({ volume: { name: 'pd', size: 10, volume_type: 'SSD', availability_zone: 'az1', metadata: { hostname: 'worker-0', slot: '0' } } })).volume_ids[0]!;
    settle(env1, 10_000); // the volume is available, the server still building
    expect((await env1.client.showServer(id))?.status).toBe('BUILD');
    env1.hcs.hypervisor.format(pd, 'xfs', 'data');
    env1.hcs.hypervisor.writeFile(pd, 'etcd/member', 'abc');
    const stoppedAt = env1.clock.now();
    await env1.hcs.close();
    // Closing cancels the cloud's timers: nothing happens to the closed instance any more.
    env1.clock.advanceBy(600_000);
    expect(JSON.parse(readFileSync(dataFile, 'utf8')).servers[id].status).toBe('BUILD');

    const env2 = await setup({ dataFile, clock: new VirtualClock(stoppedAt) });
    try {
      const s = await env2.client.showServer(id);
      expect(s?.status).toBe('BUILD');
      expect(s?.addresses[env2.config.vpcs[0]!.id]?.[0]?.addr).toBe('192.168.10.40');
      expect(env2.hcs.hypervisor.readFile(pd, 'etcd/member')).toBe('abc');
      expect(env2.hcs.hypervisor.volume(pd)?.fs).toMatchObject({ fsType: 'xfs', label: 'data' });
      // The IP index was rebuilt, the client token remembered.
      const conflict = await env2.client.createServers(serverBody(env2, { name: 'other' }, { ip: '192.168.10.40' })).catch((e: unknown) => e);
      expect((conflict as { code: string }).code).toBe('Ecs.0010');
      expect(await env2.client.createServers(serverBody(env2, {}, { ip: '192.168.10.40' }), 'tok-1')).toEqual(c);
      // The pending build was re-scheduled at its stored due time.
      settle(env2);
      expect((await env2.client.showServer(id))?.status).toBe('ACTIVE');
      expect((await env2.client.showJob(c.job_id)).status).toBe('SUCCESS');
      // New ids do not collide with the ones from the first run (same seed).
      const c2 = await env2.client.createServers(serverBody(env2, { name: 'second' }));
      expect(c2.serverIds[0]).not.toBe(id);
      await env2.hcs.flush();
      const saved = JSON.parse(readFileSync(dataFile, 'utf8'));
      expect(Object.keys(saved.servers)).toHaveLength(2);
    } finally {
      await env2.hcs.close();
    }
  });

  it('refuses a data file of an unknown version', async () => {
    const dataFile = join(dir, 'bad.json');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(dataFile, JSON.stringify({ version: 99 }));
    await expect(setup({ dataFile })).rejects.toThrow(/version 99/);
  });
});

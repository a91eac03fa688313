import { describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { serverBody, settle, setup } from './helpers.js';

describe('mock-hcs at bench scale', () => {
  it('builds, lists and deletes 1,000 servers', async () => {
    const config = defaultCloudConfig();
    config.subnets[1]!.cidr = '192.168.16.0/20';
    config.subnets[1]!.gateway_ip = '192.168.16.1';
    const env = await setup({ config, ...(process.env.SCALE_DATA_FILE ? { dataFile: process.env.SCALE_DATA_FILE } : {}) });
    try {
      const t0 = performance.now();
      const ids: string[] = [];
      for (let i = 0; i < 1000; i++) {
        ids.push(...(await env.client.createServers(serverBody(env, { name: `n-${i}`, data_volumes: [] }))).serverIds);
      }
      settle(env);
      const all = await env.client.listServers({ status: 'ACTIVE' });
      expect(all).toHaveLength(1000);
      expect(new Set(all.flatMap((s) => Object.values(s.addresses).flat().map((a) => a.addr))).size).toBe(1000);
      for (let i = 0; i < 1000; i += 100) await env.client.deleteServers(ids.slice(i, i + 100));
      settle(env);
      expect(await env.client.listServers()).toEqual([]);
      expect(env.hcs.hypervisor.listVolumes()).toEqual([]);
      const ms = performance.now() - t0;
      // Generous bound: catches accidental quadratic behaviour, not machine speed.
      expect(ms).toBeLessThan(20_000);
    } finally {
      await env.hcs.close();
    }
  });
});

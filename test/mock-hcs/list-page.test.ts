import { afterEach, describe, expect, it } from 'vitest';
import type { CloudEngine } from '../../mock-hcs/src/cloud.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

describe('HCS-1: mock-hcs ListServers pages without a filter (issue 13, scale: a page costs O(limit))', () => {
  it('every page of the ordered index equals the same page of the full scan, with the total count, through deletes', async () => {
    env = await setup();
    const { client } = env;
    const engine = env.hcs.hypervisor as unknown as CloudEngine; // the hypervisor view is the engine itself
    const p = client.projectId;
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push((await client.createServers(serverBody(env, { name: `pg-${i}`, data_volumes: [] }))).serverIds[0]!);
    const check = (): void => {
      const all = engine.serversOf(p).map((s) => s.id);
      for (const limit of [1, 5, 7, 25]) {
        for (let page = 1; page <= Math.ceil(all.length / limit) + 1; page++) {
          const got = engine.serversPage(p, (page - 1) * limit, limit);
          expect(got.total).toBe(all.length);
          expect(got.servers.map((s) => s.id), `limit ${limit} page ${page}`).toEqual(all.slice((page - 1) * limit, page * limit));
        }
      }
    };
    check();
    // Over HTTP: the unfiltered route answers the same pages and count as the scan.
    const page2 = await client.listServers({ limit: 5, offset: 2 });
    expect(page2.map((s) => s.id)).toEqual(engine.serversOf(p).slice(5, 10).map((s) => s.id));
    await client.deleteServers([ids[0]!, ids[7]!, ids[22]!], { deleteVolume: true });
    settle(env);
    expect(engine.serversOf(p)).toHaveLength(20);
    check();
    expect(engine.serversPage('no-such-project', 0, 10)).toEqual({ total: 0, servers: [] });
  });
});

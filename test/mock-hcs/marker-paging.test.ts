import { afterEach, describe, expect, it } from 'vitest';
import { serverBody, setup, type Env } from './helpers.js';

type ErrJson = { error: { code: string; message: string } };

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

// Issue 24: ListServersDetails and ListVolumes ignored `marker`, so a client paging by marker got the
// first page forever. Each loop below is bounded: it fails instead of spinning if a page repeats.
describe('paging by marker ends (ECS ListServersDetails, EVS ListVolumes)', () => {
  it('ListServersDetails: marker = last server id of the page; pages cover every server once, then an empty page', { timeout: 30_000 }, async () => {
    env = await setup();
    const p = env.client.projectId;
    const ids = (await env.client.createServers(serverBody(env, { count: 7 }))).serverIds;
    const seen: string[] = [];
    let marker = '';
    for (let round = 0; round < 10; round++) {
      const r = await env.req('GET', `/v1/${p}/cloudservers/detail?limit=3${marker ? `&marker=${marker}` : ''}`);
      const page = (r.json as { count: number; servers: { id: string }[] }).servers.map((s) => s.id);
      expect((r.json as { count: number }).count).toBe(7);
      if (page.length === 0) break;
      expect(seen).not.toContain(page[0]);
      seen.push(...page);
      marker = page[page.length - 1]!;
    }
    expect(seen.sort()).toEqual([...ids].sort());
    // Offset (a page number from 1) is kept as documented; an unknown marker is a 400 naming the parameter.
    const byOffset = await env.req('GET', `/v1/${p}/cloudservers/detail?limit=3&offset=3`);
    expect((byOffset.json as { servers: unknown[] }).servers).toHaveLength(1);
    const bad = await env.req('GET', `/v1/${p}/cloudservers/detail?marker=00000000-0000-4000-8000-000000000000`);
    expect([bad.status, (bad.json as ErrJson).error.code]).toEqual([400, 'Ecs.0005']);
    expect((bad.json as ErrJson).error.message).toContain('marker');
  });

  it('ListVolumes: marker pages end; volumes_links carries the next page while more remain, and is absent on the last', { timeout: 30_000 }, async () => {
    env = await setup();
    const p = env.client.projectId;
    await env.req('POST', `/v2.1/${p}/cloudvolumes`, { volume: { size: 10, volume_type: 'SSD', availability_zone: 'az1', count: 5 } });
    const seen: string[] = [];
    let path = `/v2/${p}/cloudvolumes/detail?limit=2`;
    let pages = 0;
    for (; pages < 10; pages++) {
      const r = await env.req('GET', path);
      const body = r.json as { count: number; volumes: { id: string }[]; volumes_links?: { href: string; rel: string }[] };
      expect(body.count).toBe(5);
      const page = body.volumes.map((v) => v.id);
      expect(seen).not.toContain(page[0]);
      seen.push(...page);
      if (!body.volumes_links) break;
      expect(body.volumes_links).toEqual([{ rel: 'next', href: `/v2/${p}/cloudvolumes/detail?limit=2&marker=${page[page.length - 1]}` }]);
      path = body.volumes_links[0]!.href;
    }
    expect(pages).toBe(2); // 2 + 2 + 1
    expect(new Set(seen).size).toBe(5);
    // offset is kept (items to skip); marker and offset combine as "after the marker, skip offset".
    const off = await env.req('GET', `/v2/${p}/cloudvolumes/detail?offset=4`);
    expect((off.json as { volumes: { id: string }[] }).volumes.map((v) => v.id)).toEqual([seen[4]]);
    const both = await env.req('GET', `/v2/${p}/cloudvolumes/detail?marker=${seen[0]}&offset=1&limit=1`);
    expect((both.json as { volumes: { id: string }[] }).volumes.map((v) => v.id)).toEqual([seen[2]]);
    const bad = await env.req('GET', `/v2/${p}/cloudvolumes/detail?marker=nope`);
    expect([bad.status, (bad.json as ErrJson).error.code]).toEqual([400, 'EVS.5400']);
  });
});

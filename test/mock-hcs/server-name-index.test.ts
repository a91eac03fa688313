import { afterEach, describe, expect, it } from 'vitest';
import type { CloudEngine } from '../../mock-hcs/src/cloud.js';
import { fuzzyName } from '../../mock-hcs/src/routes/ecs.js';
import { SeededRng } from '../../src/core/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

/** Server names from a small alphabet (many shared substrings), with the characters ECS allows. */
const NAME_CHARS = ['a', 'b', 'c', '-', '_', '.', '0', '1', 'W', '雪'];
/** Pattern characters: the name characters plus ones that are special in a regular expression. */
const PATTERN_CHARS = [...NAME_CHARS, '(', '[', '\\', '*', '+', '?', '^', '$', '|', '/', ' '];

function word(rng: SeededRng, min: number, max: number, chars: string[]): string {
  let s = '';
  for (let n = min + rng.int(max - min + 1); n > 0; n--) s += chars[rng.int(chars.length)];
  return s;
}

describe('mock-hcs ListServers name filter (servers indexed by name)', () => {
  it('lists exactly the servers a scan with the fuzzy pattern finds, in the same order, through creates, deletes and a state restore', async () => {
    env = await setup();
    const rng = new SeededRng(4242);
    const { client } = env;
    const engine = env.hcs.hypervisor as unknown as CloudEngine; // the hypervisor view is the engine itself
    const p = client.projectId;
    const create = async (n: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const name = rng.next() < 0.2 ? `node-${word(rng, 1, 3, NAME_CHARS)}` : word(rng, 1, 12, NAME_CHARS);
        ids.push((await client.createServers(serverBody(env, { name, data_volumes: [] }))).serverIds[0]!);
      }
      return ids;
    };
    const check = async (label: string): Promise<void> => {
      const all = await client.listServers();
      const names = all.map((s) => s.name);
      const patterns = [
        ...names.slice(0, 20),
        ...names.slice(0, 20).map((n) => n.slice(rng.int(Math.max(1, n.length - 2)))),
        ...names.slice(0, 20).map((n) => [...n].map((c) => (rng.next() < 0.25 ? '.' : c)).join('')),
        ...Array.from({ length: 60 }, () => word(rng, 1, 8, PATTERN_CHARS)),
        'node-',
        '...',
        'zzz',
      ];
      for (const pattern of patterns) {
        const re = fuzzyName(pattern);
        const expected = all.filter((s) => re.test(s.name)).map((s) => s.id);
        const listed = (await client.listServers({ name: pattern })).map((s) => s.id);
        expect(listed, `${label}: name=${JSON.stringify(pattern)}`).toEqual(expected);
        // With other filters and paging as well.
        const page = (await client.listServers({ name: pattern, status: 'ACTIVE', limit: 2, offset: 2 })).map((s) => s.id);
        expect(page, `${label}: name=${JSON.stringify(pattern)} page 2`).toEqual(all.filter((s) => re.test(s.name) && s.status === 'ACTIVE').slice(2, 4).map((s) => s.id));
        // The index narrows a pattern with a literal part of 3 characters down to a superset of the matches.
        const candidates = engine.serverNameCandidates(p, pattern);
        if (pattern.split('.').some((part) => part.length >= 3)) {
          expect(candidates, pattern).toBeDefined();
          expect(candidates!.map((s) => s.id)).toEqual(all.filter((s) => candidates!.some((c) => c.id === s.id)).map((s) => s.id));
          expect(candidates!.map((s) => s.id)).toEqual(expect.arrayContaining(expected));
        } else {
          expect(candidates, pattern).toBeUndefined();
        }
      }
      // An exact name usually has a handful of candidates, not every server.
      const full = names.find((n) => n.length >= 8);
      if (full) expect(engine.serverNameCandidates(p, full)!.length).toBeLessThan(all.length / 2);
    };
    const first = await create(70);
    settle(env);
    await check('after creates');
    await client.deleteServers(first.filter((_, i) => i % 3 === 0));
    settle(env);
    await check('after deletes');
    await env.hcs.restoreState(env.hcs.dumpState());
    await check('after a state restore');
    await create(20);
    await check('after more creates (some still BUILD)');
    // Another project's servers are never listed.
    expect(await env.other.listServers({ name: 'node-' })).toEqual([]);
  });
});

/**
 * EVS ListVolumes with a `metadata` filter takes its candidates from an
 * index of volumes by metadata pair (mock-hcs/src/state.ts
 * volumesWithMetadata) instead of scanning the project (docs/performance.md:
 * the scan grew with the fleet). The answer must be the scan's: after random
 * creates, metadata edits (set, change, remove a key), attaches, deletes and a
 * restore, every filter lists the same volumes in the same order as filtering
 * every volume of the project.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CloudEngine } from '../../mock-hcs/src/cloud.js';
import { renderVolume } from '../../mock-hcs/src/render.js';
import type { VolumeRec } from '../../mock-hcs/src/state.js';
import { SeededRng } from '../../src/core/index.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

let env: Env;
afterEach(async () => {
  await env?.hcs.close();
});

const KEYS = ['hcs.io/cluster', 'hcs.io/hostname', 'hcs.io/slot', 'other'] as const;
const VALUES = ['a', 'b', 'c'] as const;

describe('EVS metadata filter through the metadata index', () => {
  it('lists what a scan of the project lists, after random creates, edits, attaches, deletes and a restore', async () => {
    env = await setup();
    const engine = env.hcs.hypervisor as unknown as CloudEngine;
    const p = env.client.projectId;
    const rng = new SeededRng(41);
    const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
    const meta = (): Record<string, string> => Object.fromEntries(KEYS.filter(() => rng.next() < 0.6).map((k) => [k, pick(VALUES)]));
    const { serverIds } = await env.client.createServers(serverBody(env));
    settle(env);
    const live = (): VolumeRec[] => engine.volumesOf(p).filter((v) => !v.bootable);
    let checks = 0;
    const check = async (label: string): Promise<void> => {
      for (let i = 0; i < 4; i++) {
        const filter = Object.fromEntries(KEYS.filter(() => rng.next() < 0.5).map((k) => [k, pick(VALUES)]));
        if (Object.keys(filter).length === 0) continue;
        const q = encodeURIComponent(JSON.stringify(filter));
        const res = await env.req('GET', `/v2/${p}/cloudvolumes/detail?metadata=${q}`);
        expect(res.status, label).toBe(200);
        const scan = engine.volumesOf(p).filter((v) => Object.entries(filter).every(([k, x]) => Object.hasOwn(v.metadata, k) && v.metadata[k] === x));
        expect(res.body, `${label}: ${JSON.stringify(filter)}`).toBe(JSON.stringify({ count: scan.length, volumes: scan.map((v) => renderVolume(v)) }));
        checks++;
      }
    };
    for (let step = 0; step < 150; step++) {
      const vols = live();
      const r = rng.next();
      if (r < 0.3 || vols.length < 3) {
        await env.client.createVolume({ volume: { name: `v-${step}`, size: 10, volume_type: 'SSD', availability_zone: 'az1', metadata: meta() } });
      } else if (r < 0.65) {
        const v = pick(vols);
        const change = Object.fromEntries(KEYS.filter(() => rng.next() < 0.5).map((k) => [k, rng.next() < 0.3 ? null : pick(VALUES)]));
        if (Object.keys(change).length === 0) continue;
        if (v.status === 'deleting') continue;
        await env.client.updateVolume(v.id, { metadata: change });
      } else if (r < 0.8) {
        const v = pick(vols.filter((x) => x.status === 'available'));
        if (v) await env.client.attachVolume(serverIds[0]!, v.id);
      } else if (r < 0.95) {
        const v = pick(vols.filter((x) => x.status === 'available'));
        if (v) await env.client.deleteVolume(v.id);
      } else {
        await env.hcs.restoreState(env.hcs.dumpState());
      }
      if (rng.next() < 0.5) settle(env);
      await check(`step ${step}`);
    }
    expect(checks).toBeGreaterThan(400);
  });
});

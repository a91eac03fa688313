import { afterEach, describe, expect, it } from 'vitest';
import type { HCSMachineConfigPool } from '../../src/product/api/hcs.js';
import { NS, POOL, createHarness, nodeReadyStatus, type Harness } from '../provider/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const pdMount = (h: Harness) => h.guests.mounts('worker-1').find((m) => m.mountPath === '/var/cpaas');

describe('mount options', () => {
  it('DISK-5: a mountOptions change is accepted but the running node keeps its mount; the replacement mounts with the new options and keeps the data', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'True')).toBe(true);
    expect(pdMount(h)).toMatchObject({ persistent: true, options: ['defaults', 'nofail'] });
    const volumeId = pdMount(h)!.volumeId;
    h.guests.writeFile('worker-1', '/var/cpaas/state', 'keep me');

    // Edit the pool: only mountOptions of the accepted disk changes (allowed, DISK-4 does not apply).
    await h.env.mgmt.patch<HCSMachineConfigPool>({ kind: 'HCSMachineConfigPool', namespace: NS, name: POOL }, 'json', [
      { op: 'add', path: '/spec/configs/0/persistentDisks/0/mountOptions', value: ['noatime', 'nodiratime'] },
    ]);
    await h.env.sim.advance(5 * 60_000);
    const pool = await h.pool();
    expect(pool.status?.conditions?.find((c) => c.type === 'DisksAccepted')?.status ?? 'True').toBe('True');
    expect(pdMount(h)?.options).toEqual(['defaults', 'nofail']); // no remount of a running node

    // Replacement (maxSurge 0: the old machine goes first, the new one takes the same entry).
    await h.deleteMachine('md-0-aaaaa');
    await h.createMachine('md-0-bbbbb');
    expect(await h.runUntil(async () => h!.guests.status('worker-1')?.phase === 'Joined' && h!.guests.serverOf('worker-1') !== undefined && pdMount(h!)?.options?.[0] === 'noatime')).toBe(true);
    expect(pdMount(h)).toMatchObject({ volumeId, options: ['noatime', 'nodiratime', 'nofail'] });
    expect(h.guests.readFile('worker-1', '/var/cpaas/state')).toBe('keep me');
  });
});

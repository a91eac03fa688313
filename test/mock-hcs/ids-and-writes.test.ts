/**
 * Ids are unique across kinds and restarts; tasks are keyed by (kind, id,
 * purpose); a write whose persist fails changes nothing (HCS-6, issue 13).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/index.js';
import { TaskScheduler } from '../../mock-hcs/src/services/scheduler.js';
import { Store } from '../../mock-hcs/src/state.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-ids-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const workerSubnet = (env: Env) => env.config.subnets.find((s) => s.name === 'worker-subnet')!.id;
const volumeBody = (name: string) => ({ volume: { name, size: 10, volume_type: 'SSD', availability_zone: 'az1' } });

/** Every id of every kind in a data-file document. */
function allIds(doc: { servers: Record<string, { id: string; nics: { portId: string }[] }>; volumes: Record<string, { id: string }>; ports: Record<string, { id: string }> }): string[] {
  return [
    ...Object.values(doc.servers).flatMap((s) => [s.id, ...s.nics.map((n) => n.portId)]),
    ...Object.values(doc.volumes).map((v) => v.id),
    ...Object.values(doc.ports).map((p) => p.id),
  ];
}

describe('mock-hcs ids (HCS-6)', () => {
  it('a restarted cloud never gives a new volume the id of an existing private IP (same seed, same data file)', async () => {
    const dataFile = join(dir, 'cross-kind.json');
    const env1 = await setup({ dataFile });
    // The private IP takes the first uuid of the seed's id stream.
    const [pip] = await env1.client.createPrivateIps([{ subnetId: workerSubnet(env1) }]);
    const at = env1.clock.now();
    await env1.hcs.close();

    // Before the fix the restarted stream began again and a volume id was only checked against volumes:
    // the first volume of the new process got the private IP's id.
    const env2 = await setup({ dataFile, clock: new VirtualClock(at) });
    try {
      const { volume_ids } = await env2.client.createVolume(volumeBody('pd-0'));
      expect(volume_ids[0]).not.toBe(pip!.id);
      const c = await env2.client.createServers(serverBody(env2));
      settle(env2);
      await env2.hcs.flush();
      const doc = JSON.parse(readFileSync(dataFile, 'utf8'));
      const ids = allIds(doc);
      expect(new Set(ids).size).toBe(ids.length);
      expect(doc.idEpoch).toBe(1);
      // The jobs of both creates finished: no task of one resource was cancelled by another's.
      expect((await env2.client.showServer(c.serverIds[0]!))?.status).toBe('ACTIVE');
      expect((await env2.client.showVolume(volume_ids[0]!))?.status).toBe('available');
    } finally {
      await env2.hcs.close();
    }
  });

  it('a restored document whose ids the id stream would produce again: new ids skip every id in use, whatever its kind', async () => {
    const a = await setup({ seed: 7 });
    const [pip] = await a.client.createPrivateIps([{ subnetId: workerSubnet(a) }]);
    const dump = a.hcs.dumpState();
    await a.hcs.close();
    // A fresh cloud of the same seed is at the start of the same stream; restoring does not restart it.
    const b = await setup({ seed: 7 });
    try {
      await b.hcs.restoreState(dump);
      const { volume_ids } = await b.client.createVolume(volumeBody('pd-1'));
      expect(volume_ids[0]).not.toBe(pip!.id);
      expect(b.hcs.hypervisor.volume(volume_ids[0]!)).toBeDefined();
    } finally {
      await b.hcs.close();
    }
  });

  it('tasks are keyed by resource kind: cancelling a server\'s tasks leaves a volume with the same id alone', async () => {
    const clock = new VirtualClock();
    const store = await Store.open();
    const ran: string[] = [];
    const tasks = new TaskScheduler(store, clock, () => undefined);
    tasks.register(['server.build'], { finish: (t) => ran.push(`server ${t}`), fail: () => undefined });
    tasks.register(['volume.create'], { finish: (t) => ran.push(`volume ${t}`), fail: () => undefined });
    tasks.start();
    tasks.schedule('server.build', 'same-id', 1000);
    tasks.schedule('volume.create', 'same-id', 1000);
    tasks.cancel('server', 'same-id');
    clock.advanceBy(2000);
    expect(ran).toEqual(['volume same-id']);
    expect(Object.keys(store.data.tasks)).toHaveLength(0);
  });
});

describe('mock-hcs all-or-nothing writes (HCS-6)', () => {
  it('a create whose persist fails answers 500 and changes nothing; the retry after the fix succeeds once', async () => {
    const sub = join(dir, 'gone');
    mkdirSync(sub);
    const dataFile = join(sub, 'cloud.json');
    const env = await setup({ dataFile, seed: 3 });
    try {
      await env.client.createVolume(volumeBody('before'));
      settle(env);
      await env.hcs.flush();
      const before = env.hcs.dumpState().data as { volumes: Record<string, unknown>; jobs: Record<string, unknown> };
      rmSync(sub, { recursive: true }); // the data file's directory disappears
      for (let i = 0; i < 2; i++) {
        const r = await env.req('POST', `/v2/${env.config.projects[0]!.id}/cloudvolumes`, volumeBody('lost'));
        expect(r.status).toBe(500);
        const err = (r.json as { error: { code: string; message: string } }).error;
        expect(err.message).toContain(dataFile);
        expect(err.message).toMatch(/not made/);
      }
      const after = env.hcs.dumpState().data as typeof before;
      expect(Object.keys(after.volumes)).toEqual(Object.keys(before.volumes));
      expect(Object.keys(after.jobs)).toEqual(Object.keys(before.jobs));
      expect(env.hcs.hypervisor.listVolumes().map((v) => v.name)).toEqual(['before']);
      // A server create and a delete fail the same way and leave nothing behind.
      const s = await env.req('POST', `/v1/${env.config.projects[0]!.id}/cloudservers`, serverBody(env));
      expect(s.status).toBe(500);
      expect(env.hcs.hypervisor.listServers()).toHaveLength(0);
      const vid = Object.keys(before.volumes)[0]!;
      const d = await env.req('DELETE', `/v2/${env.config.projects[0]!.id}/cloudvolumes/${vid}`);
      expect(d.status).toBe(500);
      expect(env.hcs.hypervisor.volume(vid)?.status).toBe('available');

      mkdirSync(sub); // fixed: the retry is safe and makes exactly one volume
      const ok = await env.client.createVolume(volumeBody('retried'));
      expect(ok.volume_ids).toHaveLength(1);
      settle(env);
      await env.hcs.flush();
      const names = Object.values(JSON.parse(readFileSync(dataFile, 'utf8')).volumes as Record<string, { name: string }>).map((v) => v.name).sort();
      expect(names).toEqual(['before', 'retried']);
      expect(env.events.all().some((e) => e.type === 'store.rolled-back')).toBe(true);
    } finally {
      mkdirSync(sub, { recursive: true });
      await env.hcs.close();
    }
  });

  it('a transition undone by a failed write runs again from the durable state', async () => {
    const sub = join(dir, 'flaky');
    mkdirSync(sub);
    const dataFile = join(sub, 'cloud.json');
    const env = await setup({ dataFile, seed: 4 });
    try {
      const c = await env.client.createServers(serverBody(env));
      rmSync(sub, { recursive: true });
      settle(env); // the build completes in memory; its background write fails
      const r = await env.req('POST', `/v2/${env.config.projects[0]!.id}/cloudvolumes`, volumeBody('x'));
      expect(r.status).toBe(500);
      // Back to the durable state: the server is building again, and its task is armed.
      expect(env.hcs.hypervisor.server(c.serverIds[0]!)?.status).toBe('BUILD');
      mkdirSync(sub);
      settle(env);
      await env.hcs.flush();
      expect(env.hcs.hypervisor.server(c.serverIds[0]!)?.status).toBe('ACTIVE');
      expect(JSON.parse(readFileSync(dataFile, 'utf8')).servers[c.serverIds[0]!].status).toBe('ACTIVE');
    } finally {
      mkdirSync(sub, { recursive: true });
      await env.hcs.close();
    }
  });
});

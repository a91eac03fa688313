/**
 * Negative tests of the POOL-5 invariant (src/harness/scenario/pool-status.ts, issue 37): a provider whose pool
 * status keeps one field stale — the bug class that went unnoticed for 76 refreshes in an unseen catalogue — fails a
 * library scenario on POOL-5, one test per field the provider writes. The bug is planted in this test's testbed
 * only: every status write of an HCSMachineConfigPool carries the field as it was stored before (the provider's
 * refresh "forgets" to update it).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../src/core/kube/client.js';
import type { HCSMachineConfigPool } from '../../src/product/api/hcs.js';
import { expectedPhase, WALL_SKEW_MS } from '../../src/harness/scenario/pool-status.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult, type TestbedFactory } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type Testbed } from '../../src/harness/testbed/index.js';
import { InvariantMonitor } from '../../src/harness/scenario/invariants.js';
import { runningCluster } from '../scenario/fixtures.js';

type Pool = HCSMachineConfigPool;
type Field = 'volumeId' | 'phase' | 'attachedServerId' | 'lastTransitionTime' | 'available' | 'total';

/** `next`'s status with `field` as `stored` has it (per disk by hostname and slot, per entry by hostname). */
function keepStale(stored: Pool | undefined, next: Pool, field: Field): Pool {
  if (!stored?.status || !next.status) return next;
  const st = structuredClone(next.status);
  if (field === 'available' || field === 'total') {
    if (stored.status[field] === undefined) delete st[field];
    else st[field] = stored.status[field];
    return { ...next, status: st };
  }
  for (const e of st.entries ?? []) {
    const old = stored.status.entries?.find((x) => x.hostname === e.hostname);
    for (const d of e.persistentDisks ?? []) {
      const od = old?.persistentDisks?.find((x) => x.slot === d.slot) as Record<string, unknown> | undefined;
      const rec = d as unknown as Record<string, unknown>;
      if (!od || od[field] === undefined) delete rec[field];
      else rec[field] = od[field];
    }
  }
  return { ...next, status: st };
}

function staleField(field: Field): TestbedFactory {
  const base = embeddedTestbedFactory({});
  return async (seed) => {
    const tb = (await base(seed)) as Testbed;
    const mgmt = tb.env.mgmt as KubeClient;
    for (const m of ['updateStatus', 'updateStatusShared'] as const) {
      const real = mgmt[m]?.bind(mgmt);
      if (!real) continue;
      (mgmt as unknown as Record<string, unknown>)[m] = async (obj: Pool, opts?: unknown) => {
        if (obj.kind !== 'HCSMachineConfigPool') return (real as (o: unknown, p?: unknown) => Promise<unknown>)(obj, opts);
        const stored = await mgmt.get<Pool>({ kind: 'HCSMachineConfigPool', namespace: obj.metadata.namespace, name: obj.metadata.name });
        return (real as (o: unknown, p?: unknown) => Promise<unknown>)(keepStale(stored, obj, field), opts);
      };
    }
    return tb;
  };
}

/** The POOL-5 messages of one check. */
async function pool5(mon: InvariantMonitor): Promise<string[]> {
  return (await mon.check()).filter((v) => v.rule === 'POOL-5').map((v) => v.message);
}

/** A running worker cluster whose provider is down (it would rewrite the status), its pool, then closed. */
async function withProviderDown(fn: (tb: Awaited<ReturnType<typeof runningCluster>>, pool: Pool) => Promise<void>): Promise<void> {
  const tb = await runningCluster();
  try {
    tb.world.crash(['provider']);
    await fn(tb, (await tb.env.mgmt.list<Pool>('HCSMachineConfigPool'))[0]!);
  } finally {
    await tb.close();
  }
}

async function run(file: string, factory: TestbedFactory): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), file);
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), factory);
}

describe('POOL-5: the pool status shows the runtime state of every entry and disk', () => {
  const cases: [Field, RegExp][] = [
    ['attachedServerId', /^pool cpaas-system\/demo-worker-pool entry demo-worker-\d slot 0: status\.entries\[demo-worker-\d\]\.persistentDisks\[slot 0\]\.attachedServerId is null, but the cloud and the pool's spec say "[0-9a-f-]+" \(for \d+s\)$/],
    ['phase', /^pool cpaas-system\/demo-worker-pool entry demo-worker-\d slot 0: status\.entries\[demo-worker-\d\]\.persistentDisks\[slot 0\]\.phase is "\w+", but the cloud and the pool's spec say "\w+" \(for \d+s\)$/],
    ['volumeId', /persistentDisks\[slot 0\]\.volumeId is null, but the cloud and the pool's spec say "[0-9a-f-]+" \(for \d+s\)$/],
    ['lastTransitionTime', /^pool cpaas-system\/demo-worker-pool entry demo-worker-\d slot 0: phase went from \w+ to \w+ but status\.entries\[demo-worker-\d\]\.persistentDisks\[slot 0\]\.lastTransitionTime stayed /],
    ['available', /^pool cpaas-system\/demo-worker-pool: status\.available is \d+, but the cloud and the pool's spec say \d+ \(for \d+s\)$/],
  ];
  for (const [field, why] of cases) {
    it(`a provider whose refresh leaves ${field} stale fails scale-out-workers with POOL-5`, { timeout: 180_000 }, async () => {
      const r = await run('scale-out-workers.yaml', staleField(field));
      expect(r.ok, 'the planted bug must fail the scenario').toBe(false);
      const v = r.violations.filter((x) => x.rule === 'POOL-5');
      expect(v.map((x) => x.message), `POOL-5 violations (got: ${r.violations.map((x) => `${x.rule}: ${x.message}`).join(' | ') || 'none'}; failed step: ${r.steps.find((s) => !s.ok)?.error})`).not.toHaveLength(0);
      expect(v.some((x) => why.test(x.message)), v.map((x) => x.message).join('\n')).toBe(true);
    });
  }

  it('entries[].machine naming another machine than the holder, a disk mountPath and total off the spec, are violations once they last 60 s', { timeout: 60_000 }, async () => {
    // A stale release is also caught by the library's own steps (status.available checks) and a stale binding by POOL-4;
    // here the invariant alone: the provider is down (it would rewrite the status), the status is written by hand.
    const tb = await runningCluster();
    try {
      const mon = new InvariantMonitor(tb.world, () => tb.events.all());
      expect(await mon.check()).toEqual([]);
      tb.world.crash(['provider']);
      const pool = (await tb.env.mgmt.list<Pool>('HCSMachineConfigPool'))[0]!;
      const holder = pool.status!.entries!.find((e) => e.hostname === 'demo-worker-2')!.machine;
      const status = structuredClone(pool.status!);
      status.entries!.find((e) => e.hostname === 'demo-worker-2')!.machine = 'demo-md-0-gone';
      status.total = 7;
      status.entries!.find((e) => e.hostname === 'demo-worker-3')!.persistentDisks![0]!.mountPath = '/var/elsewhere';
      await tb.env.mgmt.updateStatus({ ...pool, status });
      expect((await mon.check()).filter((v) => v.rule === 'POOL-5')).toEqual([]);
      await tb.sim.advance(61_000);
      const msgs = (await pool5(mon)).sort();
      expect(msgs).toEqual([
        'pool cpaas-system/demo-worker-pool entry demo-worker-3 slot 0: status.entries[demo-worker-3].persistentDisks[slot 0].mountPath is "/var/elsewhere", but the cloud and the pool\'s spec say "/var/cpaas" (for 61s)',
        `pool cpaas-system/demo-worker-pool: status.entries[demo-worker-2].machine is "demo-md-0-gone", but the cloud and the pool's spec say "${holder}" (for 61s)`,
        'pool cpaas-system/demo-worker-pool: status.total is 7, but the cloud and the pool\'s spec say 3 (for 61s)',
      ]);
    } finally {
      await tb.close();
    }
  });

  it('no false positive on an outside provider (CI outside-provider): a provider that never writes mountPath or lastTransitionTime is not held to them; one that does is', { timeout: 60_000 }, async () =>
    withProviderDown(async (tb, pool) => {
      // A minimal provider's status: slot, volumeId, phase, attachedServerId only (test/external-provider-python).
      const minimal = structuredClone(pool.status!);
      for (const e of minimal.entries ?? []) for (const d of e.persistentDisks ?? []) { const r = d as unknown as Record<string, unknown>; delete r.mountPath; delete r.lastTransitionTime; }
      const updated = await tb.env.mgmt.updateStatus({ ...pool, status: minimal });
      const fresh = new InvariantMonitor(tb.world, () => tb.events.all());
      await fresh.check();
      await tb.sim.advance(61_000);
      expect(await pool5(fresh)).toEqual([]);
      // The monitor that saw the full status (the provider writes mountPath) reports the dropped field.
      const seenFull = new InvariantMonitor(tb.world, () => tb.events.all());
      await tb.env.mgmt.updateStatus({ ...updated, status: pool.status });
      await seenFull.check();
      const cur = (await tb.env.mgmt.list<Pool>('HCSMachineConfigPool'))[0]!;
      await tb.env.mgmt.updateStatus({ ...cur, status: minimal });
      await seenFull.check();
      await tb.sim.advance(61_000);
      expect((await pool5(seenFull)).join('\n')).toMatch(/persistentDisks\[slot 0\]\.mountPath is null, but the cloud and the pool's spec say "\/var\/cpaas"/);
    }));

  it('a lastTransitionTime ahead of the run\'s clock: a violation on one clock, allowed up to WALL_SKEW_MS with a provider on its own clock', { timeout: 60_000 }, async () =>
    withProviderDown(async (tb, pool) => {
      const ahead = (ms: number): Pool['status'] => {
        const st = structuredClone(pool.status!);
        st.entries!.find((e) => e.hostname === 'demo-worker-1')!.persistentDisks![0]!.lastTransitionTime = new Date(Math.ceil((tb.clock.now() + ms) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
        return st;
      };
      const future = async (m: InvariantMonitor): Promise<string[]> => (await pool5(m)).filter((x) => / is in the future /.test(x));
      const cur = await tb.env.mgmt.updateStatus({ ...pool, status: ahead(5_000) });
      expect(await future(new InvariantMonitor(tb.world, () => tb.events.all()))).toHaveLength(1);
      expect(await future(new InvariantMonitor(tb.world, () => tb.events.all(), { stampSkewMs: WALL_SKEW_MS }))).toEqual([]);
      await tb.env.mgmt.updateStatus({ ...cur, status: ahead(WALL_SKEW_MS + 5_000) });
      expect(await future(new InvariantMonitor(tb.world, () => tb.events.all(), { stampSkewMs: WALL_SKEW_MS }))).toHaveLength(1);
    }));

  it('the phase words are the provider\'s documented ones', () => {
    expect(['creating', 'available', 'attaching', 'in-use', 'detaching', 'error_restoring', undefined].map(expectedPhase)).toEqual(['Creating', 'Available', 'Attaching', 'Attached', 'Detaching', 'Error', 'Pending']);
  });
});

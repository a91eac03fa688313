import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { Manager, Simulation, type Controller } from '../../src/core/runtime/index.js';

function recorder(name: string, log: string[], opts: { coalesce?: boolean; onReconcile?: (key: string) => void; requeueAfter?: number } = {}): Controller {
  return {
    name,
    ...(opts.coalesce ? { coalesce: true } : {}),
    async reconcile(key) {
      log.push(`${name}:${key}`);
      opts.onReconcile?.(key);
      return opts.requeueAfter ? { requeueAfter: opts.requeueAfter } : undefined;
    },
  };
}

describe('Manager', () => {
  it('runs work FIFO, deduplicates queued keys, and requeues after a delay on the clock', async () => {
    const clock = new VirtualClock(0);
    const m = new Manager({ clock });
    const log: string[] = [];
    m.register(recorder('a', log, { requeueAfter: 1000 }));
    m.enqueue('a', 'x');
    m.enqueue('a', 'y');
    m.enqueue('a', 'x');
    await m.drain();
    expect(log).toEqual(['a:x', 'a:y']);
    const sim = new Simulation(clock, m);
    await sim.advance(1000);
    expect(log).toEqual(['a:x', 'a:y', 'a:x', 'a:y']);
    expect(clock.now()).toBe(1000);
  });

  it('coalescing controllers run after all other work of the instant, once per burst', async () => {
    const clock = new VirtualClock(0);
    const m = new Manager({ clock });
    const log: string[] = [];
    // Each child reconcile "changes a child", which notifies the parent.
    m.register(recorder('child', log, { onReconcile: () => m.enqueue('parent', 'p') }));
    m.register(recorder('parent', log, { coalesce: true }));
    for (const k of ['1', '2', '3']) m.enqueue('child', k);
    await m.drain();
    expect(log).toEqual(['child:1', 'child:2', 'child:3', 'parent:p']);
    expect(m.reconcileStats()).toEqual({ child: 3, parent: 1 });
    // Wall time is measured per controller (values depend on the machine; only the keys are fixed).
    expect(Object.keys(m.reconcileWallMs()).sort()).toEqual(['child', 'parent']);
  });

  it('backs off exponentially on errors and records them', async () => {
    const clock = new VirtualClock(0);
    const events = new EventLog(clock);
    const m = new Manager({ clock, events, backoffBaseMs: 100 });
    let calls = 0;
    m.register({ name: 'flaky', reconcile: async () => { calls++; if (calls < 3) throw new Error('boom'); } });
    m.enqueue('flaky', 'k');
    await new Simulation(clock, m).advance(10_000);
    expect(calls).toBe(3);
    expect(events.all().filter((e) => e.type === 'reconcile.error').map((e) => e.t)).toEqual([0, 100]);
  });

  it('a crashed controller loses its queued and delayed work; restart resyncs', async () => {
    const clock = new VirtualClock(0);
    const m = new Manager({ clock });
    const log: string[] = [];
    m.register(recorder('c', log, { requeueAfter: 500 }));
    m.enqueue('c', 'k');
    await m.drain();
    m.crash('c');
    m.enqueue('c', 'lost');
    await new Simulation(clock, m).advance(1000);
    expect(log).toEqual(['c:k']);
    m.restart('c', ['k', 'j']);
    await m.drain();
    expect(log).toEqual(['c:k', 'c:k', 'c:j']);
  });
});

describe('Manager live mode: setYieldSlice / yieldIfDue (issue 24: serve stays responsive)', () => {
  /** A controller that burns `ms` of wall time per reconcile and enqueues `more` follow-ups. */
  const busy = (m: Manager, ms: number, more: number): Controller => ({
    name: 'busy',
    async reconcile(key) {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        /* burn */
      }
      const n = Number(key);
      if (n < more) m.enqueue('busy', String(n + 1));
    },
  });

  it('without a slice a drain never lets a timer run; with one, the event loop gets turns between reconciles', async () => {
    for (const slice of [undefined, 20]) {
      const m = new Manager({ clock: new VirtualClock(0) });
      m.register(busy(m, 5, 40)); // 41 reconciles of 5 ms
      m.setYieldSlice(slice);
      let turns = 0;
      const t = setInterval(() => turns++, 1);
      m.enqueue('busy', '0');
      await m.drain();
      clearInterval(t);
      if (slice === undefined) expect(turns).toBe(0);
      else expect(turns).toBeGreaterThanOrEqual(5);
    }
  }, 10_000);

  it('yieldIfDue is undefined (no await) unless a slice is set and used up', async () => {
    const m = new Manager({ clock: new VirtualClock(0) });
    expect(m.yieldIfDue()).toBeUndefined();
    m.setYieldSlice(1);
    // the slice runs from 0 (no drain has started one): burn past 1 ms, and past 1 s since the process started
    const until = Math.max(performance.now() + 5, 1000);
    while (performance.now() < until) {
      /* burn */
    }
    const p = m.yieldIfDue();
    expect(p).toBeInstanceOf(Promise);
    const ranBefore = performance.now();
    await p;
    // The turn restarts the slice. Checked with a slice of half the time that had run before the turn, not
    // with 1 ms: a process descheduled for a millisecond after the turn (a loaded CI machine) would make a
    // 1 ms slice due again, while a turn that did not restart the slice stays due for any slice below ranBefore.
    m.setYieldSlice(ranBefore / 2);
    expect(m.yieldIfDue()).toBeUndefined();
    expect(() => m.setYieldSlice(0)).toThrow(/positive/);
  }, 10_000);
});

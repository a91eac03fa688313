import { describe, expect, it } from 'vitest';
import { holdOn, VirtualClock } from '../../src/core/clock.js';
import { Manager, Simulation } from '../../src/core/runtime/index.js';

/** Real asynchronous work that spans many macrotask turns (like an in-process HTTP request through light-my-request). */
async function slowIo(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r));
}

describe('Simulation: work blocked on virtual time (HCS-6 latency, mode response)', () => {
  it('moves the clock only while a hold is pending, never because real I/O takes several turns', async () => {
    const clock = new VirtualClock(0);
    const m = new Manager({ clock });
    const seen: string[] = [];
    m.register({
      name: 'c',
      async reconcile(key) {
        await slowIo(50);
        seen.push(`${key} after io at ${clock.now()}`);
        if (key === 'held') {
          await holdOn(clock, 5000, 'test hold');
          seen.push(`${key} released at ${clock.now()}`);
          await slowIo(20);
          await holdOn(clock, 1000, 'second hold');
          seen.push(`${key} released again at ${clock.now()}`);
        }
      },
    });
    // A timer due in the middle of the hold fires in its virtual order.
    clock.setTimer(2000, () => seen.push(`timer at ${clock.now()}`));
    m.enqueue('c', 'io-only');
    m.enqueue('c', 'held');
    const sim = new Simulation(clock, m);
    await sim.settle();
    expect(seen).toEqual([
      'io-only after io at 0',
      'held after io at 0',
      'timer at 2000',
      'held released at 5000',
      'held released again at 6000',
    ]);
    expect(clock.heldCount()).toBe(0);
  });

  it('leaves time alone when nothing is held', async () => {
    const clock = new VirtualClock(0);
    const m = new Manager({ clock });
    m.register({ name: 'c', async reconcile() { await slowIo(30); } });
    clock.setTimer(10, () => {});
    m.enqueue('c', 'k');
    await new Simulation(clock, m).settle();
    expect(clock.now()).toBe(0);
  });
});

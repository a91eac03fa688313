import type { VirtualClock } from '../clock.js';
import type { Manager } from './manager.js';

export interface RunResult {
  ok: boolean;
  /** Virtual time when the run stopped. */
  at: number;
}

/**
 * Drives a Manager on a VirtualClock: run everything runnable now, then jump
 * time to the next due timer (a requeue, a cloud transition, a drain timeout),
 * and repeat. Wall time depends only on the amount of work, never on the
 * durations being simulated.
 */
export class Simulation {
  /**
   * @param barrier For a remote management cluster, whose watch events
   *   arrive asynchronously: resolves once every watch handler the
   *   controllers' own writes will trigger has run (ClientNodeKube.settled).
   *   The embedded store runs handlers synchronously inside each write, so it
   *   needs none.
   */
  constructor(
    readonly clock: VirtualClock,
    readonly manager: Manager,
    private readonly barrier?: () => Promise<void>,
  ) {}

  /**
   * Run all work that is runnable at the current virtual instant. A reconcile
   * that awaits the virtual clock itself (a cloud response held by a `latency`
   * fault in `mode: response`, HCS-6) cannot finish until time moves: once the
   * drain is blocked, time jumps to the next due timer (see drainAdvancing).
   */
  async settle(): Promise<void> {
    for (;;) {
      await this.drainAdvancing();
      if (this.barrier) {
        await this.barrier();
        if (this.manager.hasWork()) continue;
      }
      if (this.clock.fireDue() === 0 && !this.manager.hasWork()) return;
    }
  }

  /**
   * manager.drain(), moving virtual time forward while it is blocked on it.
   * A reconcile can await virtual time itself (a cloud response held by a
   * `latency` fault in `mode: response`, HCS-6): it cannot finish until the
   * clock moves, and only this loop moves it. Such waits go through
   * `holdOn` and are counted by the clock; the drain runs one reconcile at a
   * time, so a pending hold means the running reconcile waits for it (any
   * real I/O, in-process HTTP or a remote apiserver, is simply awaited).
   * While a hold is pending, time jumps to the next due timer: deterministic,
   * since it depends only on the virtual timers, never on wall time.
   */
  private async drainAdvancing(): Promise<void> {
    let settled = false;
    let failure: { e: unknown } | undefined;
    const p = this.manager.drain().then(
      () => { settled = true; },
      (e: unknown) => { settled = true; failure = { e }; },
    );
    while (!settled) {
      const held = this.clock.whenHeld();
      try {
        await Promise.race([p, held.promise]);
      } finally {
        held.cancel();
      }
      while (!settled && this.clock.heldCount() > 0) {
        const next = this.clock.nextDue();
        if (next === undefined) break; // unreachable: a pending hold has its timer
        this.clock.advanceTo(next);
        // Let the released reconcile run on (microtasks and I/O) before looking again.
        await new Promise<void>((r) => setImmediate(r));
      }
    }
    await p;
    if (failure) throw failure.e;
  }

  /**
   * Advance until `done()` holds (checked whenever the system is quiescent at
   * an instant) or `timeoutMs` of virtual time has passed.
   */
  async runUntil(done: () => boolean | Promise<boolean>, timeoutMs: number, onInstant?: () => void | Promise<void>): Promise<RunResult> {
    const deadline = this.clock.now() + timeoutMs;
    for (;;) {
      await this.settle();
      if (onInstant) await onInstant();
      if (await done()) return { ok: true, at: this.clock.now() };
      const next = this.clock.nextDue();
      if (next === undefined || next > deadline) {
        if (this.clock.now() < deadline) {
          this.clock.advanceTo(deadline);
          await this.settle();
          if (onInstant) await onInstant();
        }
        return { ok: await done(), at: this.clock.now() };
      }
      this.clock.advanceTo(next);
    }
  }

  /** Let `ms` of virtual time pass, running everything that falls due. */
  async advance(ms: number, onInstant?: () => void | Promise<void>): Promise<void> {
    await this.runUntil(() => false, ms, onInstant);
  }
}

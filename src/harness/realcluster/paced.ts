/**
 * Paced time for runs where a controller outside the testbed reconciles
 * (`hcs-testbed run --provider external`, `--capi external`): the outside
 * process runs on the wall clock and the testbed cannot know when it is
 * done, so virtual time may not jump to the next due timer as soon as the
 * testbed's own controllers are idle (src/core/runtime/simulation.ts). Here it
 * moves no faster than `speed` virtual milliseconds per wall millisecond:
 * a `wait` step lets the outside controller act for (timeout / speed) of
 * wall time at most, an `advance: 5m` step takes 5m / speed of wall time.
 *
 * `settle()` (what every step does after its action) additionally waits for
 * a quiet period: no change from an outside writer observed for `quietMs`
 * of wall time (bounded by `maxQuietMs`), so that a check right after a
 * `kubectl` step or a `wait` sees the outside controller's reaction to it,
 * as an operator looking a moment later would.
 *
 * Runs on paced time are not deterministic (the interleaving with the
 * outside process is wall-clock); verdicts are what compares.
 */
import type { VirtualClock } from '../../core/clock.js';
import type { Manager } from '../../core/runtime/manager.js';
import { Simulation, type RunResult } from '../../core/runtime/simulation.js';

export interface PacedOptions {
  /** Virtual ms per wall ms (> 0). */
  speed: number;
  /** Wall ms slept when nothing is due (default 20). */
  tickMs?: number;
  /** Wall ms without outside activity that count as quiet (default 300). */
  quietMs?: number;
  /** Longest wall wait for quiet in one settle (default 5000). */
  maxQuietMs?: number;
  /** Wall-clock source (default Date.now). */
  wallNow?: () => number;
}

export const DEFAULT_SPEED = 10;

export class PacedSimulation extends Simulation {
  private lastActivity = 0;
  private readonly speed: number;
  private readonly tickMs: number;
  private readonly quietMs: number;
  private readonly maxQuietMs: number;
  private readonly wallNow: () => number;

  constructor(clock: VirtualClock, manager: Manager, barrier: (() => Promise<void>) | undefined, opts: PacedOptions) {
    super(clock, manager, barrier);
    if (!(opts.speed > 0) || !Number.isFinite(opts.speed)) throw new RangeError(`speed must be a number > 0 (virtual seconds per wall second), got ${String(opts.speed)}`);
    this.speed = opts.speed;
    this.tickMs = opts.tickMs ?? 20;
    this.quietMs = opts.quietMs ?? 300;
    this.maxQuietMs = opts.maxQuietMs ?? 5000;
    this.wallNow = opts.wallNow ?? Date.now;
  }

  /** An outside writer changed something (a watch event the testbed did not cause). */
  noteActivity(): void {
    this.lastActivity = this.wallNow();
  }

  /** Everything runnable now, then until outside writers have been quiet for quietMs (at most maxQuietMs). */
  override async settle(): Promise<void> {
    await super.settle();
    const start = this.wallNow();
    while (this.wallNow() - this.lastActivity < this.quietMs && this.wallNow() - start < this.maxQuietMs) {
      await sleep(this.tickMs);
      await super.settle();
    }
  }

  override async runUntil(done: () => boolean | Promise<boolean>, timeoutMs: number, onInstant?: () => void | Promise<void>): Promise<RunResult> {
    const deadline = this.clock.now() + timeoutMs;
    const v0 = this.clock.now();
    const w0 = this.wallNow();
    for (;;) {
      await super.settle();
      if (onInstant) await onInstant();
      if (await done()) return { ok: true, at: this.clock.now() };
      if (this.clock.now() >= deadline) return { ok: false, at: this.clock.now() };
      const allowed = Math.min(deadline, v0 + Math.floor((this.wallNow() - w0) * this.speed));
      const next = this.clock.nextDue();
      if (next !== undefined && next <= allowed) {
        this.clock.advanceTo(Math.max(next, this.clock.now()));
        continue;
      }
      if (allowed > this.clock.now()) this.clock.advanceTo(allowed);
      await sleep(this.tickMs);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The live clock of `hcs-testbed serve`: the simulation's VirtualClock driven
 * by wall time at a chosen speed, which can be paused, resumed, re-sped,
 * advanced by a duration or run to the next pending timer.
 *
 * Semantics (docs/demo.md):
 * - While running, every tick (default 100 ms of wall time) advances virtual
 *   time by `speed` x the wall time elapsed since the previous tick.
 * - `speed 0` is the same as paused: nothing moves unless advanced by hand.
 * - `advance(ms)` and `next()` work whether running or paused; every step is
 *   serialized (one simulation step at a time, in the order asked).
 * - The bring-up of a preset is not the live clock's business: `serve` runs
 *   it to completion in virtual time before the live clock starts, so
 *   `--speed 0` never freezes it.
 */
import type { VirtualClock } from '../../core/clock.js';

/** What the live clock needs of a simulation (Simulation has it). */
export interface Steppable {
  readonly clock: VirtualClock;
  advance(ms: number): Promise<void>;
  settle(): Promise<void>;
}

export interface TimeStatus {
  /** Virtual time, ms since the epoch. */
  now: number;
  /** RFC 3339 form of `now` (ms precision). */
  iso: string;
  paused: boolean;
  /** Virtual ms per wall ms. */
  speed: number;
  /** Due time of the next pending timer (virtual ms), if any. */
  nextDue?: number;
  /** Steps (ticks, advances) completed; changes whenever time moved. */
  steps: number;
}

export class TimeControlError extends Error {}

export interface TimeControlOptions {
  speed?: number;
  paused?: boolean;
  /** Wall-clock source (tests inject one). Default Date.now. */
  wallNow?: () => number;
  /** Tick period in wall ms (default 100). 0: no timer (tests call tick()). */
  tickMs?: number;
  /** Largest virtual step one tick takes (default 10 min): a slow host catches up over several ticks. */
  maxStepMs?: number;
}

export const MAX_SPEED = 10_000;

export function checkSpeed(speed: number): number {
  if (!Number.isFinite(speed) || speed < 0 || speed > MAX_SPEED) throw new TimeControlError(`speed must be a number from 0 to ${MAX_SPEED} (virtual seconds per wall second), got ${String(speed)}`);
  return speed;
}

export class TimeControl {
  private speedValue: number;
  private pausedValue: boolean;
  private chain: Promise<unknown> = Promise.resolve();
  private lastWall: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private stepCount = 0;
  private readonly listeners = new Set<(s: TimeStatus) => void>();
  private readonly wallNow: () => number;
  private readonly maxStepMs: number;

  constructor(
    private readonly sim: Steppable,
    opts: TimeControlOptions = {},
  ) {
    this.speedValue = checkSpeed(opts.speed ?? 1);
    this.pausedValue = opts.paused ?? false;
    this.wallNow = opts.wallNow ?? Date.now;
    this.maxStepMs = opts.maxStepMs ?? 10 * 60_000;
    this.lastWall = this.wallNow();
    const tickMs = opts.tickMs ?? 100;
    if (tickMs > 0) {
      this.timer = setInterval(() => void this.tick(), tickMs);
      this.timer.unref();
    }
  }

  status(): TimeStatus {
    const now = this.sim.clock.now();
    const nextDue = this.sim.clock.nextDue();
    return { now, iso: new Date(now).toISOString(), paused: this.pausedValue, speed: this.speedValue, ...(nextDue !== undefined ? { nextDue } : {}), steps: this.stepCount };
  }

  /** Called after every step that moved time or changed the settings. */
  onChange(l: (s: TimeStatus) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Whether the wall-driven clock runs (not paused and speed > 0). */
  get running(): boolean {
    return !this.pausedValue && this.speedValue > 0;
  }

  pause(): TimeStatus {
    this.pausedValue = true;
    return this.changed();
  }

  resume(): TimeStatus {
    this.pausedValue = false;
    this.lastWall = this.wallNow();
    return this.changed();
  }

  setSpeed(speed: number): TimeStatus {
    this.speedValue = checkSpeed(speed);
    this.lastWall = this.wallNow();
    return this.changed();
  }

  /** Let `ms` of virtual time pass (running everything that falls due), now, paused or not. */
  advance(ms: number): Promise<TimeStatus> {
    if (!Number.isFinite(ms) || ms < 0) return Promise.reject(new TimeControlError(`advance: the duration must be >= 0, got ${String(ms)}`));
    return this.step(() => this.sim.advance(ms));
  }

  /** Run to the next pending timer (a requeue, a cloud transition, a timeout); a no-op when none is pending. */
  next(): Promise<TimeStatus & { movedMs: number }> {
    const before = this.sim.clock.now();
    return this.step(async () => {
      const due = this.sim.clock.nextDue();
      if (due === undefined) return this.sim.settle();
      return this.sim.advance(Math.max(0, due - this.sim.clock.now()));
    }).then((s) => ({ ...s, movedMs: s.now - before }));
  }

  /** One wall-driven tick: advance by speed x elapsed wall time (skipped while a step is under way). */
  async tick(): Promise<void> {
    const wall = this.wallNow();
    const elapsed = wall - this.lastWall;
    if (!this.running || this.ticking) {
      if (!this.running) this.lastWall = wall;
      return;
    }
    this.lastWall = wall;
    const ms = Math.min(this.maxStepMs, Math.round(elapsed * this.speedValue));
    if (ms <= 0) return;
    this.ticking = true;
    try {
      await this.step(() => this.sim.advance(ms));
    } finally {
      this.ticking = false;
    }
  }

  /** Wait until every step asked for so far is done. */
  async idle(): Promise<void> {
    await this.chain;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private step(fn: () => Promise<void>): Promise<TimeStatus> {
    const run = this.chain.then(fn).then(() => {
      this.stepCount++;
      return this.changed();
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  private changed(): TimeStatus {
    const s = this.status();
    for (const l of this.listeners) l(s);
    return s;
  }
}

/**
 * One injectable clock for the whole testbed (ARCHITECTURE: "One clock").
 *
 * Every delay — cloud job durations, guest boot, drain timeouts, requeues —
 * goes through a Clock. Embedded runs use VirtualClock, whose time only moves
 * when the simulation loop advances it to the next due timer, so an hour-long
 * procedure replays in milliseconds and the same seed gives the same log.
 */
export type TimerId = number;

export interface Clock {
  /** Milliseconds since the Unix epoch (virtual or real). */
  now(): number;
  /** Run `fn` after `delayMs` (>= 0). Callbacks must be synchronous and quick: enqueue work, do not perform it. */
  setTimer(delayMs: number, fn: () => void, label?: string): TimerId;
  clearTimer(id: TimerId): void;
}

/**
 * Wait `delayMs` on `clock` on behalf of an in-flight request (e.g. a cloud
 * response held by a `latency` fault in `mode: response`, HCS-6). On a
 * VirtualClock the wait is counted as a hold, so the simulation loop knows
 * the work it is draining is blocked on virtual time and moves the clock
 * (src/core/runtime/simulation.ts); elsewhere it is a plain timer.
 */
export function holdOn(clock: Clock, delayMs: number, label = ''): Promise<void> {
  if (clock instanceof VirtualClock) return clock.hold(delayMs, label);
  return new Promise<void>((resolve) => clock.setTimer(delayMs, resolve, label));
}

interface PendingTimer {
  id: TimerId;
  due: number;
  fn: () => void;
  label: string;
}

/** Default virtual epoch: 2026-01-01T00:00:00Z. */
export const DEFAULT_EPOCH_MS = Date.UTC(2026, 0, 1, 0, 0, 0);

/**
 * Virtual time. Timers fire in (due time, creation order) order, so two runs
 * that create the same timers fire them identically.
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  /** Binary min-heap ordered by (due, id). */
  private heap: PendingTimer[] = [];
  private cancelled = new Set<TimerId>();
  /** Holds (see holdOn) not yet released, and the waiters of whenHeld. */
  private holds = 0;
  private holdWaiters = new Set<() => void>();

  constructor(startMs: number = DEFAULT_EPOCH_MS) {
    this.current = startMs;
  }

  /** A promise resolved after `delayMs` of virtual time, counted as a hold while pending (see holdOn). */
  hold(delayMs: number, label = ''): Promise<void> {
    return new Promise<void>((resolve) => {
      this.setTimer(delayMs, () => {
        this.holds--;
        resolve();
      }, label);
      this.holds++;
      const waiters = [...this.holdWaiters];
      this.holdWaiters.clear();
      for (const w of waiters) w();
    });
  }

  /** Number of holds pending: work awaiting virtual time itself. */
  heldCount(): number {
    return this.holds;
  }

  /**
   * Resolves as soon as a hold is pending (at once if one already is). `cancel`
   * drops the waiter, so a caller that stopped waiting leaves nothing behind.
   */
  whenHeld(): { promise: Promise<void>; cancel: () => void } {
    if (this.holds > 0) return { promise: Promise.resolve(), cancel: () => {} };
    let waiter!: () => void;
    const promise = new Promise<void>((resolve) => { waiter = resolve; });
    this.holdWaiters.add(waiter);
    return { promise, cancel: () => { this.holdWaiters.delete(waiter); } };
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: () => void, label = ''): TimerId {
    if (!Number.isFinite(delayMs) || delayMs < 0) {
      throw new RangeError(`setTimer: delayMs must be a finite number >= 0, got ${delayMs}`);
    }
    const id = ++this.seq;
    this.push({ id, due: this.current + delayMs, fn, label });
    return id;
  }

  clearTimer(id: TimerId): void {
    this.cancelled.add(id);
  }

  /** Due time of the earliest pending timer, or undefined when none is pending. */
  nextDue(): number | undefined {
    this.dropCancelledHead();
    return this.heap[0]?.due;
  }

  /** Number of pending (not cancelled) timers. */
  pendingCount(): number {
    let n = 0;
    for (const t of this.heap) if (!this.cancelled.has(t.id)) n++;
    return n;
  }

  /**
   * Move time forward to `t`, firing every timer due at or before `t` in order.
   * Timers created by callbacks that fall due before `t` fire too.
   */
  advanceTo(t: number): number {
    if (t < this.current) throw new RangeError(`advanceTo: cannot move time backwards (${t} < ${this.current})`);
    let fired = 0;
    for (;;) {
      this.dropCancelledHead();
      const head = this.heap[0];
      if (!head || head.due > t) break;
      this.pop();
      this.current = Math.max(this.current, head.due);
      fired++;
      head.fn();
    }
    this.current = t;
    return fired;
  }

  advanceBy(ms: number): number {
    return this.advanceTo(this.current + ms);
  }

  /** Fire only the timers due at the current instant (e.g. zero-delay timers). */
  fireDue(): number {
    return this.advanceTo(this.current);
  }

  private dropCancelledHead(): void {
    while (this.heap.length > 0 && this.cancelled.has(this.heap[0]!.id)) {
      const t = this.pop();
      this.cancelled.delete(t.id);
    }
  }

  private less(a: PendingTimer, b: PendingTimer): boolean {
    return a.due < b.due || (a.due === b.due && a.id < b.id);
  }

  private push(t: PendingTimer): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): PendingTimer {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** Wall-clock time, optionally sped up (live mode: kind, demos). */
export class RealClock implements Clock {
  private readonly origin = Date.now();
  private timers = new Map<TimerId, NodeJS.Timeout>();
  private seq = 0;

  constructor(private readonly speedup = 1) {
    if (!(speedup > 0)) throw new RangeError(`RealClock: speedup must be > 0, got ${speedup}`);
  }

  now(): number {
    return this.origin + (Date.now() - this.origin) * this.speedup;
  }

  setTimer(delayMs: number, fn: () => void): TimerId {
    const id = ++this.seq;
    const h = setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, delayMs / this.speedup);
    this.timers.set(id, h);
    return id;
  }

  clearTimer(id: TimerId): void {
    const h = this.timers.get(id);
    if (h) clearTimeout(h);
    this.timers.delete(id);
  }
}

/**
 * The last second rfc3339 formatted and its text: writes, conditions and
 * rendered cloud resources of one virtual instant share it (formatting was
 * ~1 % of the scale bench's CPU, docs/performance.md). A pure function's
 * memo: no output depends on it. Out-of-range times throw before it is set.
 */
let lastSecond = NaN;
let lastText = '';

/** RFC 3339 timestamp (seconds precision, as Kubernetes metadata uses). */
export function rfc3339(ms: number): string {
  // Date keeps whole milliseconds (TimeClip truncates), and the text depends on the second alone.
  const second = Math.floor(Math.trunc(ms) / 1000);
  if (second === lastSecond) return lastText;
  const text = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  lastSecond = second;
  lastText = text;
  return text;
}

/** Parse a Go-style duration ("90s", "1m", "5m30s", "1h", "500ms") into milliseconds. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0;
  let consumed = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    const n = Number(m[1]);
    const unit = m[2];
    total += unit === 'h' ? n * 3_600_000 : unit === 'm' ? n * 60_000 : unit === 's' ? n * 1000 : n;
    consumed = re.lastIndex;
  }
  if (consumed !== s.length || s.length === 0) {
    throw new Error(`invalid duration "${text}": use Go duration syntax such as 30s, 5m, 1h30m or 500ms`);
  }
  return Math.round(total);
}

/** Format milliseconds as a compact duration (e.g. "1h2m3s"). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  let s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

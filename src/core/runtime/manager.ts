import type { Clock, TimerId } from '../clock.js';
import { errorMessage } from '../errors.js';
import type { EventLog } from '../events.js';

/**
 * A small controller runtime in the style of controller-runtime: controllers
 * own a reconcile(key) function; watches enqueue keys; reconcile returns
 * "requeue after" instead of sleeping. One work item runs at a time, in FIFO
 * order, so embedded runs are deterministic.
 */
export interface Result {
  /** Reconcile this key again after this many milliseconds (on the injected clock). */
  requeueAfter?: number;
}

export interface Controller {
  readonly name: string;
  reconcile(key: string): Promise<Result | void>;
  /**
   * Aggregating controllers (a MachineSet summing its Machines, a pool summing
   * its entries) set this: their work items wait until nothing else is
   * runnable at the current instant, so a burst of child events collapses into
   * one reconcile. Same outcome as a reconcile that started a little later;
   * deterministic; far less work at scale.
   */
  readonly coalesce?: boolean;
}

export interface ManagerOptions {
  clock: Clock;
  events?: EventLog;
  /** Base delay of the per-item exponential backoff after an error (controller-runtime: 5ms). */
  backoffBaseMs?: number;
  /** Cap of that backoff (controller-runtime: 1000s). */
  backoffMaxMs?: number;
  /** Safety valve: more reconciles than this in one drain means a hot loop. */
  maxReconcilesPerDrain?: number;
}

interface Item {
  controller: string;
  key: string;
}

export class LivelockError extends Error {
  constructor(readonly recent: string[]) {
    super(`controllers did not settle: over the reconcile budget in one drain without time moving; last items: ${recent.join(', ')}`);
  }
}

export class Manager {
  private readonly controllers = new Map<string, Controller>();
  private readonly queue: Item[] = [];
  private head = 0;
  /** Work of coalescing controllers, run only when `queue` is empty. */
  private deferred: Item[] = [];
  private readonly queued = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, { timer: TimerId; due: number }>();
  private readonly stopped = new Set<string>();
  private wake: (() => void) | undefined;
  private reconciles = 0;
  private readonly perController = new Map<string, number>();
  /** Live mode (setYieldSlice): wall ms of reconciles after which drain lets the event loop run. */
  private yieldSliceMs: number | undefined;
  /** performance.now() when the event loop last had a turn (live mode). */
  private sliceStart = 0;
  /** Wall milliseconds spent inside each controller's reconciles (they run one at a time, so this is exact). */
  private readonly wallMs = new Map<string, number>();

  constructor(private readonly opts: ManagerOptions) {}

  register(c: Controller): void {
    if (this.controllers.has(c.name)) throw new Error(`controller "${c.name}" registered twice`);
    this.controllers.set(c.name, c);
  }

  controllerNames(): string[] {
    return [...this.controllers.keys()];
  }

  /** Total reconciles run so far (for progress and benchmarks). */
  reconcileCount(): number {
    return this.reconciles;
  }

  /** Reconciles run so far, per controller (benchmarks print it). */
  reconcileStats(): Record<string, number> {
    return Object.fromEntries([...this.perController].sort((a, b) => b[1] - a[1]));
  }

  /**
   * Wall time spent in reconciles so far, per controller, in milliseconds
   * (benchmarks print it to show where a run's time goes). Includes the cloud
   * calls and store writes a reconcile awaits; excludes timers and watches
   * that fire between reconciles.
   */
  reconcileWallMs(): Record<string, number> {
    return Object.fromEntries([...this.wallMs].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(v)]));
  }

  /**
   * Live mode (`hcs-testbed serve`): once a drain has run reconciles for
   * `ms` of wall time, it lets the event loop run (setImmediate) before the
   * next reconcile, so that the HTTP servers sharing this process keep
   * answering however much work the controllers have (a MachineSet asked for
   * 2147483647 replicas). Only between reconciles: one reconcile at a time
   * still holds. undefined (the default, and every scenario run): never.
   * Yielding does not change the order of the work, only when other I/O may
   * run, so a run without outside writers gives the same event log.
   */
  setYieldSlice(ms: number | undefined): void {
    if (ms !== undefined && (!Number.isFinite(ms) || ms <= 0)) throw new Error(`yield slice must be a positive number of ms, got ${String(ms)}`);
    this.yieldSliceMs = ms;
  }

  /**
   * For a reconcile with a long loop (a MachineSet creating a burst of
   * Machines): in live mode, once the slice is used up, a promise that
   * resolves after the event loop had a turn; otherwise undefined (callers
   * then do not await at all, so scenario runs are unchanged). Other
   * clients' writes may then land between two of the loop's writes, as they
   * do on a real apiserver; no other reconcile runs meanwhile.
   */
  yieldIfDue(): Promise<void> | undefined {
    if (this.yieldSliceMs === undefined || performance.now() - this.sliceStart < this.yieldSliceMs) return undefined;
    return new Promise<void>((r) => setImmediate(r)).then(() => {
      this.sliceStart = performance.now();
    });
  }

  enqueue(controller: string, key: string): void {
    const id = `${controller}\u0000${key}`;
    if (this.queued.has(id)) return;
    this.queued.add(id);
    if (this.controllers.get(controller)?.coalesce) this.deferred.push({ controller, key });
    else this.queue.push({ controller, key });
    this.wake?.();
  }

  /** Enqueue after a delay; an earlier pending requeue of the same key wins (like a rate-limited workqueue's AddAfter). */
  enqueueAfter(controller: string, key: string, delayMs: number): void {
    if (delayMs <= 0) return this.enqueue(controller, key);
    const id = `${controller}\u0000${key}`;
    const due = this.opts.clock.now() + delayMs;
    const prev = this.delayed.get(id);
    if (prev && prev.due <= due) return;
    if (prev) this.opts.clock.clearTimer(prev.timer);
    const timer = this.opts.clock.setTimer(
      delayMs,
      () => {
        this.delayed.delete(id);
        this.enqueue(controller, key);
      },
      `requeue ${controller} ${key}`,
    );
    this.delayed.set(id, { timer, due });
  }

  hasWork(): boolean {
    return this.head < this.queue.length || this.deferred.length > 0;
  }

  /** Next item: ordinary work first (FIFO), then the deferred aggregating work (FIFO). */
  private take(): Item | undefined {
    if (this.head < this.queue.length) {
      const item = this.queue[this.head++]!;
      if (this.head > 4096 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      return item;
    }
    if (this.deferred.length === 0) return undefined;
    const batch = this.deferred;
    this.deferred = [];
    // Move the batch into the main queue so that anything it enqueues runs after it, in order.
    this.queue.length = 0;
    this.head = 0;
    this.queue.push(...batch);
    return this.queue[this.head++];
  }

  /**
   * Simulate a controller crash: its queued and delayed work is lost (as a
   * process restart loses its workqueue). `restart` brings it back with a full
   * resync of the given keys.
   */
  crash(controller: string): void {
    this.stopped.add(controller);
    for (const [id, d] of [...this.delayed]) {
      if (id.startsWith(`${controller}\u0000`)) {
        this.opts.clock.clearTimer(d.timer);
        this.delayed.delete(id);
      }
    }
    this.opts.events?.record({ source: 'runtime', type: 'controller.crashed', message: `controller ${controller} crashed` });
  }

  restart(controller: string, resyncKeys: string[]): void {
    this.stopped.delete(controller);
    this.opts.events?.record({ source: 'runtime', type: 'controller.restarted', message: `controller ${controller} restarted (resync of ${resyncKeys.length} objects)` });
    for (const k of resyncKeys) this.enqueue(controller, k);
  }

  /** Run queued work until the queue is empty. Returns how many reconciles ran. */
  async drain(): Promise<number> {
    const budget = this.opts.maxReconcilesPerDrain ?? 2_000_000;
    let n = 0;
    const recent: string[] = [];
    this.sliceStart = performance.now();
    for (let item = this.take(); item !== undefined; item = this.take()) {
      const id = `${item.controller}\u0000${item.key}`;
      this.queued.delete(id);
      if (this.stopped.has(item.controller)) continue;
      const c = this.controllers.get(item.controller);
      if (!c) throw new Error(`work item for unknown controller "${item.controller}"`);
      n++;
      this.reconciles++;
      this.perController.set(item.controller, (this.perController.get(item.controller) ?? 0) + 1);
      if (n > budget - 20) recent.push(`${item.controller}/${item.key}`);
      if (n > budget) throw new LivelockError(recent.slice(-20));
      const started = performance.now();
      try {
        const res = await c.reconcile(item.key);
        this.failures.delete(id);
        if (res?.requeueAfter !== undefined) this.enqueueAfter(item.controller, item.key, res.requeueAfter);
      } catch (e) {
        const count = (this.failures.get(id) ?? 0) + 1;
        this.failures.set(id, count);
        const base = this.opts.backoffBaseMs ?? 5;
        const max = this.opts.backoffMaxMs ?? 1_000_000;
        const delay = Math.min(max, base * 2 ** (count - 1));
        this.opts.events?.record({
          source: 'runtime',
          type: 'reconcile.error',
          message: `${item.controller} ${item.key}: ${errorMessage(e)} (retry ${count} in ${delay}ms)`,
          data: { controller: item.controller, key: item.key, attempt: count },
        });
        this.enqueueAfter(item.controller, item.key, delay);
      } finally {
        this.wallMs.set(item.controller, (this.wallMs.get(item.controller) ?? 0) + performance.now() - started);
      }
      // Between reconciles: a write arriving meanwhile only enqueues (behind the work already queued).
      const turn = this.yieldIfDue();
      if (turn) await turn;
    }
    this.queue.length = 0;
    this.head = 0;
    return n;
  }

  /** Live mode: process work as it arrives until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.drain();
      if (signal.aborted) break;
      let onAbort: (() => void) | undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        onAbort = () => resolve();
        signal.addEventListener('abort', onAbort, { once: true });
      });
      // One listener per wait, removed again: a long-running process waits millions of times.
      if (onAbort) signal.removeEventListener('abort', onAbort);
      this.wake = undefined;
    }
  }
}

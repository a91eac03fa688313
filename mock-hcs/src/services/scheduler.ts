/**
 * The shared task scheduler: every timed transition of every service is a
 * persisted task (absolute due time on the injected clock), armed as a clock
 * timer. A reopened data file re-arms its tasks (HCS-6 persistence). Fault
 * effects (extra delay, stuck, fail) apply to the tasks scheduled inside
 * `withEffects`.
 */
import type { Clock, TimerId } from '../../../src/core/index.js';
import type { Store, TaskKind, TaskRec } from '../state.js';
import type { Recorder } from './jobs.js';

/**
 * Effects of fired fault rules on the transitions a call schedules (HCS-6):
 * extra duration, a transition that never completes, or one that fails.
 */
export interface CallEffects {
  extraDelayMs?: number;
  /** The transition takes this long instead of its configured duration (fault `timeout`: then it fails). */
  durationMs?: number;
  stuck?: boolean;
  fail?: { code: string; reason: string };
}

/** What a service does when one of its tasks comes due: complete the transition, or (fault `jobFail`) fail it. */
export interface TaskHandler {
  finish(target: string, kind: TaskKind): void;
  fail(t: TaskRec, code: string, reason: string): void;
}

export class TaskScheduler {
  /** Effects applied to the transitions scheduled by the current (synchronous) call. */
  private effects: CallEffects | undefined;
  private readonly timers = new Map<number, TimerId>();
  private readonly handlers = new Map<TaskKind, TaskHandler>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly record: Recorder,
  ) {}

  private get data() {
    return this.store.data;
  }

  register(kinds: readonly TaskKind[], h: TaskHandler): void {
    for (const k of kinds) this.handlers.set(k, h);
  }

  /** Re-arm every persisted task (after open or restart); stuck tasks stay parked. */
  start(): void {
    this.stopped = false;
    const tasks = Object.values(this.data.tasks).sort((a, b) => a.seq - b.seq);
    for (const t of tasks) if (!t.stuck) this.arm(t);
  }

  stop(): void {
    this.stopped = true;
    for (const id of this.timers.values()) this.clock.clearTimer(id);
    this.timers.clear();
  }

  /** Run `fn` with fault effects applied to every transition it schedules. */
  withEffects<T>(effects: CallEffects | undefined, fn: () => T): T {
    if (!effects) return fn();
    const prev = this.effects;
    this.effects = effects;
    try {
      return fn();
    } finally {
      this.effects = prev;
    }
  }

  /** Complete every stuck transition now (re-armed with its original duration from now). Returns how many. */
  releaseStuck(target?: string): number {
    let n = 0;
    for (const t of Object.values(this.data.tasks)) {
      if (!t.stuck || (target !== undefined && t.target !== target)) continue;
      delete t.stuck;
      t.due = this.clock.now();
      this.arm(t);
      n++;
    }
    if (n) this.store.markDirty();
    return n;
  }

  /** Stuck (parked) transitions, for the admin API. */
  stuckTasks(): TaskRec[] {
    return Object.values(this.data.tasks).filter((t) => t.stuck);
  }

  schedule(kind: TaskKind, target: string, delayMs: number): TaskRec {
    const seq = ++this.data.taskSeq;
    const fx = this.effects;
    const t: TaskRec = { seq, kind, due: this.clock.now() + (fx?.durationMs ?? delayMs) + (fx?.extraDelayMs ?? 0), target };
    if (fx?.fail) t.fail = { ...fx.fail };
    if (fx?.stuck) {
      t.stuck = true;
      this.record('task.stuck', `${kind} of ${target} will not complete (fault injection)`, { kind, target }, ['HCS-6']);
    }
    this.data.tasks[String(seq)] = t;
    if (!t.stuck) this.arm(t);
    return t;
  }

  private arm(t: TaskRec): void {
    if (this.stopped) return;
    const delay = Math.max(0, t.due - this.clock.now());
    const id = this.clock.setTimer(delay, () => this.runTask(t.seq), `mock-hcs ${t.kind} ${t.target}`);
    this.timers.set(t.seq, id);
  }

  /**
   * Cancel the pending tasks of one resource: those of `resource` kind
   * (`server` or `volume`: the part of the task kind before the dot) acting
   * on `target`, and of one `purpose` (e.g. `attach`) when given. A task is
   * keyed by (resource kind, id, purpose), so cancelling a server's tasks can
   * never touch a volume's.
   */
  cancel(resource: 'server' | 'volume', target: string, purpose?: string): void {
    const want = purpose === undefined ? undefined : `${resource}.${purpose}`;
    for (const [k, t] of Object.entries(this.data.tasks)) {
      if (t.target !== target || !t.kind.startsWith(`${resource}.`) || (want !== undefined && t.kind !== want)) continue;
      delete this.data.tasks[k];
      const tid = this.timers.get(t.seq);
      if (tid !== undefined) this.clock.clearTimer(tid);
      this.timers.delete(t.seq);
    }
  }

  private runTask(seq: number): void {
    this.timers.delete(seq);
    const t = this.data.tasks[String(seq)];
    if (!t || this.stopped) return;
    delete this.data.tasks[String(seq)];
    const h = this.handlers.get(t.kind);
    if (t.fail) {
      h?.fail(t, t.fail.code, t.fail.reason);
      this.store.markDirty();
      return;
    }
    h?.finish(t.target, t.kind);
    this.store.markDirty();
  }
}

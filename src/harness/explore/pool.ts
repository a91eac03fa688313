/**
 * A pool of worker processes (node child processes, one per job slot) for
 * `hcs-testbed explore` and `hcs-testbed run --jobs N`. Each worker runs one
 * job at a time; jobs queue in submission order and go to whichever worker
 * is free. A worker that dies or exceeds the per-job wall limit is replaced;
 * its job is answered as a finding ("the run crashed the worker"), never
 * retried silently.
 *
 * A worker that exits before it is ready (a broken bundle, a missing module)
 * is not replaced forever: the pool moves on to its next entry (the bundle's
 * fallback is the sources through tsx) with a note on stderr, and once the
 * last entry's workers have failed to start MAX_START_FAILURES times in a
 * row every job is answered with that error.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ScenarioResult } from '../scenario/runner.js';
import type { Scenario } from '../scenario/types.js';
import type { RunSummary } from './run-one.js';
import type { ScheduleItem } from './schedule.js';
import { workerBundle } from './worker-bundle.js';

/** A run: an exploration run (answered with a summary) or a plain scenario run (answered with the full result). */
export type Job =
  | { type: 'explore'; file: string; seed: number; /** Default: the file's own schedule. */ schedule?: ScheduleItem[]; profile?: boolean }
  | { type: 'scenario'; file: string; seed?: number; /** Already read and checked by the sender (then the worker does not read the file again). */ scenario?: Scenario }
  | { type: 'bundle'; file: string; dir: string };

export type Request = { id: number; type: 'init'; plugin?: string; stallMs?: number } | (Job & { id: number });

export type Reply =
  | { id: number; ready: true }
  | { id: number; summary: RunSummary; /** The worker exits after this answer (a stalled run). */ dying?: true }
  | { id: number; result: ScenarioResult }
  | { id: number; error: string; input: boolean };

/** Default job count: the machine's cores. */
export function defaultJobs(): number {
  return Math.max(1, availableParallelism());
}

export interface PoolOptions {
  jobs: number;
  /** Testbed plugin module (a mutant) loaded by every worker. */
  plugin?: string;
  /** Wall-time limit of one job (default 10 min): past it the worker is killed and the job answered as a hang. */
  jobTimeoutMs?: number;
  /** A run with no progress for this long is a stall (default 8 s of wall time). */
  stallMs?: number;
  /**
   * Jobs sent ahead to each worker (default 1). More keeps a worker busy when
   * this process is itself running a scenario and answers IPC late (`run --jobs`).
   */
  depth?: number;
  /** The worker entries to try, in order (default: the bundle, then worker-entry.mjs through tsx; with a plugin only the latter). */
  entries?: string[];
}

/** Workers of the last entry that exit before they are ready this many times in a row: the pool gives up. */
export const MAX_START_FAILURES = 3;

interface Pending {
  id: number;
  job: Job;
  resolve: (r: Reply) => void;
}

interface Slot {
  /** Set once the entry (bundle or tsx) is known. */
  child?: ChildProcess;
  ready: Promise<void>;
  /** Jobs sent to the worker and not answered yet, oldest first (it runs them in order). */
  busy: Pending[];
  timers: Map<number, NodeJS.Timeout>;
  /** Killed by the wall-time limit or exiting after a stall (its job already answered): the jobs behind it run again. */
  killed?: boolean;
  /** Its worker answered the init message. */
  started?: boolean;
}

/** The worker through tsx (the sources as they are); the precompiled bundle (worker-bundle.ts) when it can be had. */
const TSX_ENTRY = fileURLToPath(new URL('./worker-entry.mjs', import.meta.url));

/**
 * V8 flags of the workers. A run builds a fresh testbed whose objects get new
 * hidden classes, so TurboFan's optimized code keeps being thrown away and
 * rebuilt on V8's background threads: with the default budget a warm worker
 * spent ~100 ms of background compilation per 130 ms run (one run took ~1.8
 * cores). An 8× larger interrupt budget keeps TurboFan for truly hot code and
 * halves a run's total CPU; the larger semi-space halves the scavenges.
 * Measured in docs/explore.md ("Performance").
 */
export const WORKER_EXEC_ARGV = ['--max-semi-space-size=64', '--interrupt-budget=540672'];

/**
 * The workers' flags, with `--cpu-prof` into HCS_TESTBED_WORKER_CPU_PROF (a
 * folder) when it is set: each worker writes a V8 CPU profile there when it
 * exits (node refuses --cpu-prof in NODE_OPTIONS). docs/performance.md.
 */
export function workerExecArgv(env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = env.HCS_TESTBED_WORKER_CPU_PROF;
  return dir ? [...WORKER_EXEC_ARGV, '--cpu-prof', `--cpu-prof-dir=${dir}`] : WORKER_EXEC_ARGV;
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private seq = 0;
  private closed = false;

  /** worker-entry.mjs with a plugin (TypeScript importing the sources); else the bundle, or worker-entry.mjs when there is none. */
  private entry: Promise<string>;
  /** Entries to fall back to when workers of the current one fail to start. */
  private fallbacks: string[];
  /** Workers that exited before they were ready, in a row. */
  private startFailures = 0;
  /** Set when no worker can start: every job is answered with it. */
  private failed: string | undefined;
  /** The entry workers start from now (once known). */
  private current: string | undefined;

  constructor(private readonly o: PoolOptions) {
    if (o.entries?.length) {
      this.entry = Promise.resolve(o.entries[0]!);
      this.current = o.entries[0]!;
      this.fallbacks = o.entries.slice(1);
    } else {
      this.entry = o.plugin ? Promise.resolve(TSX_ENTRY) : workerBundle().then((b) => b ?? TSX_ENTRY);
      this.fallbacks = o.plugin ? [] : [TSX_ENTRY];
      // Before any worker's start (registered first): the entry known, and no fallback from tsx to itself.
      void this.entry.then((e) => {
        this.current = e;
        if (e === TSX_ENTRY) this.fallbacks = [];
      });
    }
    for (let i = 0; i < Math.max(1, o.jobs); i++) this.slots.push(this.spawn());
  }

  get size(): number {
    return this.slots.length;
  }

  private spawn(): Slot {
    let markReady!: () => void;
    const slot: Slot = { ready: new Promise<void>((r) => (markReady = r)), busy: [], timers: new Map() };
    void this.entry.then((entry) => {
      if (this.closed) return;
      this.start(slot, entry, markReady);
    });
    return slot;
  }

  private start(slot: Slot, entry: string, markReady: () => void): void {
    const child = fork(entry, [], {
      execArgv: workerExecArgv(),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    slot.child = child;
    const initId = ++this.seq;
    child.on('message', (m: Reply) => {
      if (m.id === initId) {
        slot.started = true;
        this.startFailures = 0;
        markReady();
        this.pump();
        return;
      }
      if ('dying' in m) slot.killed = true;
      const at = slot.busy.findIndex((p) => p.id === m.id);
      if (at < 0) return;
      const [p] = slot.busy.splice(at, 1);
      clearTimeout(slot.timers.get(m.id));
      slot.timers.delete(m.id);
      p!.resolve(m);
      this.pump();
    });
    child.on('exit', (code, signal) => {
      for (const t of slot.timers.values()) clearTimeout(t);
      const lost = slot.busy.splice(0);
      const i = this.slots.indexOf(slot);
      if (this.closed || i < 0) return;
      if (!slot.started && !this.startFailed(entry, code, signal)) return;
      this.slots[i] = this.spawn();
      // A stall answers before exiting; the job that ended a worker is answered here, the ones queued behind it run again.
      const first = slot.killed ? undefined : lost.shift();
      const rest = lost;
      if (first) first.resolve({ id: first.id, error: `the worker process exited (${signal ?? `code ${code}`}) during the run`, input: false });
      this.queue.unshift(...rest);
      this.pump();
    });
    child.send({ id: initId, type: 'init', ...(this.o.plugin ? { plugin: this.o.plugin } : {}), ...(this.o.stallMs ? { stallMs: this.o.stallMs } : {}) } satisfies Request);
  }

  /**
   * A worker of `entry` exited before it was ready: move on to the next entry
   * (true: start a replacement), or after MAX_START_FAILURES in a row on the
   * last one give up and answer every queued job (false).
   */
  private startFailed(entry: string, code: number | null, signal: NodeJS.Signals | null): boolean {
    if (this.current !== undefined && this.current !== entry) return true; // a worker of an entry already left behind
    this.startFailures++;
    const how = signal ?? `code ${code}`;
    const next = this.fallbacks.shift();
    if (next !== undefined) {
      this.entry = Promise.resolve(next);
      this.current = next;
      this.startFailures = 0;
      process.stderr.write(`hcs-testbed: a worker from ${entry} exited (${how}) before it was ready; workers now start from ${next}\n`);
      return true;
    }
    if (this.startFailures < MAX_START_FAILURES) return true;
    this.failed ??= `worker processes cannot start: ${MAX_START_FAILURES} in a row exited (last: ${how}) before they were ready (entry ${entry}; its stderr is above)`;
    for (const p of this.queue.splice(0)) p.resolve({ id: p.id, error: this.failed, input: false });
    return false;
  }

  /** Queue a job; resolves with the worker's answer. */
  run(job: Job): Promise<Reply> {
    return new Promise((resolve) => {
      if (this.failed) return resolve({ id: ++this.seq, error: this.failed, input: false });
      this.queue.push({ id: ++this.seq, job, resolve });
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy.length >= (this.o.depth ?? 1) || this.queue.length === 0) continue;
      void slot.ready.then(() => this.dispatch(slot));
    }
  }

  private dispatch(slot: Slot): void {
    const depth = this.o.depth ?? 1;
    while (slot.busy.length < depth && this.queue.length > 0 && !this.closed && this.slots.includes(slot)) {
      const p = this.queue.shift()!;
      slot.busy.push(p);
      // The limit counts from when the job is sent, so queued-ahead jobs get the time of those before them too.
      const limit = (this.o.jobTimeoutMs ?? 600_000) * slot.busy.length;
      slot.timers.set(
        p.id,
        setTimeout(() => {
          if (!slot.busy.includes(p)) return;
          slot.busy.splice(slot.busy.indexOf(p), 1);
          p.resolve({ id: p.id, error: `the run exceeded the wall-time limit of ${Math.round(limit / 1000)}s (worker killed)`, input: false });
          slot.killed = true;
          slot.child!.kill('SIGKILL');
        }, limit),
      );
      slot.child!.send({ id: p.id, ...p.job } as Request);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.entry; // workers not started by now never will be
    await Promise.all(
      this.slots.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            // A worker on its way out (crashing) can have lost its IPC channel before its exit event comes:
            // then there is nothing to disconnect (disconnect() would throw), and the exit, or the kill below, follows.
            if (child.connected) child.disconnect();
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }),
      ),
    );
  }
}

import type { Clock } from './clock.js';

/**
 * The run's event log (ARCHITECTURE: "Observability first"). Every cloud call,
 * object change, controller decision and scenario step is recorded here with
 * its virtual timestamp. Reporters turn it into console/JUnit/JSON/HTML, and
 * determinism tests compare it byte for byte across runs.
 */
export type EventSource =
  | 'scenario'
  | 'cloud'
  | 'kube'
  | 'capi'
  | 'provider'
  | 'guest'
  | 'workload'
  | 'invariant'
  | 'fault'
  | 'runtime';

export interface LogEvent {
  /** Sequence number, from 1. */
  seq: number;
  /** Virtual time, ms since epoch. */
  t: number;
  source: EventSource;
  /** Short machine-readable type, e.g. "server.created", "machine.phase". */
  type: string;
  /** Human-readable one-liner. */
  message: string;
  /** Structured details (must be JSON-serialisable and deterministic). */
  data?: Record<string, unknown>;
  /** SPEC rule IDs this event relates to. */
  rules?: string[];
}

export type EventInput = Omit<LogEvent, 'seq' | 't'>;
export type EventListener = (e: LogEvent) => void;

export class EventLog {
  private readonly events: LogEvent[] = [];
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly clock: Clock) {}

  record(e: EventInput): LogEvent {
    const ev: LogEvent = { seq: this.events.length + 1, t: this.clock.now(), ...e };
    this.events.push(ev);
    for (const l of this.listeners) l(ev);
    return ev;
  }

  /**
   * Start the log with events recorded before this process (a replay continues a captured run's history, issue 35):
   * kept with their times, numbered 1..n as this log numbers them. Only on an empty log (history comes first).
   */
  continueFrom(history: readonly LogEvent[]): void {
    if (this.events.length) throw new Error(`the event log already holds ${this.events.length} events: history goes first`);
    history.forEach((e, i) => this.events.push({ ...e, seq: i + 1 }));
  }

  all(): readonly LogEvent[] {
    return this.events;
  }

  size(): number {
    return this.events.length;
  }

  subscribe(l: EventListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Newline-delimited JSON, one event a line (the stable, comparable form). */
  toJsonLines(): string {
    return this.events.map((e) => JSON.stringify(e)).join('\n') + (this.events.length ? '\n' : '');
  }
}

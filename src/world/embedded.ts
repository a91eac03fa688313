import { VirtualClock, DEFAULT_EPOCH_MS } from '../core/clock.js';
import { EventLog } from '../core/events.js';
import { SeededRng, type Rng } from '../core/rng.js';
import { EmbeddedStore } from '../core/kube/embedded-store.js';
import type { KubeClient } from '../core/kube/client.js';
import { ControllerLogs, EventRecorder, type ControllerContext, type WorkloadClusters, type WorkloadEndpoint } from '../core/runtime/context.js';
import { Manager } from '../core/runtime/manager.js';
import { Simulation } from '../core/runtime/simulation.js';

/** Simulated workload clusters: one embedded store per Cluster, created on first use. */
export class EmbeddedWorkloadClusters implements WorkloadClusters {
  private readonly stores = new Map<string, EmbeddedStore>();
  private readonly listeners = new Set<(key: string, store: EmbeddedStore) => void>();

  constructor(
    private readonly clock: VirtualClock,
    private readonly rng: Rng,
    private readonly events: EventLog,
  ) {}

  client(namespace: string, clusterName: string): KubeClient {
    return this.store(namespace, clusterName);
  }

  /** Changes whenever any workload cluster's store does (a write bumps its resourceVersion) or a cluster's store is created. */
  revision(): string {
    let sum = 0;
    for (const s of this.stores.values()) sum += Number(s.resourceVersion());
    return `${this.stores.size}:${sum}`;
  }

  store(namespace: string, clusterName: string): EmbeddedStore {
    const key = `${namespace}/${clusterName}`;
    let s = this.stores.get(key);
    if (!s) {
      s = new EmbeddedStore({ clock: this.clock, rng: this.rng, clusterName: `workload:${clusterName}`, events: this.events });
      this.stores.set(key, s);
      for (const l of this.listeners) l(key, s);
    }
    return s;
  }

  private endpoints: ((namespace: string, clusterName: string) => WorkloadEndpoint | undefined) | undefined;
  private readonly endpointListeners = new Set<() => void>();

  /** Serve the workload clusters at these endpoints (the HTTP facade, once it listens); undefined: none served. */
  setEndpoints(fn: ((namespace: string, clusterName: string) => WorkloadEndpoint | undefined) | undefined): void {
    this.endpoints = fn;
    for (const l of this.endpointListeners) l();
  }

  endpoint(namespace: string, clusterName: string): WorkloadEndpoint | undefined {
    return this.endpoints?.(namespace, clusterName);
  }

  onEndpointsChange(listener: () => void): void {
    this.endpointListeners.add(listener);
  }

  /** Called for every workload cluster created from now on (e.g. to attach watches). */
  onCreate(l: (key: string, store: EmbeddedStore) => void): void {
    this.listeners.add(l);
  }

  names(): string[] {
    return [...this.stores.keys()].sort();
  }
}

/** A management cluster and the runtime around it, on virtual time, for one seed. */
export interface Env<M extends KubeClient = KubeClient> {
  clock: VirtualClock;
  rng: SeededRng;
  events: EventLog;
  mgmt: M;
  workloads: EmbeddedWorkloadClusters;
  manager: Manager;
  sim: Simulation;
  logs: ControllerLogs;
  ctx: ControllerContext;
}

export type EmbeddedEnv = Env<EmbeddedStore>;

export interface EnvOptions {
  seed: number;
  startMs?: number;
}

/**
 * The runtime around a management cluster API: `mgmt` builds the client on
 * the run's clock/rng/events; `barrier` (remote clusters) is awaited by the
 * simulation before it decides that an instant is quiescent.
 */
export function createEnv<M extends KubeClient>(opts: EnvOptions, mgmtFor: (clock: VirtualClock, rng: SeededRng, events: EventLog) => M, barrier?: (mgmt: M) => () => Promise<void>): Env<M> {
  const clock = new VirtualClock(opts.startMs ?? DEFAULT_EPOCH_MS);
  const rng = new SeededRng(opts.seed);
  const events = new EventLog(clock);
  const mgmt = mgmtFor(clock, rng, events);
  const workloads = new EmbeddedWorkloadClusters(clock, rng, events);
  const manager = new Manager({ clock, events });
  const sim = new Simulation(clock, manager, barrier?.(mgmt));
  const logs = new ControllerLogs(clock);
  const recorder = new EventRecorder(mgmt, events, clock);
  const ctx: ControllerContext = { clock, rng, events, mgmt, workloads, manager, logs, recorder };
  return { clock, rng, events, mgmt, workloads, manager, sim, logs, ctx };
}

/** The embedded management cluster and its runtime, on virtual time, for one seed. */
export function createEmbeddedEnv(opts: EnvOptions): EmbeddedEnv {
  return createEnv(opts, (clock, rng, events) => new EmbeddedStore({ clock, rng, clusterName: 'management', events }));
}

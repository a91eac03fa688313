/**
 * What every service of the fake cloud shares: the store, configuration,
 * clock, event log, change listeners, the id allocator, the task scheduler,
 * the job store, the catalog and the IP index. Services get one CloudCore
 * and nothing else.
 */
import type { Clock, EventLog, Rng } from '../../../src/core/index.js';
import type { CloudConfig } from '../config.js';
import { own } from '../validate.js';
import type { ServerRec, Store, VolumeRec } from '../state.js';
import { CatalogService } from './catalog.js';
import { IdAllocator } from './ids.js';
import { Ipam } from './ipam.js';
import { JobStore } from './jobs.js';
import { TaskScheduler } from './scheduler.js';

export interface ServerChange {
  id: string;
  name: string;
  status: string;
  projectId: string;
}

export interface VolumeChange {
  id: string;
  status: string;
  projectId: string;
}

/** What ECS needs of EVS (implemented by EvsService). */
export interface VolumeOps {
  makeVolume(
    projectId: string,
    o: { name: string; size: number; volumeType: string; az: string; metadata: Record<string, string>; bootable: boolean; imageId?: string; status: VolumeRec['status'] },
  ): VolumeRec;
  removeVolume(v: VolumeRec, why: string, rules?: string[]): void;
}

export class CloudCore {
  readonly ids: IdAllocator;
  readonly tasks: TaskScheduler;
  readonly jobs: JobStore;
  readonly catalog: CatalogService;
  readonly ipam: Ipam;
  private jitterRng: Rng;
  private readonly serverListeners = new Set<(s: ServerChange) => void>();
  private readonly volumeListeners = new Set<(v: VolumeChange) => void>();

  constructor(
    readonly store: Store,
    readonly config: CloudConfig,
    readonly clock: Clock,
    private readonly rng: Rng,
    private readonly events?: EventLog,
  ) {
    this.ids = new IdAllocator(rng, store);
    this.jitterRng = rng.fork('mock-hcs/jitter');
    store.now = () => clock.now();
    const record = this.record.bind(this);
    this.tasks = new TaskScheduler(store, clock, record);
    this.jobs = new JobStore(store, clock, this.ids, record, config);
    this.catalog = new CatalogService(store, config);
    this.ipam = new Ipam(store, config.subnets);
    // A failed durable write put the state back to the file's: re-arm the tasks of that state.
    store.onRollback((cause) => {
      this.tasks.stop();
      this.tasks.start();
      this.record('store.rolled-back', `a write of the data file failed (${cause instanceof Error ? cause.message : String(cause)}); every change not on disk was undone`, {}, ['HCS-6']);
    });
  }

  get data() {
    return this.store.data;
  }

  /** Restart the id and jitter streams from the seed (admin reset). */
  restartStreams(): void {
    this.ids.restart();
    this.jitterRng = this.rng.fork('mock-hcs/jitter');
  }

  record(type: string, message: string, data?: Record<string, unknown>, rules?: string[]): void {
    this.events?.record({ source: 'cloud', type, message, ...(data ? { data } : {}), ...(rules && rules.length ? { rules } : {}) });
  }

  recordFault(type: string, message: string, data: Record<string, unknown>, rules: string[] = ['HCS-6']): void {
    this.events?.record({ source: 'fault', type, message, data, rules });
  }

  onServerChange(fn: (s: ServerChange) => void): () => void {
    this.serverListeners.add(fn);
    return () => this.serverListeners.delete(fn);
  }

  onVolumeChange(fn: (v: VolumeChange) => void): () => void {
    this.volumeListeners.add(fn);
    return () => this.volumeListeners.delete(fn);
  }

  serverChanged(s: ServerRec, status: string = s.status): void {
    const ev = { id: s.id, name: s.name, status, projectId: s.projectId };
    for (const l of this.serverListeners) l(ev);
  }

  volumeChanged(v: VolumeRec, status: string = v.status): void {
    const ev = { id: v.id, status, projectId: v.projectId };
    for (const l of this.volumeListeners) l(ev);
  }

  /** A configured duration with the configured jitter applied (from the jitter stream). */
  duration(base: number): number {
    const j = Math.min(1, Math.max(0, this.config.timings.jitter));
    const f = 1 + j * (2 * this.jitterRng.next() - 1);
    return Math.max(0, Math.round(base * f));
  }

  serverRec(projectId: string, id: string): ServerRec | undefined {
    const s = own(this.data.servers, id);
    return s && s.projectId === projectId ? s : undefined;
  }

  volumeRec(projectId: string, id: string): VolumeRec | undefined {
    const v = own(this.data.volumes, id);
    return v && v.projectId === projectId ? v : undefined;
  }

  volumesOf(projectId: string): VolumeRec[] {
    const recs = this.store.volumesByProject.get(projectId);
    return recs ? [...recs.values()] : [];
  }

  /**
   * Late-bound EVS volume operations (ECS creates and removes the volumes of its servers through them).
   * An interface, so that core does not import evs.ts (evs.ts imports core: one direction).
   */
  evs!: VolumeOps;
}

/**
 * Persistent state of the fake cloud (lowdb). Records are keyed by id, so the
 * lowdb document itself is the primary index; secondary indexes (per-project
 * sets, used IPs) live in memory and are rebuilt on load.
 *
 * Pending transitions are stored as tasks with absolute due times, so a fake
 * cloud reopened from its data file re-schedules them (HCS-6 persistence).
 */
import { Low, Memory } from 'lowdb';
import { JSONFile } from 'lowdb/node';

export type ServerStatus = 'BUILD' | 'ACTIVE' | 'SHUTOFF' | 'ERROR';
export type VolumeStatus = 'creating' | 'available' | 'attaching' | 'in-use' | 'detaching' | 'deleting' | 'error';
export type JobStatus = 'INIT' | 'RUNNING' | 'SUCCESS' | 'FAIL';

export interface NicRec {
  subnetId: string;
  ip: string;
  portId: string;
  mac: string;
}

export interface ServerVolumeRec {
  volumeId: string;
  device: string;
  bootIndex?: number;
  deleteOnTermination: boolean;
}

export interface ServerRec {
  id: string;
  projectId: string;
  name: string;
  status: ServerStatus;
  taskState: string | null;
  flavorId: string;
  imageId: string;
  az: string;
  vpcId: string;
  nics: NicRec[];
  volumes: ServerVolumeRec[];
  /** base64, as sent by the client. */
  userData?: string;
  metadata: Record<string, string>;
  tags: { key: string; value: string }[];
  instanceName: string;
  hostId: string;
  created: number;
  updated: number;
  launchedAt?: number;
  /** Job ids whose deleteSingleServer sub-job completes when this server goes away. */
  deleteJobs: string[];
  /** Create job id (its sub-job tracks this server's build). */
  createJob: string;
  /** delete_volume=true was requested: every attached data volume goes with the server. */
  deleteVolume?: boolean;
  /** Volumes being attached (status attaching) and the device they will get. */
  attaching: { volumeId: string; device: string }[];
}

export interface VolumeFs {
  fsType?: string;
  label?: string;
  files: Record<string, string>;
}

export interface VolumeRec {
  id: string;
  projectId: string;
  name: string;
  size: number;
  volumeType: string;
  az: string;
  status: VolumeStatus;
  metadata: Record<string, string>;
  bootable: boolean;
  imageId?: string;
  attachment?: { serverId: string; device: string; attachmentId: string; attachedAt: number };
  /** Server this volume is being attached to (status attaching). */
  pendingServerId?: string;
  pendingDevice?: string;
  createdAt: number;
  updatedAt: number;
  fs: VolumeFs;
  /** Job ids completing when the volume reaches its next stable state. */
  jobs: string[];
}

export interface SubJobRec {
  job_id: string;
  job_type: string;
  status: JobStatus;
  begin_time: number;
  end_time?: number;
  entities: Record<string, string>;
  error_code?: string;
  fail_reason?: string;
}

export interface JobRec {
  job_id: string;
  projectId: string;
  job_type: string;
  status: JobStatus;
  begin_time: number;
  end_time?: number;
  entities: Record<string, unknown>;
  sub_jobs?: SubJobRec[];
  error_code?: string;
  fail_reason?: string;
}

export type TaskKind = 'server.build' | 'server.delete' | 'volume.create' | 'volume.attach' | 'volume.detach' | 'volume.delete';

export interface TaskRec {
  /** Monotonic sequence; orders tasks with equal due times deterministically. */
  seq: number;
  kind: TaskKind;
  /** Absolute due time (ms since epoch, injected clock). */
  due: number;
  /** Entity the task acts on (server or volume id). */
  target: string;
}

export interface ClientTokenRec {
  projectId: string;
  response: { job_id: string; serverIds: string[] };
  at: number;
}

export interface DbData {
  version: 1;
  servers: Record<string, ServerRec>;
  volumes: Record<string, VolumeRec>;
  jobs: Record<string, JobRec>;
  /** Key: String(seq). */
  tasks: Record<string, TaskRec>;
  /** Key: `${projectId}|${token}`. */
  clientTokens: Record<string, ClientTokenRec>;
  taskSeq: number;
  /** Counter for instance names (instance-0000xxxx). */
  instanceSeq: number;
}

export function emptyData(): DbData {
  return { version: 1, servers: {}, volumes: {}, jobs: {}, tasks: {}, clientTokens: {}, taskSeq: 0, instanceSeq: 0 };
}

export class Store {
  private dirty = false;
  private writing: Promise<void> = Promise.resolve();
  private writeQueued = false;
  private writeError: unknown;
  /** projectId -> server ids, in creation order. */
  readonly serversByProject = new Map<string, Set<string>>();
  readonly volumesByProject = new Map<string, Set<string>>();
  /** subnetId -> ip -> server id holding that fixed IP. */
  readonly usedIps = new Map<string, Map<string, string>>();

  private constructor(
    private readonly db: Low<DbData>,
    private readonly persistent: boolean,
  ) {
    this.reindex();
  }

  static async open(dataFile?: string): Promise<Store> {
    const db = dataFile ? new Low<DbData>(new JSONFile<DbData>(dataFile), emptyData()) : new Low<DbData>(new Memory<DbData>(), emptyData());
    await db.read();
    const data = db.data;
    if (!data || data.version !== 1) {
      if (data && (data as { version?: unknown }).version !== undefined) {
        throw new Error(`mock-hcs: unsupported data file version ${String((data as { version?: unknown }).version)} in ${dataFile}`);
      }
      db.data = emptyData();
    }
    return new Store(db, Boolean(dataFile));
  }

  get data(): DbData {
    return this.db.data;
  }

  private reindex(): void {
    this.serversByProject.clear();
    this.volumesByProject.clear();
    this.usedIps.clear();
    for (const s of Object.values(this.data.servers)) this.indexServer(s);
    for (const v of Object.values(this.data.volumes)) this.indexVolume(v);
  }

  indexServer(s: ServerRec): void {
    setOf(this.serversByProject, s.projectId).add(s.id);
    for (const n of s.nics) this.reserveIp(n.subnetId, n.ip, s.id);
  }

  unindexServer(s: ServerRec): void {
    this.serversByProject.get(s.projectId)?.delete(s.id);
    for (const n of s.nics) this.usedIps.get(n.subnetId)?.delete(n.ip);
  }

  indexVolume(v: VolumeRec): void {
    setOf(this.volumesByProject, v.projectId).add(v.id);
  }

  unindexVolume(v: VolumeRec): void {
    this.volumesByProject.get(v.projectId)?.delete(v.id);
  }

  reserveIp(subnetId: string, ip: string, serverId: string): void {
    let m = this.usedIps.get(subnetId);
    if (!m) this.usedIps.set(subnetId, (m = new Map()));
    m.set(ip, serverId);
  }

  ipHolder(subnetId: string, ip: string): string | undefined {
    return this.usedIps.get(subnetId)?.get(ip);
  }

  /** Mark state changed; file-backed stores write in the background, coalescing bursts. */
  markDirty(): void {
    this.dirty = true;
    if (!this.persistent || this.writeQueued) return;
    this.writeQueued = true;
    this.writing = this.writing.then(async () => {
      // Let the current burst of synchronous mutations finish before serialising.
      await Promise.resolve();
      this.writeQueued = false;
      if (!this.dirty) return;
      this.dirty = false;
      await this.db.write();
    }).catch((e: unknown) => {
      this.writeError = e;
    });
  }

  /** Persist every pending change. */
  async flush(): Promise<void> {
    await this.writing;
    if (this.writeError) {
      const e = this.writeError;
      this.writeError = undefined;
      this.dirty = true;
      throw e;
    }
    if (this.dirty && this.persistent) {
      this.dirty = false;
      await this.db.write();
    }
    this.dirty = false;
  }
}

function setOf<K, V>(m: Map<K, Set<V>>, k: K): Set<V> {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  return s;
}

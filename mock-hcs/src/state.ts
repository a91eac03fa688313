/**
 * Persistent state of the fake cloud (lowdb). Records are keyed by id, so the
 * lowdb document itself is the primary index; secondary indexes (per-project
 * sets, used IPs) live in memory and are rebuilt on load.
 *
 * Pending transitions are stored as tasks with absolute due times, so a fake
 * cloud reopened from its data file re-schedules them (HCS-6 persistence).
 */
import { Low, Memory } from 'lowdb';
import { DataFile } from 'lowdb/node';

export type ServerStatus = 'BUILD' | 'ACTIVE' | 'SHUTOFF' | 'REBOOT' | 'HARD_REBOOT' | 'ERROR';
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
  /** Why the server is ERROR (Nova `fault`): set when a build or delete fails. */
  fault?: { code: number; message: string; details?: string; created: number };
  /** Job of the os-stop / os-start / reboot in progress (its sub-job ends with the transition). */
  actionJob?: string;
}

/**
 * A VPC port created through the VPC API (POST /ports) or a private IP
 * (POST /privateips, which is a port with one fixed IP on the real VPC too).
 * Ports of server NICs are not stored here: they are derived from the servers.
 */
export interface PortRec {
  id: string;
  projectId: string;
  kind: 'port' | 'privateip';
  name: string;
  /** VPC subnet id (= neutron_network_id). */
  subnetId: string;
  ip: string;
  mac: string;
  deviceOwner: string;
  deviceId: string;
  adminStateUp: boolean;
  securityGroups: string[];
  created: number;
}

/** An IAM token (HCS-5); stored under sha256(token), never the token itself. */
export interface TokenRec {
  userName: string;
  userId: string;
  domainId: string;
  /** Project the token is scoped to; absent = domain-scoped. */
  projectId?: string;
  methods: string[];
  issuedAt: number;
  expiresAt: number;
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
  /** Free text set by UpdateVolume. */
  description?: string;
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

export type TaskKind = 'server.build' | 'server.delete' | 'server.stop' | 'server.start' | 'server.reboot' | 'volume.create' | 'volume.attach' | 'volume.detach' | 'volume.delete';

export const TASK_KINDS: readonly TaskKind[] = ['server.build', 'server.delete', 'server.stop', 'server.start', 'server.reboot', 'volume.create', 'volume.attach', 'volume.detach', 'volume.delete'];

export interface TaskRec {
  /** Monotonic sequence; orders tasks with equal due times deterministically. */
  seq: number;
  kind: TaskKind;
  /** Absolute due time (ms since epoch, injected clock). */
  due: number;
  /** Entity the task acts on (server or volume id). */
  target: string;
  /** Fault injection (HCS-6): the transition never completes; not armed until released. */
  stuck?: boolean;
  /** Fault injection (HCS-6): the transition ends in failure and its job ends FAIL. */
  fail?: { code: string; reason: string };
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
  /** VPC ports and private IPs created through the VPC API, keyed by id (absent in files written before they existed). */
  ports: Record<string, PortRec>;
  /** IAM tokens keyed by sha256 hex of the token. */
  tokens: Record<string, TokenRec>;
  taskSeq: number;
  /** Counter for instance names (instance-0000xxxx). */
  instanceSeq: number;
  /** Clock reading at the last write (lets a restarted real-time server continue its timeline). */
  savedAtMs?: number;
}

export function emptyData(): DbData {
  return { version: 1, servers: {}, volumes: {}, jobs: {}, tasks: {}, clientTokens: {}, ports: {}, tokens: {}, taskSeq: 0, instanceSeq: 0 };
}

/** Fill in collections added after version 1 was first written (ports, tokens), in place. */
export function normalizeDbData(d: DbData): DbData {
  const o = d as Partial<DbData> & DbData;
  o.ports ??= {};
  o.tokens ??= {};
  return o;
}

/** Largest valid JavaScript Date value. */
const MAX_TIME = 8.64e15;

function isTime(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_TIME;
}

/** Problems of a state document (empty when it is a valid version-1 document). */
export function validateDbData(d: unknown): string[] {
  const errs: string[] = [];
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return ['state must be a JSON object'];
  const o = d as Record<string, unknown>;
  if (o.version !== 1) errs.push(`version must be 1 (got ${JSON.stringify(o.version)})`);
  for (const k of ['servers', 'volumes', 'jobs', 'tasks', 'clientTokens', 'ports', 'tokens'] as const) {
    const v = o[k];
    // ports and tokens came later: files without them are still version 1 documents.
    if (v === undefined && (k === 'ports' || k === 'tokens')) continue;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      errs.push(`${k} must be an object keyed by id`);
      continue;
    }
    for (const [id, rec] of Object.entries(v as Record<string, unknown>)) {
      if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) {
        errs.push(`${k}.${id} must be an object`);
        continue;
      }
      const r = rec as Record<string, unknown>;
      const need: Record<string, [string, string][]> = {
        servers: [['id', 'string'], ['projectId', 'string'], ['name', 'string'], ['status', 'string'], ['nics', 'array'], ['volumes', 'array'], ['metadata', 'object'], ['tags', 'array'], ['deleteJobs', 'array'], ['attaching', 'array'], ['created', 'number'], ['updated', 'number']],
        volumes: [['id', 'string'], ['projectId', 'string'], ['name', 'string'], ['size', 'number'], ['status', 'string'], ['metadata', 'object'], ['fs', 'object'], ['jobs', 'array'], ['az', 'string'], ['createdAt', 'number'], ['updatedAt', 'number']],
        jobs: [['job_id', 'string'], ['projectId', 'string'], ['job_type', 'string'], ['status', 'string'], ['begin_time', 'number'], ['entities', 'object']],
        tasks: [['seq', 'number'], ['kind', 'string'], ['due', 'number'], ['target', 'string']],
        clientTokens: [['projectId', 'string'], ['response', 'object']],
        ports: [['id', 'string'], ['projectId', 'string'], ['kind', 'string'], ['name', 'string'], ['subnetId', 'string'], ['ip', 'string'], ['mac', 'string'], ['deviceOwner', 'string'], ['deviceId', 'string'], ['securityGroups', 'array'], ['created', 'number']],
        tokens: [['userName', 'string'], ['userId', 'string'], ['domainId', 'string'], ['methods', 'array'], ['issuedAt', 'number'], ['expiresAt', 'number']],
      };
      for (const [field, type] of need[k]!) {
        const val = r[field];
        const ok = type === 'array' ? Array.isArray(val) : type === 'object' ? typeof val === 'object' && val !== null && !Array.isArray(val) : typeof val === type;
        if (!ok) errs.push(`${k}.${id}.${field} must be ${type === 'array' ? 'an array' : `a ${type}`}`);
        else if (type === 'number' && !isTime(val)) errs.push(`${k}.${id}.${field} must be a finite number between 0 and ${MAX_TIME}`);
      }
      for (const f of ['launchedAt', 'end_time']) if (r[f] !== undefined && !isTime(r[f])) errs.push(`${k}.${id}.${f} must be a finite number between 0 and ${MAX_TIME}`);
      if ((k === 'servers' || k === 'volumes') && r.id !== id) errs.push(`${k}.${id}.id must equal its key`);
      const each = (field: string, strings: string[]) => {
        const list = r[field];
        if (!Array.isArray(list)) return;
        list.forEach((e: unknown, i) => {
          const eo = e as Record<string, unknown> | null;
          if (typeof eo !== 'object' || eo === null || Array.isArray(eo)) errs.push(`${k}.${id}.${field}[${i}] must be an object`);
          else for (const f of strings) if (typeof eo[f] !== 'string') errs.push(`${k}.${id}.${field}[${i}].${f} must be a string`);
        });
      };
      const stringValues = (field: string, o: unknown) => {
        if (typeof o !== 'object' || o === null) return;
        for (const [mk, mv] of Object.entries(o)) if (typeof mv !== 'string') errs.push(`${k}.${id}.${field}.${mk} must be a string`);
      };
      if (k === 'servers') {
        each('nics', ['subnetId', 'ip', 'portId', 'mac']);
        each('volumes', ['volumeId', 'device']);
        each('tags', ['key', 'value']);
        each('attaching', ['volumeId', 'device']);
        stringValues('metadata', r.metadata);
        for (const f of ['flavorId', 'imageId', 'az', 'vpcId', 'instanceName', 'hostId', 'createJob'] as const) if (typeof r[f] !== 'string') errs.push(`servers.${id}.${f} must be a string`);
        if (Array.isArray(r.deleteJobs) && r.deleteJobs.some((j) => typeof j !== 'string')) errs.push(`servers.${id}.deleteJobs must hold job ids`);
      }
      if (k === 'volumes') {
        stringValues('metadata', r.metadata);
        const fs = r.fs as Record<string, unknown> | null;
        if (fs && typeof fs === 'object') {
          if (typeof fs.files !== 'object' || fs.files === null || Array.isArray(fs.files)) errs.push(`volumes.${id}.fs.files must be an object`);
          else stringValues('fs.files', fs.files);
        }
        if (typeof r.volumeType !== 'string') errs.push(`volumes.${id}.volumeType must be a string`);
        if (Array.isArray(r.jobs) && r.jobs.some((j) => typeof j !== 'string')) errs.push(`volumes.${id}.jobs must hold job ids`);
        if (r.attachment !== undefined) {
          const a = r.attachment as Record<string, unknown> | null;
          if (typeof a !== 'object' || a === null || typeof a.serverId !== 'string' || typeof a.device !== 'string' || typeof a.attachmentId !== 'string' || !isTime(a.attachedAt)) {
            errs.push(`volumes.${id}.attachment must have serverId, device, attachmentId and attachedAt`);
          }
        }
      }
      if (k === 'jobs' && r.sub_jobs !== undefined) {
        if (!Array.isArray(r.sub_jobs)) errs.push(`jobs.${id}.sub_jobs must be an array`);
        else
          r.sub_jobs.forEach((sj: unknown, i) => {
            const o = sj as Record<string, unknown> | null;
            if (
              typeof o !== 'object' ||
              o === null ||
              typeof o.job_id !== 'string' ||
              typeof o.status !== 'string' ||
              typeof o.entities !== 'object' ||
              o.entities === null ||
              !isTime(o.begin_time) ||
              (o.end_time !== undefined && !isTime(o.end_time))
            ) {
              errs.push(`jobs.${id}.sub_jobs[${i}] must have job_id, status and entities`);
            }
          });
      }
      if (k === 'clientTokens') {
        const resp = r.response as Record<string, unknown> | null;
        if (!resp || typeof resp.job_id !== 'string' || !Array.isArray(resp.serverIds) || resp.serverIds.some((x) => typeof x !== 'string')) {
          errs.push(`clientTokens.${id}.response must have job_id and serverIds`);
        }
      }
      if (k === 'ports') {
        if (r.id !== id) errs.push(`ports.${id}.id must equal its key`);
        if (r.kind !== 'port' && r.kind !== 'privateip') errs.push(`ports.${id}.kind must be "port" or "privateip"`);
        if (typeof r.adminStateUp !== 'boolean') errs.push(`ports.${id}.adminStateUp must be a boolean`);
        if (Array.isArray(r.securityGroups) && r.securityGroups.some((x) => typeof x !== 'string')) errs.push(`ports.${id}.securityGroups must hold strings`);
      }
      if (k === 'tokens') {
        if (r.projectId !== undefined && typeof r.projectId !== 'string') errs.push(`tokens.${id}.projectId must be a string`);
        if (Array.isArray(r.methods) && r.methods.some((x) => typeof x !== 'string')) errs.push(`tokens.${id}.methods must hold strings`);
      }
      if (k === 'servers' && r.fault !== undefined) {
        const f = r.fault as Record<string, unknown> | null;
        if (typeof f !== 'object' || f === null || typeof f.code !== 'number' || typeof f.message !== 'string' || !isTime(f.created)) errs.push(`servers.${id}.fault must have code, message and created`);
      }
      if (k === 'tasks' && !(TASK_KINDS as readonly string[]).includes(r.kind as string)) {
        errs.push(`tasks.${id}.kind is not a known transition`);
      }
      if (k === 'jobs' && r.job_id !== id) errs.push(`jobs.${id}.job_id must equal its key`);
      if (errs.length > 20) return [...errs, '...'];
    }
  }
  for (const k of ['taskSeq', 'instanceSeq'] as const) {
    if (typeof o[k] !== 'number' || !Number.isInteger(o[k])) errs.push(`${k} must be an integer`);
  }
  return errs;
}

/** Who holds a fixed IP of a subnet: a server NIC (its port id) or a VPC port / private IP. */
export interface IpHolder {
  kind: 'server' | 'port' | 'privateip';
  id: string;
  portId: string;
}

export class DataFileError extends Error {
  override name = 'DataFileError';
}

export class Store {
  /** Bumped by every change; a write persists the version it serialised. */
  private version = 0;
  private writtenVersion = 0;
  private inflight: Promise<void> | undefined;
  private bgQueued = false;
  private writeError: unknown;
  /** projectId -> server ids, in creation order. */
  readonly serversByProject = new Map<string, Set<string>>();
  /**
   * Every 3-character substring of a server name -> the ids of the servers
   * whose name contains it (ECS ListServers `name` is a substring match; a
   * name matching a pattern contains every 3 characters of the pattern's
   * literal parts). Names never change; kept by indexServer/unindexServer.
   */
  private readonly serversByGram = new Map<string, Set<string>>();
  /** Server id -> its position in serversByProject's order (creation order), to list an indexed subset in that order. */
  private readonly serverRank = new Map<string, number>();
  private nextServerRank = 0;
  /**
   * projectId -> volume id -> the volume's record, in creation order. The
   * record is the one in `data.volumes` (assigned only on create, together
   * with indexVolume; a replaced document is reindexed), so listing needs no
   * lookup by id.
   */
  readonly volumesByProject = new Map<string, Map<string, VolumeRec>>();
  /** subnetId -> ip -> server or port holding that fixed IP. */
  readonly usedIps = new Map<string, Map<string, IpHolder>>();
  /**
   * serverId -> volumes attached or being attached to that server (EVS
   * `server_id` filter). A superset: every assignment of `attachment` or
   * `pendingServerId` adds the volume (noteVolumeServer), nothing removes it
   * there; volumesOfServer checks each entry against the record and drops
   * the stale ones (detached, attach failed, volume deleted or replaced).
   */
  private readonly volumesByServer = new Map<string, Set<VolumeRec>>();
  /** Volume record -> its rank in volumesByProject's order (creation order), to list an indexed subset in that order. */
  private readonly volumeRank = new WeakMap<VolumeRec, number>();
  private nextVolumeRank = 0;
  /** Clock used to stamp savedAtMs; set by the engine. */
  now: () => number = () => 0;

  private constructor(
    private readonly db: Low<DbData>,
    readonly persistent: boolean,
  ) {
    this.reindex();
  }

  static async open(dataFile?: string): Promise<Store> {
    // Compact JSON (no indentation): the whole document is serialised on every durable write.
    const adapter = dataFile
      ? new DataFile<DbData>(dataFile, {
          parse: (text) => {
            try {
              return JSON.parse(text) as DbData;
            } catch (e) {
              throw new DataFileError(
                `mock-hcs: data file ${dataFile} is not valid JSON (${e instanceof Error ? e.message : String(e)}); refusing to start with an empty cloud — fix the file, restore a backup or remove it deliberately`,
              );
            }
          },
          stringify: (d) => JSON.stringify(d),
        })
      : new Memory<DbData>();
    const db = new Low<DbData>(adapter, emptyData());
    await db.read();
    const data = db.data as unknown;
    if (data && typeof data === 'object' && (data as { version?: unknown }).version !== undefined && (data as { version?: unknown }).version !== 1) {
      throw new DataFileError(`mock-hcs: unsupported data file version ${String((data as { version?: unknown }).version)} in ${dataFile}`);
    }
    const problems = validateDbData(data);
    if (problems.length > 0) {
      throw new DataFileError(`mock-hcs: data file ${dataFile} is not a mock-hcs state document: ${problems.slice(0, 5).join('; ')}`);
    }
    normalizeDbData(db.data);
    return new Store(db, Boolean(dataFile));
  }

  get data(): DbData {
    return this.db.data;
  }

  /** Replace the whole document (admin reset/restore); the caller validated it. */
  replace(data: DbData): void {
    this.db.data = normalizeDbData(data);
    this.reindex();
    this.markDirty();
  }

  private reindex(): void {
    this.serversByProject.clear();
    this.serversByGram.clear();
    this.serverRank.clear();
    this.volumesByProject.clear();
    this.volumesByServer.clear();
    this.usedIps.clear();
    for (const s of Object.values(this.data.servers)) this.indexServer(s);
    for (const v of Object.values(this.data.volumes)) this.indexVolume(v);
    for (const p of Object.values(this.data.ports)) this.indexPort(p);
  }

  indexServer(s: ServerRec): void {
    const ids = setOf(this.serversByProject, s.projectId);
    if (!ids.has(s.id)) this.serverRank.set(s.id, this.nextServerRank++);
    ids.add(s.id);
    for (let i = 0; i + 3 <= s.name.length; i++) setOf(this.serversByGram, s.name.slice(i, i + 3)).add(s.id);
    for (const n of s.nics) this.reserveIp(n.subnetId, n.ip, { kind: 'server', id: s.id, portId: n.portId });
  }

  unindexServer(s: ServerRec): void {
    this.serversByProject.get(s.projectId)?.delete(s.id);
    this.serverRank.delete(s.id);
    for (let i = 0; i + 3 <= s.name.length; i++) {
      const gram = s.name.slice(i, i + 3);
      const ids = this.serversByGram.get(gram);
      if (ids?.delete(s.id) && ids.size === 0) this.serversByGram.delete(gram);
    }
    for (const n of s.nics) this.usedIps.get(n.subnetId)?.delete(n.ip);
  }

  /**
   * The project's servers whose name may match the ECS name pattern (a
   * substring match where "." is any character), in serversByProject's
   * order: a superset of the matches, found through the 3-character
   * substrings of the pattern's literal parts (the fewest servers of any of
   * them). Undefined when the pattern has no literal part of 3 characters:
   * then every server is a candidate.
   */
  serversNameCandidates(projectId: string, pattern: string): string[] | undefined {
    let best: Set<string> | undefined;
    for (const part of pattern.split('.')) {
      for (let i = 0; i + 3 <= part.length; i++) {
        const ids = this.serversByGram.get(part.slice(i, i + 3));
        if (!ids) return [];
        if (!best || ids.size < best.size) best = ids;
      }
    }
    if (!best) return undefined;
    const own = this.serversByProject.get(projectId);
    const out: string[] = [];
    if (own) for (const id of best) if (own.has(id)) out.push(id);
    if (out.length > 1) out.sort((a, b) => this.serverRank.get(a)! - this.serverRank.get(b)!);
    return out;
  }

  indexVolume(v: VolumeRec): void {
    let m = this.volumesByProject.get(v.projectId);
    if (!m) this.volumesByProject.set(v.projectId, (m = new Map()));
    m.set(v.id, v);
    this.volumeRank.set(v, this.nextVolumeRank++);
    if (v.attachment) this.noteVolumeServer(v, v.attachment.serverId);
    if (v.pendingServerId) this.noteVolumeServer(v, v.pendingServerId);
  }

  unindexVolume(v: VolumeRec): void {
    this.volumesByProject.get(v.projectId)?.delete(v.id);
  }

  /** Record that `v` is attached or being attached to `serverId`; call on every assignment of `attachment` / `pendingServerId`. */
  noteVolumeServer(v: VolumeRec, serverId: string): void {
    setOf(this.volumesByServer, serverId).add(v);
  }

  /**
   * The project's volumes attached or being attached to `serverId`, in the
   * order of volumesByProject: exactly the volumes of that list with
   * `attachment.serverId === serverId || pendingServerId === serverId`.
   */
  volumesOfServer(projectId: string, serverId: string): VolumeRec[] {
    const set = this.volumesByServer.get(serverId);
    if (!set) return [];
    const live = this.volumesByProject.get(projectId);
    const out: VolumeRec[] = [];
    for (const v of set) {
      if (this.data.volumes[v.id] !== v || (v.attachment?.serverId !== serverId && v.pendingServerId !== serverId)) {
        set.delete(v);
        continue;
      }
      if (live?.get(v.id) === v) out.push(v);
    }
    if (set.size === 0) this.volumesByServer.delete(serverId);
    if (out.length > 1) out.sort((a, b) => this.volumeRank.get(a)! - this.volumeRank.get(b)!);
    return out;
  }

  indexPort(p: PortRec): void {
    this.reserveIp(p.subnetId, p.ip, { kind: p.kind, id: p.id, portId: p.id });
  }

  unindexPort(p: PortRec): void {
    const m = this.usedIps.get(p.subnetId);
    if (m?.get(p.ip)?.id === p.id) m.delete(p.ip);
  }

  reserveIp(subnetId: string, ip: string, holder: IpHolder): void {
    let m = this.usedIps.get(subnetId);
    if (!m) this.usedIps.set(subnetId, (m = new Map()));
    m.set(ip, holder);
  }

  ipHolder(subnetId: string, ip: string): IpHolder | undefined {
    return this.usedIps.get(subnetId)?.get(ip);
  }

  /** True when changes are not yet on disk. */
  get dirty(): boolean {
    return this.persistent && this.writtenVersion < this.version;
  }

  /**
   * Mark state changed. File-backed stores write in the background (timer-driven
   * transitions); a caller that must not acknowledge before the change is on
   * disk awaits `sync()`. Bursts coalesce into one write.
   */
  markDirty(): void {
    this.version++;
    if (!this.persistent || this.bgQueued) return;
    this.bgQueued = true;
    queueMicrotask(() => {
      this.bgQueued = false;
      this.sync().catch((e: unknown) => {
        this.writeError = e;
      });
    });
  }

  /**
   * Resolve once every change made before the call is on disk. Concurrent
   * callers share writes: while one write is in flight, later changes wait
   * for it and then go out together in the next one.
   */
  async sync(): Promise<void> {
    if (!this.persistent) return;
    const target = this.version;
    while (this.writtenVersion < target) {
      if (this.inflight) {
        await this.inflight;
        continue;
      }
      const v = this.version;
      this.data.savedAtMs = this.now();
      this.inflight = this.db.write().then(
        () => {
          this.writtenVersion = Math.max(this.writtenVersion, v);
          this.inflight = undefined;
        },
        (e: unknown) => {
          this.inflight = undefined;
          throw e;
        },
      );
      await this.inflight;
    }
  }

  /** Persist every pending change (rethrows a failed background write). */
  async flush(): Promise<void> {
    if (this.writeError) {
      const e = this.writeError;
      this.writeError = undefined;
      throw e;
    }
    await this.sync();
  }
}

function setOf<K, V>(m: Map<K, Set<V>>, k: K): Set<V> {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  return s;
}

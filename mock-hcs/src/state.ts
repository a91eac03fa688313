/**
 * Persistent state of the fake cloud (a JSON data file written atomically, persist.ts). Records are keyed by id, so the
 * document itself is the primary index; secondary indexes (per-project
 * sets, used IPs) live in memory and are rebuilt on load.
 *
 * Pending transitions are stored as tasks with absolute due times, so a fake
 * cloud reopened from its data file re-schedules them (HCS-6 persistence).
 */
import type { CloudConfig } from './config.js';
import { ipToInt } from './ip.js';
import { AtomicFile, readStateFile } from './persist.js';

export * from './state-data.js';
import type { DbData, PortRec, ServerRec, VolumeRec } from './state-data.js';
import { emptyData, normalizeDbData } from './state-data.js';

export { validateDbData } from './state-validate.js';

/** Who holds a fixed IP of a subnet: a server NIC (its port id) or a VPC port / private IP. */
export interface IpHolder {
  kind: 'server' | 'port' | 'privateip';
  id: string;
  portId: string;
  /** Project of the holder: errors name a holder only to its own project. */
  projectId: string;
}

export { DataFileError } from './persist.js';

export class Store {
  /** Bumped by every change; a write persists the version it serialised. */
  private version = 0;
  private writtenVersion = 0;
  private inflight: Promise<void> | undefined;
  private bgQueued = false;
  /** The text of the document last made durable (read at open or written since): what a failed write rolls back to. */
  private durableText: string;
  /** Failed writes so far, and how many of them the in-memory state has been rolled back for. */
  private failures = 0;
  private rolledBackFor = 0;
  private lastFailure: unknown;
  private readonly replaceListeners: (() => void)[] = [];
  private readonly rollbackListeners: ((cause: unknown) => void)[] = [];
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
   * subnetId -> an address (as a number) below which every allocatable
   * address of the subnet is held: where the search for the lowest free
   * address starts (Ipam.freeIp), so a create costs O(1) amortised instead of
   * a scan of every used address. Lowered when an address is released.
   */
  private readonly freeFrom = new Map<string, number>();
  /**
   * serverId -> volumes attached or being attached to that server (EVS
   * `server_id` filter). A superset: every assignment of `attachment` or
   * `pendingServerId` adds the volume (noteVolumeServer), nothing removes it
   * there; volumesOfServer checks each entry against the record and drops
   * the stale ones (detached, attach failed, volume deleted or replaced).
   */
  private readonly volumesByServer = new Map<string, Set<VolumeRec>>();
  /**
   * "key\u0000value" -> volumes that carried that metadata pair (EVS
   * `metadata` filter). A superset, as volumesByServer: indexVolume and every
   * metadata assignment (noteVolumeMetadata) add, nothing removes there;
   * volumesWithMetadata checks each entry against the record and drops the
   * stale ones (the key removed or changed, the volume deleted or replaced).
   */
  private readonly volumesByMeta = new Map<string, Set<VolumeRec>>();
  /** Volume record -> its rank in volumesByProject's order (creation order), to list an indexed subset in that order. */
  private readonly volumeRank = new WeakMap<VolumeRec, number>();
  private nextVolumeRank = 0;
  /** Clock used to stamp savedAtMs; set by the engine. */
  now: () => number = () => 0;

  private constructor(
    private doc: DbData,
    private readonly file: AtomicFile | undefined,
    text: string,
  ) {
    this.durableText = text;
    this.reindex();
  }

  get persistent(): boolean {
    return this.file !== undefined;
  }

  /**
   * Open the state: in memory without `dataFile`; else read and check the
   * file (readStateFile: refused with the file name and the reason when it is
   * not this cloud's state). A file written by an earlier process gets a new
   * id epoch (the caller syncs it before serving).
   */
  static async open(dataFile?: string, config?: CloudConfig): Promise<Store> {
    if (!dataFile) return new Store(emptyData(), undefined, '');
    const read = await readStateFile(dataFile, config);
    if (!read) return new Store(emptyData(), new AtomicFile(dataFile), JSON.stringify(emptyData()));
    const store = new Store(read.doc, new AtomicFile(dataFile), read.text);
    read.doc.idEpoch = (read.doc.idEpoch ?? 0) + 1;
    store.markDirty();
    return store;
  }

  get data(): DbData {
    return this.doc;
  }

  /** Replace the whole document (admin reset/restore); the caller validated it. */
  replace(data: DbData): void {
    this.doc = normalizeDbData(data);
    this.reindex();
    for (const l of this.replaceListeners) l();
    this.markDirty();
  }

  /** Called after every replacement of the document (replace, rollback). */
  onReplace(fn: () => void): void {
    this.replaceListeners.push(fn);
  }

  /** Called after a failed write rolled the in-memory state back to the durable one (re-arm timers, record it). */
  onRollback(fn: (cause: unknown) => void): void {
    this.rollbackListeners.push(fn);
  }

  private reindex(): void {
    this.serversByProject.clear();
    this.serversByGram.clear();
    this.serverRank.clear();
    this.volumesByProject.clear();
    this.volumesByServer.clear();
    this.volumesByMeta.clear();
    this.usedIps.clear();
    this.freeFrom.clear();
    for (const s of Object.values(this.data.servers)) this.indexServer(s);
    for (const v of Object.values(this.data.volumes)) this.indexVolume(v);
    for (const p of Object.values(this.data.ports)) this.indexPort(p);
  }

  indexServer(s: ServerRec): void {
    const ids = setOf(this.serversByProject, s.projectId);
    if (!ids.has(s.id)) this.serverRank.set(s.id, this.nextServerRank++);
    ids.add(s.id);
    for (let i = 0; i + 3 <= s.name.length; i++) setOf(this.serversByGram, s.name.slice(i, i + 3)).add(s.id);
    for (const n of s.nics) this.reserveIp(n.subnetId, n.ip, { kind: 'server', id: s.id, portId: n.portId, projectId: s.projectId });
  }

  unindexServer(s: ServerRec): void {
    this.serversByProject.get(s.projectId)?.delete(s.id);
    this.serverRank.delete(s.id);
    for (let i = 0; i + 3 <= s.name.length; i++) {
      const gram = s.name.slice(i, i + 3);
      const ids = this.serversByGram.get(gram);
      if (ids?.delete(s.id) && ids.size === 0) this.serversByGram.delete(gram);
    }
    for (const n of s.nics) if (this.usedIps.get(n.subnetId)?.delete(n.ip)) this.released(n.subnetId, n.ip);
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
    for (const k in v.metadata) this.noteVolumeMetadata(v, k, v.metadata[k]!);
  }

  /** Record that `v` carries metadata `key`=`value`; call on every assignment of a metadata key. */
  noteVolumeMetadata(v: VolumeRec, key: string, value: string): void {
    setOf(this.volumesByMeta, `${key}\u0000${value}`).add(v);
  }

  /**
   * The project's volumes whose metadata has `key`=`value` for the pair of
   * `pairs` that the fewest volumes carry, in the order of volumesByProject:
   * a superset of the volumes matching every pair (the caller tests them
   * all), exactly the volumes of that list with that one pair. Undefined
   * without pairs.
   */
  volumesWithMetadata(projectId: string, pairs: readonly (readonly [string, string])[]): VolumeRec[] | undefined {
    if (pairs.length === 0) return undefined;
    let best: { key: string; value: string; set: Set<VolumeRec> } | undefined;
    for (const [key, value] of pairs) {
      const set = this.volumesByMeta.get(`${key}\u0000${value}`);
      if (!set) return [];
      if (!best || set.size < best.set.size) best = { key, value, set };
    }
    const { key, value } = best!;
    return this.liveInOrder(this.volumesByMeta, `${key}\u0000${value}`, projectId, (v) => Object.hasOwn(v.metadata, key) && v.metadata[key] === value);
  }

  /**
   * What a superset index (volumesByServer, volumesByMeta) holds under `key`
   * that is still true: the volumes that are still the store's records and
   * still `hold`, those of `projectId` in volumesByProject's order. The stale
   * ones leave the index.
   */
  private liveInOrder(index: Map<string, Set<VolumeRec>>, key: string, projectId: string, holds: (v: VolumeRec) => boolean): VolumeRec[] {
    const set = index.get(key);
    if (!set) return [];
    const live = this.volumesByProject.get(projectId);
    const out: VolumeRec[] = [];
    for (const v of set) {
      if (this.data.volumes[v.id] !== v || !holds(v)) {
        set.delete(v);
        continue;
      }
      if (live?.get(v.id) === v) out.push(v);
    }
    if (set.size === 0) index.delete(key);
    if (out.length > 1) out.sort((a, b) => this.volumeRank.get(a)! - this.volumeRank.get(b)!);
    return out;
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
    return this.liveInOrder(this.volumesByServer, serverId, projectId, (v) => v.attachment?.serverId === serverId || v.pendingServerId === serverId);
  }

  indexPort(p: PortRec): void {
    this.reserveIp(p.subnetId, p.ip, { kind: p.kind, id: p.id, portId: p.id, projectId: p.projectId });
  }

  unindexPort(p: PortRec): void {
    const m = this.usedIps.get(p.subnetId);
    if (m?.get(p.ip)?.id === p.id) {
      m.delete(p.ip);
      this.released(p.subnetId, p.ip);
    }
  }

  reserveIp(subnetId: string, ip: string, holder: IpHolder): void {
    let m = this.usedIps.get(subnetId);
    if (!m) this.usedIps.set(subnetId, (m = new Map()));
    m.set(ip, holder);
  }

  private released(subnetId: string, ip: string): void {
    const n = ipToInt(ip);
    const from = this.freeFrom.get(subnetId);
    if (n !== undefined && from !== undefined && n < from) this.freeFrom.set(subnetId, n);
  }

  /** Where the search for a free address of the subnet may start (see freeFrom); undefined: at the start. */
  freeSearchStart(subnetId: string): number | undefined {
    return this.freeFrom.get(subnetId);
  }

  /** Every allocatable address of the subnet below `n` is held. */
  noteHeldBelow(subnetId: string, n: number): void {
    this.freeFrom.set(subnetId, n);
  }

  ipHolder(subnetId: string, ip: string): IpHolder | undefined {
    return this.usedIps.get(subnetId)?.get(ip);
  }

  /** A number bumped by every change of the state (markDirty): unchanged, the state is as it was. */
  get revision(): number {
    return this.version;
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
      // A failed background write leaves the store dirty: the next sync or flush writes again (and reports a failure).
      this.sync(false).catch(() => undefined);
    });
  }

  /**
   * Resolve once every change made before the call is on disk. Concurrent
   * callers share writes: while one write is in flight, later changes wait
   * for it and then go out together in the next one.
   *
   * All or nothing: when a write this caller waits for fails, the in-memory
   * state goes back to the last durable document (every change not on disk
   * is undone, tasks re-armed from it) and the call rejects, so the caller
   * answers with an error and a retry starts from what is on disk.
   * Background writes (`rollback` false: timer-driven transitions nobody
   * acknowledged) keep their changes in memory for the next write.
   */
  async sync(rollback = true): Promise<void> {
    if (!this.file) return;
    const target = this.version;
    const rollbacks = this.rolledBackFor;
    while (this.writtenVersion < target) {
      if (this.rolledBackFor !== rollbacks) break;
      const seen = this.failures;
      if (this.inflight) await this.inflight.catch(() => undefined);
      else await this.writeOnce().catch(() => undefined);
      if (this.failures !== seen) {
        if (!rollback) throw this.lastFailure;
        this.rollBack();
        break;
      }
    }
    if (this.rolledBackFor !== rollbacks) {
      const why = this.lastFailure instanceof Error ? this.lastFailure.message : String(this.lastFailure);
      throw new Error(`${why}; the change was not made (the cloud is back at its last durable state), retry`);
    }
  }

  private writeOnce(): Promise<void> {
    const v = this.version;
    this.doc.savedAtMs = this.now();
    const text = JSON.stringify(this.doc);
    this.inflight = this.file!.write(text).then(
      () => {
        this.writtenVersion = Math.max(this.writtenVersion, v);
        this.durableText = text;
        this.inflight = undefined;
      },
      (e: unknown) => {
        this.inflight = undefined;
        this.failures++;
        this.lastFailure = e;
        throw e;
      },
    );
    return this.inflight;
  }

  /** Undo every change not on disk: back to the last durable document. */
  private rollBack(): void {
    if (this.rolledBackFor === this.failures) return;
    this.rolledBackFor = this.failures;
    this.doc = normalizeDbData(JSON.parse(this.durableText) as DbData);
    this.reindex();
    this.writtenVersion = this.version;
    for (const l of this.replaceListeners) l();
    for (const l of this.rollbackListeners) l(this.lastFailure);
  }

  /**
   * Persist every pending change. Rejects when that write fails; an earlier
   * failed background write no longer matters once a later write succeeded
   * (the whole document is written each time).
   */
  async flush(): Promise<void> {
    await this.sync(false);
  }
}

function setOf<K, V>(m: Map<K, Set<V>>, k: K): Set<V> {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  return s;
}

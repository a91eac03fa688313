/**
 * HCSMachineConfigPool: entry bookkeeping (POOL-1, POOL-4, POOL-5) and the
 * pool controller that shows the runtime state of every entry and of its
 * persistent disks.
 *
 * Binding of an entry to a machine lives in the pool's status
 * (entries[].machine), written with optimistic concurrency, so two machines
 * can never hold one entry and a restarted provider finds every binding again.
 */
import { LABEL_CLUSTER_NAME } from '../api/capi.js';
import type {
  HCSMachine,
  HCSMachineConfigPool,
  HCSMachineConfigPoolStatus,
  PersistentDisk,
  PersistentDiskStatus,
  PoolConfig,
  PoolEntryStatus,
} from '../api/hcs.js';
import { rfc3339 } from '../../core/clock.js';
import { getShared, listShared, updateStatusShared, type KubeClient } from '../../core/kube/client.js';
import { isConflict } from '../../core/kube/errors.js';
import { jsonEqual } from '../../core/kube/patch.js';
import type { KubeObject, ObjectRef } from '../../core/kube/types.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import type { CloudApi, CloudVolume } from './cloud-api.js';
import { attachedServers } from './cloud-api.js';
import { META_CLUSTER, META_HOSTNAME, META_PERSISTENT, META_SLOT } from '../api/metadata.js';
import { Reporter, sameJsonText, setCondition } from './util.js';

export const POOL_CONTROLLER = 'hcsmachineconfigpool';

export function poolRef(namespace: string, name: string): ObjectRef {
  return { kind: 'HCSMachineConfigPool', namespace, name };
}

/**
 * Debounce of the pool status refresh (it lists the cluster's persistent
 * volumes): at most one per pool every 10 s, also the period of the requeue
 * while a disk is in transition. A poll interval, as CAPO's 10 s poll of a
 * building instance: each refresh is a full EVS list of the cluster's
 * persistent disks (N volumes for a pool of N entries), so polling it faster
 * costs the cloud API (and the testbed) O(N) per period for a display. It was
 * 1 s, then 5 s; bindings and the machine controller's own disk records are
 * written at once regardless.
 */
export const POOL_REFRESH_MS = 10_000;

/** Ask for a refresh of a pool's status (counts, disk runtime state). */
export function enqueuePoolRefresh(ctx: ControllerContext, namespace: string, name: string): void {
  ctx.manager.enqueueAfter(POOL_CONTROLLER, `${namespace}/${name}`, POOL_REFRESH_MS);
}

const DISK_FIELDS: (keyof PersistentDisk)[] = ['slot', 'size', 'type', 'format', 'mountPath'];

/** The disks the provider works with for an entry: accepted ones (immutable, DISK-4) plus mountOptions from the spec (DISK-5). */
export function effectiveDisks(cfg: PoolConfig, entry: PoolEntryStatus | undefined): PersistentDisk[] {
  const accepted = entry?.acceptedDisks ?? cfg.persistentDisks ?? [];
  return accepted
    .map((a) => {
      const s = cfg.persistentDisks?.find((d) => d.slot === a.slot);
      return { ...a, ...(s?.mountOptions ? { mountOptions: s.mountOptions } : {}) };
    })
    .sort((a, b) => a.slot - b.slot);
}

/**
 * Bring status.entries in line with spec.configs, keeping bindings, accepted
 * disks and disk runtime state. Entries removed from the spec stay while a
 * machine still holds them. Returns DISK-4 drift messages.
 *
 * An entry that comes out equal (as JSON data) to the one it was derived from
 * is that very object, so the result shares every unchanged entry with the
 * old status (which may be the stored, frozen one): callers replace an entry
 * to change it (copy on write), never edit one in place.
 */
export function syncEntries(pool: HCSMachineConfigPool, nowMs: number): string[] {
  const status: HCSMachineConfigPoolStatus = (pool.status ??= {});
  const old = status.entries ?? [];
  const drift: string[] = [];
  const entries: PoolEntryStatus[] = [];
  const oldByHost = new Map<string, PoolEntryStatus>();
  for (const e of old) if (!oldByHost.has(e.hostname)) oldByHost.set(e.hostname, e);
  const inSpec = new Set<string>();
  pool.spec.configs.forEach((cfg, i) => {
    inSpec.add(cfg.hostname);
    const r = syncEntry(cfg, i, oldByHost.get(cfg.hostname), nowMs);
    entries.push(r.entry);
    for (const d of r.drift) drift.push(d);
  });
  // Held entries that are no longer in the spec stay as they are (shared; callers copy on write).
  for (const e of old) if (e.machine && !inSpec.has(e.hostname)) entries.push(e);
  status.entries = entries;
  status.total = pool.spec.configs.length;
  let available = 0;
  for (const e of entries) if (!e.machine && inSpec.has(e.hostname)) available++;
  status.available = available;
  return drift;
}

interface SyncedEntry {
  entry: PoolEntryStatus;
  drift: string[];
}

/**
 * syncEntry results for (config, previous entry) pairs of stored, frozen
 * objects: both never change, so neither does the result (nor its drift
 * messages, which also name the config's index, kept with the result). Only
 * results that are the previous entry itself are kept (nothing to rebuild,
 * no clock reading, nothing a caller could edit). A large
 * pool's configs and entries are the same objects from one stored version to
 * the next (the store shares unchanged subtrees), so syncing an unchanged
 * entry costs two map lookups instead of rebuilding it.
 */
const syncCache = new WeakMap<PoolConfig, WeakMap<PoolEntryStatus, SyncedEntry & { index: number }>>();

function syncEntry(cfg: PoolConfig, i: number, prev: PoolEntryStatus | undefined, nowMs: number): SyncedEntry {
  const cacheable = prev !== undefined && Object.isFrozen(cfg) && Object.isFrozen(prev);
  if (cacheable) {
    const hit = syncCache.get(cfg)?.get(prev);
    if (hit && hit.index === i) return hit;
  }
  const drift: string[] = [];
  const accepted: PersistentDisk[] = [...(prev?.acceptedDisks ?? [])];
  for (const d of cfg.persistentDisks ?? []) {
    const a = accepted.find((x) => x.slot === d.slot);
    if (!a) {
      // Appending a disk is allowed (DISK-6): accept it now; it is attached on the next replacement.
      const { mountOptions: _mo, ...fixed } = d;
      accepted.push(fixed);
      continue;
    }
    for (const f of DISK_FIELDS) {
      if (a[f] !== d[f]) {
        drift.push(`DISK-4: spec.configs[${i}].persistentDisks[slot ${d.slot}].${f} changed from ${JSON.stringify(a[f])} to ${JSON.stringify(d[f])} after the provider accepted it; the accepted value stays in use`);
      }
    }
  }
  accepted.sort((a, b) => a.slot - b.slot);
  let clock = false;
  const disks: PersistentDiskStatus[] = accepted.map((a) => {
    const p = prev?.persistentDisks?.find((x) => x.slot === a.slot);
    if (p) return { ...p, mountPath: a.mountPath };
    clock = true;
    return { slot: a.slot, phase: 'Pending', mountPath: a.mountPath, lastTransitionTime: rfc3339(nowMs) };
  });
  const built: PoolEntryStatus = {
    hostname: cfg.hostname,
    ...(prev?.machine ? { machine: prev.machine } : {}),
    ...(accepted.length ? { acceptedDisks: accepted } : {}),
    ...(disks.length ? { persistentDisks: disks } : {}),
  };
  // Equal as JSON data (key order aside, as for the apiserver): keep the old object.
  const entry = prev !== undefined && jsonEqual(built, prev) ? prev : built;
  const out = { entry, drift };
  if (cacheable && !clock && entry === prev) {
    let m = syncCache.get(cfg);
    if (!m) syncCache.set(cfg, (m = new WeakMap()));
    m.set(prev, { ...out, index: i });
  }
  return out;
}

export type BindResult = { hostname: string; config: PoolConfig; entry: PoolEntryStatus } | { none: true; total: number; holders: string[] };

/**
 * Bind a free entry to `machine` (POOL-4), preferring the entry it already
 * holds, then `preferred` (its recorded hostname), then the first free entry
 * in spec order. An entry is free when unbound or bound to an HCSMachine that
 * no longer exists.
 */
export async function bindEntry(client: KubeClient, ref: ObjectRef, machine: string, preferred: string | undefined, nowMs: number): Promise<BindResult | undefined> {
  // Fast path (every reconcile of a bound machine): the entry it holds, no list, no write.
  const cur = await getShared<HCSMachineConfigPool>(client, ref);
  if (!cur) return undefined;
  const held = heldEntry(cur, machine, preferred, nowMs);
  const at = held && configPosition(cur.spec.configs, held.hostname);
  const heldCfg = at === undefined ? undefined : cur.spec.configs[at];
  if (held && heldCfg && statusInSync(cur, nowMs)) return { hostname: held.hostname, config: structuredClone(heldCfg), entry: structuredClone(held) };
  const isLive = await liveMachines(client, ref.namespace ?? 'default');
  let result: BindResult | undefined;
  await mutatePoolStatus(client, ref, (pool, stored) => {
    const before = { ...(pool.status ?? {}) };
    // A version in sync (the usual case, remembered per version) would come out of syncEntries unchanged.
    if (!statusInSync(stored, nowMs)) syncEntries(pool, nowMs);
    pool.status!.entries ??= [];
    const entries = pool.status!.entries;
    const configs = pool.spec.configs;
    const entryByHost = new Map<string, PoolEntryStatus>();
    for (const e of entries) if (!entryByHost.has(e.hostname)) entryByHost.set(e.hostname, e);
    const inSpec = (e: PoolEntryStatus): PoolConfig | undefined => {
      const i = configPosition(configs, e.hostname);
      return i === undefined ? undefined : configs[i];
    };
    const free = (e: PoolEntryStatus): boolean => !e.machine || (e.machine !== machine && !isLive(e.machine));
    let entry = entries.find((e) => e.machine === machine && inSpec(e));
    if (!entry && preferred) entry = entries.find((e) => e.hostname === preferred && inSpec(e) && free(e));
    if (!entry) {
      for (const cfg of configs) {
        const e = entryByHost.get(cfg.hostname);
        if (e && free(e)) {
          entry = e;
          break;
        }
      }
    }
    if (!entry) {
      result = { none: true, total: pool.spec.configs.length, holders: entries.filter((e) => e.machine).map((e) => `${e.hostname}=${e.machine}`) };
      return !sameJsonText(pool.status, before);
    }
    // Entries are shared with the stored status: replace, never edit (see syncEntries).
    const at = entries.indexOf(entry);
    // Stale bindings to machines that are gone are cleared on the way (POOL-4).
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (e.machine && e.machine !== machine && !isLive(e.machine)) {
        const { machine: _m, ...rest } = e;
        entries[i] = rest;
      }
    }
    const chosen = entries[at]!;
    entry = entries[at] = chosen.machine === machine ? chosen : { ...chosen, machine };
    pool.status!.available = availableEntries(entries, configs);
    result = { hostname: entry.hostname, config: structuredClone(inSpec(entry)!), entry: structuredClone(entry) };
    return !sameJsonText(pool.status, before);
  });
  return result;
}

/**
 * Names of the HCSMachines that exist, per namespace, for a store whose watch
 * handlers run synchronously inside each write (the embedded store): listed
 * once, then kept by a watch, so they are always current. A liveness question
 * is then one Set lookup with the entry's own machine-name string (whose hash
 * the engine keeps), instead of building a key and reading the store for each
 * bound entry of a large pool on every binding and refresh. Per client object.
 */
const machineNames = new WeakMap<KubeClient, Map<string, Set<string>>>();
function existingMachineNames(client: KubeClient): Map<string, Set<string>> | undefined {
  const known = machineNames.get(client);
  if (known) return known;
  if (!client.listSharedSync) return undefined;
  const names = new Map<string, Set<string>>();
  const set = (o: Readonly<KubeObject>, present: boolean): void => {
    const ns = o.metadata.namespace ?? 'default';
    let s = names.get(ns);
    if (!s) names.set(ns, (s = new Set()));
    if (present) s.add(o.metadata.name);
    else s.delete(o.metadata.name);
  };
  // List and watch in one synchronous step: no write can fall between them.
  for (const o of client.listSharedSync<HCSMachine>('HCSMachine')) set(o, true);
  client.watch<HCSMachine>('HCSMachine', (e) => set(e.object, e.type !== 'DELETED'), { shared: true });
  machineNames.set(client, names);
  return names;
}

/**
 * Does an HCSMachine of this name exist in `namespace`? From the names kept
 * above where the store allows it; elsewhere from one list taken now.
 */
async function liveMachines(client: KubeClient, namespace: string): Promise<(name: string) => boolean> {
  const kept = existingMachineNames(client);
  if (kept) return (name) => kept.get(namespace)?.has(name) ?? false;
  const names = new Set((await listShared<HCSMachine>(client, 'HCSMachine', { namespace })).map((m) => m.metadata.name));
  return (name) => names.has(name);
}

/**
 * The entry `machine` holds (the first one, as `find` would return it). A
 * bound machine knows its hostname (`preferred`, from its status): in a pool
 * whose status is in sync with its spec, the entry of the config at position
 * i is entries[i], so one position lookup in the spec's (stable) hostname
 * index answers it without indexing the entries of every new pool version.
 * The entry found there is the first one the machine holds because bindEntry
 * never binds a machine that holds an entry to a second one (it looks for the
 * held entry first) and releaseEntry releases them all.
 */
function heldEntry(pool: Readonly<HCSMachineConfigPool>, machine: string, preferred: string | undefined, nowMs: number): PoolEntryStatus | undefined {
  const entries = pool.status?.entries;
  if (preferred !== undefined && entries) {
    const i = configPosition(pool.spec.configs, preferred);
    const e = i === undefined ? undefined : entries[i];
    if (e && e.hostname === preferred && e.machine === machine && statusInSync(pool, nowMs)) return e;
  }
  // One scan, not an index: a machine without a recorded hostname asks once (its first binding), and
  // every binding writes a new version of the entries, so a per-version index would be rebuilt for each ask.
  return entries?.find((e) => e.machine === machine);
}

/**
 * Position of the first config with `hostname` (as `findIndex`, undefined
 * when none). Indexed once per stored, frozen configs array (the same object
 * from one pool version to the next while the spec does not change), so the
 * many reconciles that read it look up in O(1); arrays that are not frozen
 * are scanned.
 */
const positions = new WeakMap<readonly PoolConfig[], Map<string, number>>();
function configPosition(configs: readonly PoolConfig[], hostname: string): number | undefined {
  if (!Object.isFrozen(configs)) {
    const i = configs.findIndex((c) => c.hostname === hostname);
    return i < 0 ? undefined : i;
  }
  let m = positions.get(configs);
  if (!m) {
    m = new Map();
    configs.forEach((c, i) => {
      if (!m!.has(c.hostname)) m!.set(c.hostname, i);
    });
    positions.set(configs, m);
  }
  return m.get(hostname);
}

/** status.available: unbound entries whose hostname is in the spec. */
function availableEntries(entries: readonly PoolEntryStatus[], configs: readonly PoolConfig[]): number {
  let n = 0;
  for (const e of entries) if (!e.machine && configPosition(configs, e.hostname) !== undefined) n++;
  return n;
}

/**
 * Is the pool's status.entries in line with its spec (syncEntries would change
 * nothing)? A function of the pool version alone, so it is remembered per
 * stored version (the embedded store hands out one frozen object per version;
 * other backends return fresh objects, which simply miss): the many
 * reconciles between two writes of a large pool do not each redo the
 * O(entries) comparison.
 */
const inSyncCache = new WeakMap<object, boolean>();
/** Per pool uid, the last stored version found in sync (the base of inSyncFrom). */
const lastInSync = new Map<string, Readonly<HCSMachineConfigPool>>();
function statusInSync(pool: Readonly<HCSMachineConfigPool>, nowMs: number): boolean {
  let v = inSyncCache.get(pool);
  const uid = pool.metadata.uid;
  if (v === undefined && uid) {
    const base = lastInSync.get(uid);
    if (base) v = inSyncFrom(base, pool, nowMs);
  }
  if (v === undefined) {
    // syncEntries replaces entries and leaves the old ones alone: a shallow copy is enough.
    const copy = { ...pool, status: { ...pool.status } } as HCSMachineConfigPool;
    syncEntries(copy, nowMs);
    // Key order does not matter (a write differing only in it is a no-op for the apiserver).
    v = jsonEqual(copy.status, pool.status);
  }
  inSyncCache.set(pool, v);
  if (v && uid && Object.isFrozen(pool)) lastInSync.set(uid, pool);
  return v;
}

/** Do the configs name distinct hostnames? (Remembered per stored, frozen configs array.) */
const uniqueCache = new WeakMap<readonly PoolConfig[], boolean>();
function uniqueHostnames(configs: readonly PoolConfig[]): boolean {
  let v = uniqueCache.get(configs);
  if (v === undefined) {
    v = new Set(configs.map((c) => c.hostname)).size === configs.length;
    if (Object.isFrozen(configs)) uniqueCache.set(configs, v);
  }
  return v;
}

/**
 * The in-sync verdict of `pool` from an earlier stored version `base` that
 * was in sync, looking only at the entries that are not the same objects:
 * true when syncEntries would change nothing, undefined when that is not
 * certain this way (the caller then computes it in full). With the same spec
 * object, the same number of entries and every changed entry keeping its
 * hostname, syncEntries maps each config to the entry at its own position
 * (as for `base`; configs with distinct hostnames, so no other entry is
 * first for that hostname); an unchanged entry gives the same result as for `base`
 * (itself), a changed one is synced anew, and the counts are recounted.
 */
function inSyncFrom(base: Readonly<HCSMachineConfigPool>, pool: Readonly<HCSMachineConfigPool>, nowMs: number): true | undefined {
  if (base.spec !== pool.spec) return undefined;
  const a = base.status?.entries ?? [];
  const b = pool.status?.entries ?? [];
  const configs = pool.spec.configs;
  if (a.length !== b.length || pool.status?.total !== configs.length || !uniqueHostnames(configs)) return undefined;
  let available = 0;
  for (let i = 0; i < b.length; i++) {
    const e = b[i]!;
    if (i < configs.length && !e.machine) available++;
    if (e === a[i]) continue;
    if (e.hostname !== a[i]!.hostname) return undefined;
    if (i < configs.length ? syncEntry(configs[i]!, i, e, nowMs).entry !== e : !e.machine) return undefined;
  }
  return available === pool.status?.available ? true : undefined;
}

/**
 * Read-modify-write of a pool's status (as mutateStatus) without a deep copy
 * of the (large) pool: `mutate` gets the stored version with a fresh
 * top-level status object and entries array (`status.entries` is a new array
 * of the stored entries) and must replace, not edit, anything below that
 * (copy on write: an edited entry is a new object in the array, the others
 * stay the stored ones, as syncEntries leaves them). The written object shares its
 * unchanged parts with the stored version, which the store then neither
 * copies nor re-validates; the request is the same full status.
 */
async function mutatePoolStatus(
  client: KubeClient,
  ref: ObjectRef,
  mutate: (pool: HCSMachineConfigPool, stored: Readonly<HCSMachineConfigPool>) => boolean | void,
  attempts = 8,
): Promise<Readonly<HCSMachineConfigPool> | undefined> {
  for (let i = 0; ; i++) {
    const cur = await getShared<HCSMachineConfigPool>(client, ref);
    if (!cur) return undefined;
    const st = cur.status;
    const pool = { ...cur, ...(st ? { status: { ...st, ...(st.entries ? { entries: [...st.entries] } : {}) } } : {}) } as HCSMachineConfigPool;
    if (mutate(pool, cur) === false) return pool;
    try {
      // Read-only result (the stored version where the backend shares it): no O(entries) copy back.
      return await updateStatusShared(client, pool);
    } catch (e) {
      if (!isConflict(e) || i >= attempts - 1) throw e;
    }
  }
}

/** Release every entry bound to `machine`. */
export async function releaseEntry(client: KubeClient, ref: ObjectRef, machine: string): Promise<string[]> {
  const released: string[] = [];
  await mutatePoolStatus(client, ref, (pool) => {
    released.length = 0;
    let changed = false;
    const entries = pool.status?.entries;
    entries?.forEach((e, i) => {
      if (e.machine === machine) {
        const { machine: _m, ...rest } = e;
        entries[i] = rest;
        released.push(e.hostname);
        changed = true;
      }
    });
    if (!changed) return false;
    pool.status!.available = availableEntries(pool.status!.entries ?? [], pool.spec.configs);
    return true;
  });
  return released;
}

/** Record runtime state of one persistent disk in the pool status (POOL-5). */
export async function updateDiskStatus(
  client: KubeClient,
  ref: ObjectRef,
  hostname: string,
  slot: number,
  patch: Partial<PersistentDiskStatus>,
  nowMs: number,
): Promise<void> {
  // Read-modify-write of one disk of one entry: the rest of the (large) status is passed on as read,
  // so the store shares it with the stored version instead of copying and re-validating it.
  for (let attempt = 0; ; attempt++) {
    const pool = await getShared<HCSMachineConfigPool>(client, ref);
    const entries = pool?.status?.entries;
    const ei = entries?.findIndex((e) => e.hostname === hostname) ?? -1;
    const entry = ei >= 0 ? entries![ei]! : undefined;
    const di = entry?.persistentDisks?.findIndex((x) => x.slot === slot) ?? -1;
    if (!pool || !entry || di < 0) return;
    const d = patchedDisk(entry.persistentDisks![di]!, patch, nowMs);
    if (d === entry.persistentDisks![di]) return;
    const disks = entry.persistentDisks!.map((x, i) => (i === di ? d : x));
    const status = { ...pool.status, entries: entries!.map((e, i) => (i === ei ? { ...entry, persistentDisks: disks } : e)) };
    try {
      const saved = await updateStatusShared<HCSMachineConfigPool>(client, { ...pool, status } as HCSMachineConfigPool);
      // The new version differs from `pool` only in fields of one disk that syncEntries carries over
      // unchanged (it rewrites mountPath alone): its in-sync verdict is that of `pool` (see statusInSync).
      const verdict = inSyncCache.get(pool);
      if (verdict !== undefined && !('mountPath' in patch) && saved !== pool) inSyncCache.set(saved, verdict);
      return;
    } catch (e) {
      if (!isConflict(e) || attempt >= 7) throw e;
    }
  }
}

/**
 * `d` with `patch` applied (undefined deletes a field; a phase change stamps
 * lastTransitionTime), or `d` itself when nothing would change. Never edits
 * `d` (it may be part of the stored status). Disk status fields are strings
 * and numbers, so a field-by-field comparison is exactly the JSON one.
 */
function patchedDisk(d: PersistentDiskStatus, patch: Partial<PersistentDiskStatus>, nowMs: number): PersistentDiskStatus {
  const cur = d as unknown as Record<string, unknown>;
  let changed = false;
  for (const k of Object.keys(patch)) {
    const v = (patch as Record<string, unknown>)[k];
    if (v === undefined ? cur[k] !== undefined : cur[k] !== v) {
      changed = true;
      break;
    }
  }
  if (!changed) return d;
  const phaseChanged = patch.phase !== undefined && patch.phase !== d.phase;
  const out = { ...cur };
  for (const k of Object.keys(patch)) {
    const v = (patch as Record<string, unknown>)[k];
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  const next = out as unknown as PersistentDiskStatus;
  if (phaseChanged) next.lastTransitionTime = rfc3339(nowMs);
  return next;
}

export function diskPhaseOf(v: Pick<CloudVolume, 'status'> | undefined): string {
  if (!v) return 'Pending';
  switch (v.status) {
    case 'creating':
      return 'Creating';
    case 'available':
      return 'Available';
    case 'attaching':
      return 'Attaching';
    case 'in-use':
      return 'Attached';
    case 'detaching':
      return 'Detaching';
    case 'deleting':
      return 'Deleting';
    default:
      return v.status.startsWith('error') ? 'Error' : v.status;
  }
}

const TRANSITIONAL = new Set(['Creating', 'Attaching', 'Detaching']);

/** Pool controller: entries, counts, bindings, disk runtime state refreshed from EVS. */
export class PoolController implements Controller {
  readonly name = POOL_CONTROLLER;
  /** Sums every entry and disk of the pool: coalesce bursts of child events (see Controller.coalesce). */
  readonly coalesce = true;
  private readonly rep: Reporter;
  /** The pool whose status this controller is writing right now (see ownWrite). */
  private writing: string | undefined;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cloud: CloudApi,
  ) {
    this.rep = new Reporter(ctx, POOL_CONTROLLER);
  }

  /**
   * Is this watch event of pool `key` this controller's own status write? The
   * watch does not schedule another refresh for it: the refresh that wrote it
   * has just read the cloud, and what changes there later is picked up by the
   * refreshes the machine controller asks for when it touches a disk and by
   * the 5 s requeue while a disk is in transition (as a controller-runtime
   * predicate drops a controller's own status updates). Backends that deliver
   * watch events asynchronously simply never match.
   */
  ownWrite(key: string): boolean {
    return this.writing === key;
  }

  /**
   * Hostname -> the live HCSMachine of this pool that holds it (its status.hostname), for the hostnames of the spec
   * the pool's status has no entry for yet: a new pool has none; one deleted and applied again, or restored from a
   * backup without its status, has its running machines. Listed only when the status lacks an entry.
   */
  private async heldHostnames(pool: Readonly<HCSMachineConfigPool>, isLive: (machine: string) => boolean): Promise<Map<string, string>> {
    const known = new Set((pool.status?.entries ?? []).map((e) => e.hostname));
    const out = new Map<string, string>();
    if (pool.spec.configs.every((c) => known.has(c.hostname))) return out;
    const ns = pool.metadata.namespace ?? 'default';
    for (const hm of await listShared<HCSMachine>(this.ctx.mgmt, 'HCSMachine', { namespace: ns })) {
      const host = hm.status?.hostname;
      if (!host || known.has(host) || hm.spec.configPoolRef?.name !== pool.metadata.name || !isLive(hm.metadata.name)) continue;
      // Two machines naming one hostname (itself a POOL-4 breach): the first by name, so the choice is stable.
      const cur = out.get(host);
      if (cur === undefined || hm.metadata.name < cur) out.set(host, hm.metadata.name);
    }
    return out;
  }

  async reconcile(key: string): Promise<Result | void> {
    const [namespace, name] = key.split('/') as [string, string];
    const ref = poolRef(namespace, name);
    const pool0 = await getShared<HCSMachineConfigPool>(this.ctx.mgmt, ref);
    if (!pool0 || pool0.metadata.deletionTimestamp) return;
    const cluster = pool0.metadata.labels?.[LABEL_CLUSTER_NAME];
    let volumes: CloudVolume[] = [];
    // Only the provider's persistent disks (every volume the disk claimer creates carries hcs.io/persistent):
    // EVS filters by metadata server-side, so the cluster's root and data volumes are not listed at all.
    if (cluster) volumes = await this.cloud.listVolumes({ metadata: { [META_CLUSTER]: cluster, [META_PERSISTENT]: 'true' } });
    const isLive = await liveMachines(this.ctx.mgmt, namespace);
    let drift: string[] = [];
    let transitional = false;
    const now = this.ctx.clock.now();
    // The cluster's persistent volumes by (hostname, slot), oldest first (one pass, not one scan per disk).
    const bySlot = new Map<string, CloudVolume[]>();
    for (const v of volumes) {
      if (v.metadata?.[META_CLUSTER] !== cluster || v.status === 'deleting') continue;
      const h = v.metadata?.[META_HOSTNAME];
      const sl = v.metadata?.[META_SLOT];
      if (h === undefined || sl === undefined) continue;
      const k = `${h}\u0000${sl}`;
      const list = bySlot.get(k) ?? [];
      bySlot.set(k, list);
      list.push(v);
    }
    for (const list of bySlot.values()) list.sort((a, b) => ((a.created_at ?? '') < (b.created_at ?? '') ? -1 : (a.created_at ?? '') > (b.created_at ?? '') ? 1 : a.id.localeCompare(b.id)));
    const claims = await this.heldHostnames(pool0, isLive);
    const restored: string[] = [];
    this.writing = key;
    const saved = await mutatePoolStatus(this.ctx.mgmt, ref, (pool, stored) => {
      const before = { ...(pool.status ?? {}) };
      const hadEntry = new Set((stored.status?.entries ?? []).map((e) => e.hostname));
      restored.length = 0;
      drift = syncEntries(pool, now);
      const st = pool.status!;
      // setCondition edits the list and its items in place; the read ones are shared.
      if (st.conditions) st.conditions = st.conditions.map((c) => ({ ...c }));
      // Entries and their disks are shared with the stored status: an entry that changes is replaced.
      const entries = st.entries ?? [];
      for (let i = 0; i < entries.length; i++) {
        let e = entries[i]!;
        if (e.machine && !isLive(e.machine)) {
          const { machine: _m, ...rest } = e;
          e = rest;
        }
        // POOL-4: an entry this pool never had a status for, whose hostname a running machine of the pool holds (a
        // pool deleted and applied again, or restored without its status): it is that machine's, not free.
        const holder = !e.machine && !hadEntry.has(e.hostname) ? claims.get(e.hostname) : undefined;
        if (holder) {
          e = { ...e, machine: holder };
          restored.push(`${e.hostname}=${holder}`);
        }
        const disks = e.persistentDisks ?? [];
        let nextDisks: PersistentDiskStatus[] | undefined;
        for (let j = 0; j < disks.length; j++) {
          const d = disks[j]!;
          const matches = bySlot.get(`${e.hostname}\u0000${d.slot}`) ?? [];
          const v = (d.volumeId ? matches.find((x) => x.id === d.volumeId) : undefined) ?? matches[0];
          if (!v) continue; // nothing known yet (or a hand-made volume: the machine controller records it)
          const srv = attachedServers(v)[0];
          const nd = patchedDisk(d, { volumeId: v.id, phase: diskPhaseOf(v), attachedServerId: srv, message: undefined }, now);
          if (nd !== d) (nextDisks ??= [...disks])[j] = nd;
          if (TRANSITIONAL.has(nd.phase)) transitional = true;
        }
        if (nextDisks) e = { ...e, persistentDisks: nextDisks };
        if (e !== entries[i]) entries[i] = e;
      }
      st.available = availableEntries(st.entries ?? [], pool.spec.configs);
      const conds = (st.conditions ??= []);
      if (drift.length) setCondition(conds, { type: 'DisksAccepted', status: 'False', reason: 'ImmutableFieldChanged', message: drift.join('; ') }, now);
      else setCondition(conds, { type: 'DisksAccepted', status: 'True' }, now);
      st.observedGeneration = pool.metadata.generation;
      return !sameJsonText(st, before);
    }).finally(() => {
      this.writing = undefined;
    });
    if (saved && restored.length) {
      this.rep.info('pool.entry-restored', `pool ${key}: entries bound again to the running machines that hold them (the pool had no status for them): ${restored.join(', ')}`, { pool: key, entries: [...restored] }, ['POOL-4']);
    }
    if (saved && drift.length) {
      const prev = pool0.status?.conditions?.find((c) => c.type === 'DisksAccepted');
      if (prev?.status !== 'False' || prev.message !== drift.join('; ')) {
        this.rep.error('pool.disk-drift', `pool ${key}: ${drift.join('; ')}`, { pool: key }, ['DISK-4']);
        await this.rep.k8sEvent(saved, 'Warning', 'ImmutableFieldChanged', drift.join('; '), ['DISK-4']);
      }
    }
    return transitional ? { requeueAfter: POOL_REFRESH_MS } : undefined;
  }
}

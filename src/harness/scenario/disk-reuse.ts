/**
 * The disk-reuse contract, stated continuously in the cloud's own terms
 * (issue 22). Checked at every quiescent instant of a run, like the other
 * invariants (invariants.ts), and read ONLY from what any provider exposes:
 *
 * - the cloud: servers (which exist, their volumes), persistent volumes with
 *   their identity metadata `hcs.io/cluster`, `hcs.io/hostname`, `hcs.io/slot`
 *   (docs/provider.md) and the server they are attached to;
 * - Kubernetes objects: `HCSMachine.spec.serverId`, `.status.hostname`,
 *   `.spec.configPoolRef`, `HCSMachineConfigPool.spec.configs[]` and
 *   `.status.entries[].machine / .acceptedDisks`;
 * - the guests: what each running node mounts (its cloud-init, DISK-5).
 *
 * Never the reference provider's logs, events or internal names.
 *
 * Which server serves which hostname is learnt from the HCSMachines
 * (`spec.serverId` + `status.hostname`) and remembered: a server keeps the
 * hostname and machine it was built for after its HCSMachine is gone (a
 * provider that removes its finalizer too early leaves exactly that behind).
 *
 * The statements:
 * - DISK-3: a persistent volume of (hostname H, slot S) is attached only to a
 *   server that serves H;
 * - DISK-9: ... and never while another server that serves H still exists
 *   (the old server is still detaching or being deleted);
 * - POOL-4: a pool entry is released (free, or bound to another machine) only
 *   once every server of its former holder is gone;
 * - DISK-3: the volume mounted at each persistent path of a running node is
 *   that node's (hostname, slot) volume, the slot being the one the pool
 *   gives that path;
 * - DISK-6: a persistent disk whose slot was appended to the pool after a
 *   server was first seen is never attached to that server (no hot attach);
 * - TPL-3: every other path a running node mounts (root, dataVolumes) is
 *   ephemeral: never on a volume the cloud marks hcs.io/persistent (issue 37:
 *   this was once caught only by an event count);
 * - TPL-3: each of the machine's dataVolumes is mounted at its mountPath from
 *   a volume of its own, attached to the server, neither the root disk nor
 *   another data volume's (a device named off by one is the root disk).
 */
import { LABEL_CLUSTER_NAME } from '../../product/api/capi.js';
import { persistentDiskIdentity, type HCSMachine, type HCSMachineConfigPool, type PersistentDisk } from '../../product/api/hcs.js';
import { listShared } from '../../core/kube/client.js';
import type { StateSource } from './world.js';
import { META_PERSISTENT } from '../../product/api/metadata.js';

/** A broken statement: rule, a stable key (reported once), the message, and ids to find its cause by. */
export interface ContractFinding {
  rule: string;
  key: string;
  message: string;
  refs: string[];
}

/** Who a server was built for. */
interface Serves {
  namespace: string;
  cluster: string;
  pool: string;
  hostname: string;
  machine: string;
  serverName: string;
}

const entryKey = (s: { namespace: string; pool: string; hostname: string }): string => `${s.namespace}/${s.pool}/${s.hostname}`;
/** The first 8 characters of a cloud id, as the invariants' messages show it. */
export const short = (id: string): string => id.slice(0, 8);

export class DiskReuseTracker {
  /** server id -> who it serves (remembered after its HCSMachine is gone). */
  private readonly serves = new Map<string, Serves>();
  /** server id -> the persistent slots its pool entry declared when the server was first seen (DISK-6). */
  private readonly slotsAtFirstSight = new Map<string, Set<number>>();

  constructor(private readonly world: StateSource) {}

  async findings(): Promise<ContractFinding[]> {
    const w = this.world;
    const hcsMachines = await listShared<HCSMachine>(w.mgmt, 'HCSMachine');
    const pools = await listShared<HCSMachineConfigPool>(w.mgmt, 'HCSMachineConfigPool');
    const poolByKey = new Map(pools.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
    const declared = (ns: string, pool: string, hostname: string): PersistentDisk[] => {
      const p = poolByKey.get(`${ns}/${pool}`);
      const accepted = p?.status?.entries?.find((e) => e.hostname === hostname)?.acceptedDisks;
      const spec = p?.spec.configs?.find((c) => c.hostname === hostname)?.persistentDisks ?? [];
      // Accepted disks stay in use when the spec changed them (DISK-4); appended slots come from the spec (DISK-6).
      const bySlot = new Map<number, PersistentDisk>(spec.map((d) => [d.slot, d]));
      for (const d of accepted ?? []) bySlot.set(d.slot, d);
      return [...bySlot.values()];
    };

    const live = new Map(w.cloud.listServers().filter((s) => s.status !== 'DELETED').map((s) => [s.id, s]));
    for (const hm of hcsMachines) {
      const id = hm.spec.serverId;
      const hostname = hm.status?.hostname;
      const pool = hm.spec.configPoolRef?.name;
      if (!id || !hostname || !pool || !live.has(id)) continue;
      const namespace = hm.metadata.namespace ?? 'default';
      const s: Serves = { namespace, cluster: hm.metadata.labels?.[LABEL_CLUSTER_NAME] ?? '', pool, hostname, machine: hm.metadata.name, serverName: live.get(id)!.name };
      if (!this.serves.has(id)) {
        this.serves.set(id, s);
        this.slotsAtFirstSight.set(id, new Set(declared(namespace, pool, hostname).map((d) => d.slot)));
      }
    }
    const out: ContractFinding[] = [];
    // Live servers per (namespace, pool, hostname).
    const serversOfEntry = new Map<string, string[]>();
    for (const id of live.keys()) {
      const s = this.serves.get(id);
      if (s) serversOfEntry.set(entryKey(s), [...(serversOfEntry.get(entryKey(s)) ?? []), id]);
    }
    const describe = (id: string): string => {
      const s = this.serves.get(id);
      return `server ${s?.serverName ?? live.get(id)?.name ?? '?'} (${short(id)}${s ? `, HCSMachine ${s.machine}` : ''})`;
    };

    // DISK-3 / DISK-9 / DISK-6: where each persistent volume is attached.
    for (const v of w.cloud.listVolumes()) {
      const ident = persistentDiskIdentity(v.metadata);
      if (!ident || v.metadata[META_PERSISTENT] !== 'true' || !v.attachedTo) continue;
      const sid = v.attachedTo;
      const s = this.serves.get(sid);
      if (!s) continue; // a server no HCSMachine ever claimed: the orphan check (HCS-1) speaks for it
      const what = `persistent volume ${v.name} (${short(v.id)}) of hostname ${ident.hostname} slot ${ident.slot}`;
      if (s.hostname !== ident.hostname || (ident.cluster !== undefined && s.cluster && ident.cluster !== s.cluster)) {
        out.push({
          rule: 'DISK-3',
          key: `DISK-3/foreign/${v.id}/${sid}`,
          message: `${what} is ${v.status} on ${describe(sid)}, which serves hostname ${s.hostname}${s.cluster ? ` of cluster ${s.cluster}` : ''}: a disk is attached only to a server of its own hostname`,
          refs: [v.id, sid, s.machine],
        });
        continue;
      }
      const others = (serversOfEntry.get(entryKey(s)) ?? []).filter((o) => o !== sid);
      if (others.length) {
        out.push({
          rule: 'DISK-9',
          key: `DISK-9/second-server/${v.id}/${sid}`,
          message: `${what} is ${v.status} on ${describe(sid)} while ${others.map(describe).join(', ')} still serves hostname ${ident.hostname} (not yet detached/deleted): the disk moves only once the old server is gone`,
          refs: [v.id, sid, ...others],
        });
      }
      const now = declared(s.namespace, s.pool, s.hostname);
      // A pool that does not exist (deleted, not yet applied again) declares nothing either way: not judged.
      if (poolByKey.has(`${s.namespace}/${s.pool}`) && !now.some((d) => d.slot === ident.slot)) {
        out.push({
          rule: 'DISK-3',
          key: `DISK-3/undeclared/${v.id}/${sid}`,
          message: `${what} is ${v.status} on ${describe(sid)}, but pool ${s.namespace}/${s.pool} declares no slot ${ident.slot} for ${s.hostname} (slots ${now.map((d) => d.slot).join(', ') || 'none'}): a server gets exactly its entry's (hostname, slot) volumes`,
          refs: [v.id, sid, s.machine],
        });
        continue;
      }
      const born = this.slotsAtFirstSight.get(sid);
      if (born && !born.has(ident.slot)) {
        out.push({
          rule: 'DISK-6',
          key: `DISK-6/hot-attach/${v.id}/${sid}`,
          message: `${what} was appended to pool ${s.namespace}/${s.pool} after ${describe(sid)} was built (it had slots ${[...born].sort().join(', ') || 'none'}) and is ${v.status} on it: an appended disk is attached only to the next replacement, never hot-attached`,
          refs: [v.id, sid, s.machine],
        });
      }
    }

    // POOL-4: an entry is released only once its holder's server is gone.
    const hmExists = new Set(hcsMachines.map((m) => `${m.metadata.namespace}/${m.metadata.name}`));
    for (const p of pools) {
      const ns = p.metadata.namespace ?? 'default';
      for (const e of p.status?.entries ?? []) {
        const holder = e.machine && hmExists.has(`${ns}/${e.machine}`) ? e.machine : undefined;
        for (const sid of serversOfEntry.get(entryKey({ namespace: ns, pool: p.metadata.name, hostname: e.hostname })) ?? []) {
          const s = this.serves.get(sid)!;
          if (s.machine === holder) continue;
          out.push({
            rule: 'POOL-4',
            key: `POOL-4/released-early/${ns}/${p.metadata.name}/${e.hostname}/${sid}/${holder ?? ''}`,
            message: `pool entry ${e.hostname} of ${ns}/${p.metadata.name} is ${holder ? `bound to HCSMachine ${holder}` : 'free'} while ${describe(sid)} of its former holder still exists (status ${live.get(sid)?.status}): an entry is released only once its holder's server is gone`,
            refs: [sid, s.machine, ...(holder ? [holder] : [])],
          });
        }
      }
    }

    // DISK-3: the volume mounted at each persistent path is the node's own (hostname, slot) volume.
    const volumes = new Map(w.cloud.listVolumes().map((v) => [v.id, v]));
    const checkedHosts = new Set<string>();
    for (const hm of hcsMachines) {
      const hostname = hm.status?.hostname;
      const pool = hm.spec.configPoolRef?.name;
      const sid = hm.spec.serverId;
      if (!hostname || !pool || !sid || hm.metadata.deletionTimestamp || live.get(sid)?.status !== 'ACTIVE' || checkedHosts.has(hostname)) continue;
      // The guest view is keyed by hostname: with two servers for one hostname (POOL-4 above) it is ambiguous.
      if ((serversOfEntry.get(entryKey({ namespace: hm.metadata.namespace ?? 'default', pool, hostname })) ?? []).length !== 1) continue;
      checkedHosts.add(hostname);
      const disks = declared(hm.metadata.namespace ?? 'default', pool, hostname);
      const mounts = w.guests.mounts(hostname);
      // TPL-3 / DISK-8: a path that is not one of the entry's persistent mountPaths (root, dataVolumes, anything else)
      // is ephemeral: it is never backed by a persistent disk (the cloud's hcs.io/persistent, not the guest's word).
      const poolKnown = poolByKey.has(`${hm.metadata.namespace ?? 'default'}/${pool}`);
      for (const m of mounts) {
        if (!poolKnown || disks.some((d) => d.mountPath === m.mountPath)) continue;
        const v = volumes.get(m.volumeId);
        if (v?.metadata[META_PERSISTENT] !== 'true') continue;
        const ident = persistentDiskIdentity(v.metadata);
        out.push({
          rule: 'TPL-3',
          key: `TPL-3/ephemeral-on-persistent/${hostname}/${m.mountPath}/${m.volumeId}`,
          message: `node ${hostname} mounts persistent volume ${v.name} (${short(v.id)})${ident ? ` of hostname ${ident.hostname} slot ${ident.slot}` : ''} at ${m.mountPath}, which is no persistent mountPath of pool ${pool} entry ${hostname} (${disks.map((d) => d.mountPath).join(', ') || 'none'}): an ephemeral path (root, dataVolumes) is never on a persistent disk`,
          refs: [m.volumeId, sid, hm.metadata.name],
        });
      }
      // TPL-3: each of the machine's dataVolumes is its own ephemeral volume, mounted at its mountPath once the node
      // runs: not the root disk (a device name off by one is the root disk, /dev/vda), not another data volume's,
      // not a persistent disk (above), and attached to this server. Judged once the node has booted (root mounted).
      const rootMount = mounts.find((x) => x.mountPath === '/');
      const dataPaths = (hm.spec.dataVolumes ?? []).map((d) => d.mountPath).filter((p): p is string => !!p);
      if (rootMount && dataPaths.length) {
        const used = new Map<string, string>();
        const attached = new Set((w.cloud.server(sid)?.volumes ?? []).map((x) => x.volumeId));
        for (const path of dataPaths) {
          const m = mounts.find((x) => x.mountPath === path);
          const problem = !m
            ? 'is not mounted'
            : m.volumeId === rootMount.volumeId
              ? `is on the root disk (${short(m.volumeId)})`
              : used.has(m.volumeId)
                ? `is on the volume ${short(m.volumeId)} that also holds ${used.get(m.volumeId)}`
                : !attached.has(m.volumeId)
                  ? `is on volume ${short(m.volumeId)}, which is not attached to the server`
                  : undefined;
          if (m) used.set(m.volumeId, path);
          if (!problem) continue;
          out.push({
            rule: 'TPL-3',
            key: `TPL-3/data-volume/${hostname}/${path}/${sid}`,
            message: `node ${hostname} (server ${short(sid)}, HCSMachine ${hm.metadata.name}): the data volume path ${path} ${problem}: each of the machine's dataVolumes is an ephemeral volume of its own, created with the server and mounted at its mountPath`,
            refs: [sid, hm.metadata.name, ...(m ? [m.volumeId] : [])],
          });
        }
      }
      for (const d of disks) {
        const m = mounts.find((x) => x.mountPath === d.mountPath);
        if (!m) continue; // not mounted (yet, or appended after boot: DISK-6)
        const v = volumes.get(m.volumeId);
        const ident = persistentDiskIdentity(v?.metadata);
        if (v && ident && v.metadata[META_PERSISTENT] === 'true' && ident.hostname === hostname && ident.slot === d.slot) continue;
        out.push({
          rule: 'DISK-3',
          key: `DISK-3/mount/${hostname}/${d.mountPath}/${m.volumeId}`,
          message: `node ${hostname} mounts ${v ? `volume ${v.name} (${short(v.id)})` : `volume ${m.volumeId}`}${ident ? ` of hostname ${ident.hostname} slot ${ident.slot}` : ' (no persistent identity)'} at ${d.mountPath}, which pool ${pool} gives slot ${d.slot} of ${hostname}: the path must hold the (${hostname}, slot ${d.slot}) volume`,
          refs: [m.volumeId, sid, hm.metadata.name],
        });
      }
    }
    // Forget servers that are gone (their ids are never reused).
    for (const id of [...this.serves.keys()]) {
      if (!live.has(id)) {
        this.serves.delete(id);
        this.slotsAtFirstSight.delete(id);
      }
    }
    return out;
  }
}

/**
 * Continuous invariants (checked at every quiescent instant of a run and at
 * its end). Each violation is reported once, with the event that most
 * recently touched the offending resource — the likely cause.
 */
import type { HCSMachine } from '../api/hcs.js';
import type { Machine } from '../api/capi.js';
import type { Node } from '../api/core.js';
import type { LogEvent } from '../core/events.js';
import { getShared, listShared } from '../kube/client.js';
import type { World } from './world.js';

export interface Violation {
  rule: string;
  /** Stable key so a violation is reported once. */
  key: string;
  message: string;
  /** Virtual time it was first seen. */
  at: number;
  /** seq of the event that most recently touched the resource. */
  causeSeq?: number;
  cause?: string;
}

interface Finding {
  rule: string;
  key: string;
  message: string;
  /** Ids (volume, server, machine names) to find the causing event by. */
  refs: string[];
}

const PERSISTENT = 'hcs.io/persistent';

export class InvariantMonitor {
  private readonly violations = new Map<string, Violation>();
  /** Persistent volumes ever seen: id -> name. */
  private readonly persistentSeen = new Map<string, string>();

  constructor(
    private readonly world: World,
    private readonly events: () => readonly LogEvent[],
  ) {}

  all(): Violation[] {
    return [...this.violations.values()].sort((a, b) => a.at - b.at || a.key.localeCompare(b.key));
  }

  /** Check everything that must hold at any instant. Returns the new violations. */
  async check(): Promise<Violation[]> {
    return this.record([...this.cloudFindings(), ...(await this.clusterFindings())]);
  }

  /** Checks that only make sense when the system is meant to be at rest (end of a run). */
  async checkAtRest(): Promise<Violation[]> {
    const fresh = await this.check();
    return [...fresh, ...this.record(await this.orphanFindings())];
  }

  private record(findings: Finding[]): Violation[] {
    const fresh: Violation[] = [];
    for (const f of findings) {
      if (this.violations.has(f.key)) continue;
      const cause = this.causeOf(f.refs);
      const v: Violation = { rule: f.rule, key: f.key, message: f.message, at: this.world.clock.now(), ...(cause ? { causeSeq: cause.seq, cause: cause.message } : {}) };
      this.violations.set(f.key, v);
      fresh.push(v);
    }
    return fresh;
  }

  private causeOf(refs: string[]): LogEvent | undefined {
    const evs = this.events();
    for (let i = evs.length - 1; i >= 0 && i >= evs.length - 5000; i--) {
      const e = evs[i]!;
      if (e.source === 'scenario' || e.source === 'invariant') continue;
      const hay = e.message + (e.data ? JSON.stringify(e.data) : '');
      if (refs.some((r) => r && hay.includes(r))) return e;
    }
    return undefined;
  }

  private cloudFindings(): Finding[] {
    const out: Finding[] = [];
    const volumes = this.world.cloud.listVolumes();
    const present = new Set<string>();
    const byId = new Map(volumes.map((v) => [v.id, v]));
    for (const v of volumes) {
      if (v.metadata[PERSISTENT] !== 'true') continue;
      present.add(v.id);
      this.persistentSeen.set(v.id, v.name);
    }
    // DISK-9: a persistent disk is never deleted.
    for (const [id, name] of this.persistentSeen) {
      const v = byId.get(id);
      if (!present.has(id) || v?.status === 'deleting' || v?.status === 'deleted') {
        out.push({ rule: 'DISK-9', key: `DISK-9/deleted/${id}`, message: `persistent volume ${name} (${id}) was deleted`, refs: [id] });
      }
    }
    // DISK-9: never attached to two servers at once (the cloud refuses multi-attach; this guards the model itself).
    const servers = this.world.cloud.listServers();
    const holders = new Map<string, string[]>();
    for (const s of servers) {
      const d = this.world.cloud.server(s.id);
      for (const vol of d?.volumes ?? []) holders.set(vol.volumeId, [...(holders.get(vol.volumeId) ?? []), s.id]);
    }
    for (const [vid, sids] of holders) {
      if (sids.length > 1 && this.persistentSeen.has(vid)) {
        out.push({ rule: 'DISK-9', key: `DISK-9/multi/${vid}/${sids.sort().join(',')}`, message: `persistent volume ${this.persistentSeen.get(vid)} is attached to ${sids.length} servers (${sids.join(', ')})`, refs: [vid] });
      }
    }
    return out;
  }

  private async clusterFindings(): Promise<Finding[]> {
    const out: Finding[] = [];
    const hcsMachines = await listShared<HCSMachine>(this.world.mgmt, 'HCSMachine');
    // POOL-4: an entry is bound to at most one live machine.
    const byEntry = new Map<string, string[]>();
    for (const m of hcsMachines) {
      const host = m.status?.hostname;
      const pool = m.spec.configPoolRef?.name;
      if (!host || !pool) continue;
      const k = `${m.metadata.namespace}/${pool}/${host}`;
      byEntry.set(k, [...(byEntry.get(k) ?? []), m.metadata.name]);
    }
    for (const [entry, names] of byEntry) {
      if (names.length > 1) out.push({ rule: 'POOL-4', key: `POOL-4/${entry}/${names.sort().join(',')}`, message: `pool entry ${entry} is bound to ${names.length} machines: ${names.join(', ')}`, refs: names });
    }
    // TPL-4: providerID and serverId consistent with the cloud and the Machine.
    const machines = new Map((await listShared<Machine>(this.world.mgmt, 'Machine')).map((m) => [`${m.metadata.namespace}/${m.metadata.name}`, m]));
    for (const hm of hcsMachines) {
      const name = hm.metadata.name;
      const cluster = hm.metadata.labels?.['cluster.x-k8s.io/cluster-name'];
      if (hm.spec.providerID && cluster && hm.spec.providerID !== `hcs://${cluster}/${name}`) {
        out.push({ rule: 'TPL-4', key: `TPL-4/providerID/${name}`, message: `HCSMachine ${name} has providerID ${hm.spec.providerID}, expected hcs://${cluster}/${name}`, refs: [name] });
      }
      if (hm.spec.serverId && !hm.metadata.deletionTimestamp) {
        const s = this.world.cloud.server(hm.spec.serverId);
        if (s && s.name !== name) out.push({ rule: 'TPL-4', key: `TPL-4/serverId/${name}`, message: `HCSMachine ${name} points at server ${hm.spec.serverId} named ${s.name}`, refs: [name, hm.spec.serverId] });
      }
      const m = machines.get(`${hm.metadata.namespace}/${name}`);
      if (m?.spec.providerID && hm.spec.providerID && m.spec.providerID !== hm.spec.providerID) {
        out.push({ rule: 'TPL-4', key: `TPL-4/machine/${name}`, message: `Machine ${name} has providerID ${m.spec.providerID} but its HCSMachine has ${hm.spec.providerID}`, refs: [name] });
      }
    }
    // BOOT-4: a Node's kubelet version equals its Machine's version.
    for (const m of machines.values()) {
      if (!m.status?.nodeRef || !m.spec.version || m.metadata.deletionTimestamp) continue;
      const node = await getShared<Node>(this.world.workloads.client(m.metadata.namespace ?? 'default', m.spec.clusterName), { kind: 'Node', name: m.status.nodeRef.name });
      const v = node?.status?.nodeInfo?.kubeletVersion;
      if (v && v !== m.spec.version) out.push({ rule: 'BOOT-4', key: `BOOT-4/${m.metadata.name}`, message: `Node ${node!.metadata.name} runs kubelet ${v} but Machine ${m.metadata.name} asks for ${m.spec.version}`, refs: [m.metadata.name, node!.metadata.name] });
    }
    return out;
  }

  /** No orphans at rest: servers without a machine, leaked non-persistent volumes. */
  private async orphanFindings(): Promise<Finding[]> {
    const out: Finding[] = [];
    const hcsMachines = await listShared<HCSMachine>(this.world.mgmt, 'HCSMachine');
    const owned = new Set(hcsMachines.map((m) => m.spec.serverId).filter(Boolean));
    const servers = this.world.cloud.listServers().filter((s) => s.status !== 'DELETED');
    for (const s of servers) {
      if (!owned.has(s.id)) out.push({ rule: 'HCS-1', key: `orphan/server/${s.id}`, message: `server ${s.name} (${s.id}) is not owned by any HCSMachine (orphan)`, refs: [s.id] });
    }
    const attached = new Set<string>();
    for (const s of servers) for (const v of this.world.cloud.server(s.id)?.volumes ?? []) attached.add(v.volumeId);
    for (const v of this.world.cloud.listVolumes()) {
      if (v.metadata[PERSISTENT] === 'true' || attached.has(v.id) || v.status === 'deleted' || v.status === 'deleting') continue;
      out.push({ rule: 'TPL-3', key: `orphan/volume/${v.id}`, message: `ephemeral volume ${v.name} (${v.id}) is ${v.status} and attached to no server (leaked)`, refs: [v.id] });
    }
    return out;
  }
}

/**
 * POOL-5, stated continuously (issue 37): the pool's status shows the runtime
 * state of every entry and of its persistent disks — every field the provider
 * writes there, each compared with what it must say, derived from the cloud and
 * the pool's spec, never from the status itself:
 *
 * - status.total: the number of spec.configs[] hostnames; status.entries:
 *   one per hostname;
 * - entries[].machine: the HCSMachine holding the hostname (status.hostname and
 *   spec.configPoolRef), absent when none does; status.available: the
 *   hostnames no HCSMachine holds;
 * - entries[].persistentDisks[] (per slot the pool declares): volumeId — the
 *   EVS volume whose metadata hcs.io/cluster, hcs.io/hostname, hcs.io/slot name
 *   that identity (the oldest, or the one named when several exist); phase —
 *   that volume's EVS status in the provider's words (creating Creating,
 *   available Available, attaching Attaching, in-use Attached, detaching
 *   Detaching, error* Error; Pending while there is none); attachedServerId —
 *   the server it is attached to; mountPath — the accepted (else declared)
 *   mountPath of the slot; lastTransitionTime — moves forward whenever the phase
 *   changes and is never in the future.
 *
 * volumeId, phase and attachedServerId are the runtime state every provider
 * must show; mountPath and lastTransitionTime are judged once the
 * provider has been seen writing that field (docs/provider.md: a provider may
 * leave them out, and an outside provider that never writes one is not
 * reported for it — no false positive; one that writes it is held to it,
 * missing included).
 * A provider in its own process stamps with its wall clock, which may run
 * ahead of the run's clock: up to WALL_SKEW_MS is allowed there
 * (TestbedHandle.stampSkewMs), and whether a stamp moved with a phase change
 * is judged only with one clock for all (the embedded provider).
 *
 * A status lags the cloud by a refresh: a disagreement is a violation once the
 * same disagreement has lasted STALE_MS of virtual time (the provider refreshes
 * on every change it makes and every 10 s while a disk is in transition; the
 * end of a run may fall inside such a 10 s, so there is no stricter check at
 * rest).
 */
import { LABEL_CLUSTER_NAME } from '../../product/api/capi.js';
import type { HCSMachine, HCSMachineConfigPool } from '../../product/api/hcs.js';
import { listShared } from '../../core/kube/client.js';
import type { ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

/** How long one disagreement between the pool's status and the cloud may last (virtual ms). */
export const STALE_MS = 60_000;
/** How far ahead of the harness's wall clock a provider process's stamp may be (the processes' skew). */
export const WALL_SKEW_MS = 30_000;

/** The provider's words for an EVS volume status (docs/provider.md, HCSMachineConfigPool.status.entries[].persistentDisks[].phase). */
export function expectedPhase(evsStatus: string | undefined): string {
  if (evsStatus === undefined) return 'Pending';
  const words: Record<string, string> = { creating: 'Creating', available: 'Available', attaching: 'Attaching', 'in-use': 'Attached', detaching: 'Detaching', deleting: 'Deleting' };
  return words[evsStatus] ?? (evsStatus.startsWith('error') ? 'Error' : evsStatus);
}

interface Disagreement {
  key: string;
  field: string;
  have: unknown;
  want: unknown;
  refs: string[];
  where: string;
}

export class PoolStatusTracker {
  /** Disagreement key -> since when (virtual ms) the same values disagree. */
  private readonly since = new Map<string, { sig: string; at: number }>();
  /** pool/hostname/slot -> the last phase and lastTransitionTime seen, and when (virtual ms). */
  private readonly lastPhase = new Map<string, { phase: string; ltt?: string; at: number }>();

  /** The optional disk-status fields this provider has been seen writing. */
  private readonly writes = new Set<'mountPath' | 'lastTransitionTime'>();

  /** skewMs: how far ahead of the run's clock a stamp may be (a provider on its own wall clock; 0 on one clock). */
  constructor(
    private readonly world: StateSource,
    private readonly skewMs = 0,
  ) {}

  /** A disagreement is being timed: judge again when time passes, even if nothing changed. */
  pending(): boolean {
    return this.since.size > 0;
  }

  async findings(): Promise<ContractFinding[]> {
    const w = this.world;
    const now = w.clock.now();
    const skew = this.skewMs;
    const found: Disagreement[] = [];
    const out: ContractFinding[] = [];
    const pools = await listShared<HCSMachineConfigPool>(w.mgmt, 'HCSMachineConfigPool');
    const machines = await listShared<HCSMachine>(w.mgmt, 'HCSMachine');
    const allVolumes = w.cloud.listVolumes().filter((v) => v.status !== 'deleted' && v.status !== 'deleting');
    for (const p of pools) {
      if (!p.status || p.metadata.deletionTimestamp) continue;
      const ns = p.metadata.namespace ?? 'default';
      const pk = `${ns}/${p.metadata.name}`;
      const cluster = p.metadata.labels?.[LABEL_CLUSTER_NAME];
      const configs = p.spec.configs ?? [];
      const hostnames = [...new Set(configs.map((c) => c.hostname))];
      const holders = new Map<string, string[]>();
      for (const m of machines) {
        if ((m.metadata.namespace ?? 'default') !== ns || m.spec.configPoolRef?.name !== p.metadata.name || !m.status?.hostname) continue;
        holders.set(m.status.hostname, [...(holders.get(m.status.hostname) ?? []), m.metadata.name]);
      }
      const add = (key: string, field: string, have: unknown, want: unknown, where: string, refs: string[]): void => {
        if (JSON.stringify(have ?? null) !== JSON.stringify(want ?? null)) found.push({ key: `${pk}/${key}`, field, have, want, where, refs: [p.metadata.name, ...refs] });
      };
      add('total', 'status.total', p.status.total, hostnames.length, `pool ${pk}`, []);
      add('available', 'status.available', p.status.available, hostnames.filter((h) => !holders.get(h)?.length).length, `pool ${pk}`, []);
      const entries = p.status.entries ?? [];
      add('entries', 'status.entries[].hostname', entries.map((e) => e.hostname).sort(), [...hostnames].sort(), `pool ${pk}`, []);
      for (const e of entries) {
        const cfg = configs.find((c) => c.hostname === e.hostname);
        if (!cfg) continue;
        const held = holders.get(e.hostname) ?? [];
        // Two holders at once is POOL-4's to report; what the entry names is then not judged here.
        if (held.length <= 1) add(`${e.hostname}/machine`, `status.entries[${e.hostname}].machine`, e.machine, held[0], `pool ${pk}`, held);
        const accepted = new Map((e.acceptedDisks ?? cfg.persistentDisks ?? []).map((d) => [d.slot, d]));
        for (const d of cfg.persistentDisks ?? []) if (!accepted.has(d.slot)) accepted.set(d.slot, d);
        for (const d of e.persistentDisks ?? []) {
          const where = `pool ${pk} entry ${e.hostname} slot ${d.slot}`;
          const base = `${e.hostname}/${d.slot}`;
          const field = (f: string): string => `status.entries[${e.hostname}].persistentDisks[slot ${d.slot}].${f}`;
          const decl = accepted.get(d.slot);
          for (const f of ['mountPath', 'lastTransitionTime'] as const) if (d[f] !== undefined) this.writes.add(f);
          if (decl && this.writes.has('mountPath')) add(`${base}/mountPath`, field('mountPath'), d.mountPath, decl.mountPath, where, []);
          // The identity by metadata, or — a volume made by hand, without metadata — by the name <cluster>-<hostname>-pd<slot> (docs/provider.md).
          const mine = allVolumes
            .filter((v) =>
              v.metadata['hcs.io/persistent'] === 'true'
                ? v.metadata['hcs.io/hostname'] === e.hostname && v.metadata['hcs.io/slot'] === String(d.slot) && (!cluster || v.metadata['hcs.io/cluster'] === cluster)
                : !!cluster && v.metadata['hcs.io/cluster'] === undefined && v.name === `${cluster}-${e.hostname}-pd${d.slot}`,
            )
            .sort((a, b) => a.id.localeCompare(b.id));
          const v = mine.find((x) => x.id === d.volumeId) ?? mine[0];
          // A volume the status names that the cloud no longer lists, or none yet: nothing but Pending and no id is right.
          if (v) add(`${base}/volumeId`, field('volumeId'), d.volumeId, v.id, where, [v.id]);
          add(`${base}/phase`, field('phase'), d.phase, expectedPhase(v?.status), where, v ? [v.id] : []);
          add(`${base}/attachedServerId`, field('attachedServerId'), d.attachedServerId, v?.attachedTo, where, v ? [v.id] : []);
          // lastTransitionTime: never in the future; moves on with every phase change.
          const lk = `${pk}/${base}`;
          const ltt = d.lastTransitionTime ? Date.parse(d.lastTransitionTime) : undefined;
          if (ltt !== undefined && ltt > now + skew) out.push({ rule: 'POOL-5', key: `POOL-5/ltt-future/${lk}/${d.lastTransitionTime}`, message: `${where}: ${field('lastTransitionTime')} ${d.lastTransitionTime} is in the future (now ${new Date(now).toISOString()})`, refs: [p.metadata.name] });
          const prev = this.lastPhase.get(lk);
          // On two clocks (skew > 0) a stamp cannot be placed against the run's looks: judged on one clock only.
          // The change came after the last look: when that look was a second (RFC 3339's resolution) past the stamp, so is the change.
          if (skew === 0 && prev && prev.phase !== d.phase && this.writes.has('lastTransitionTime') && prev.ltt === d.lastTransitionTime && (prev.ltt === undefined || Date.parse(prev.ltt) < Math.floor(prev.at / 1000) * 1000)) {
            out.push({ rule: 'POOL-5', key: `POOL-5/ltt-stale/${lk}/${prev.phase}/${d.phase}`, message: `${where}: phase went from ${prev.phase} to ${d.phase} but ${field('lastTransitionTime')} stayed ${d.lastTransitionTime ?? 'unset'}`, refs: [p.metadata.name] });
          }
          this.lastPhase.set(lk, { phase: d.phase, at: now, ...(d.lastTransitionTime ? { ltt: d.lastTransitionTime } : {}) });
        }
      }
    }
    const seen = new Set<string>();
    for (const d of found) {
      const sig = JSON.stringify([d.have ?? null, d.want ?? null]);
      seen.add(d.key);
      const cur = this.since.get(d.key);
      const since = cur?.sig === sig ? cur.at : now;
      if (cur?.sig !== sig) this.since.set(d.key, { sig, at: now });
      const lasted = now - since;
      if (lasted < STALE_MS) continue;
      out.push({
        rule: 'POOL-5',
        key: `POOL-5/stale/${d.key}/${sig}`,
        message: `${d.where}: ${d.field} is ${JSON.stringify(d.have ?? null)}, but the cloud and the pool's spec say ${JSON.stringify(d.want ?? null)} (for ${Math.round(lasted / 1000)}s)`,
        refs: d.refs,
      });
    }
    for (const k of [...this.since.keys()]) if (!seen.has(k)) this.since.delete(k);
    return out;
  }
}

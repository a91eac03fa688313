/**
 * The hostname-centred picture of a run (issue 25): one row per pool entry
 * (hostname), with the succession of machines that served it, each a span
 * coloured by the Machine's phase, and the persistent volume of the entry's
 * slot on the same row (creating, available, attaching, in-use, detaching),
 * with the faults whose cloud call named that volume or that machine's
 * server. The per-object lanes (src/harness/report/timeline.ts) stay the detail view;
 * this one answers "which machine holds demo-worker-2 and its disk now".
 *
 * History comes from the event log only (deterministic: the same run gives
 * the same picture):
 * - `hcsmachine.entry-bound` {machine, hostname}: the machine starts serving
 *   the hostname (POOL-4); its span ends when the Machine is deleted;
 * - `machine.phase` {machine, phase}: the colours of the span;
 * - the cloud's `volume.*` events of a persistent volume (metadata
 *   hcs.io/hostname and hcs.io/slot, DISK-3): the disk band;
 * - `fault` events: a mark on the row whose volume or server the call named.
 */
import type { LogEvent } from '../../core/events.js';
import { META_HOSTNAME, META_PERSISTENT, META_SLOT } from '../../product/api/metadata.js';

export interface PhaseSpan {
  from: number;
  to: number;
  phase: string;
}

export interface MachineSpan {
  /** The Machine (= HCSMachine) name. */
  machine: string;
  from: number;
  to: number;
  /** The Machine's phases while it served the hostname. */
  phases: PhaseSpan[];
  /** The Machine was deleted (its span ends there). */
  gone: boolean;
}

export interface DiskSpan {
  from: number;
  to: number;
  /** The volume's state: creating, available, attaching, in-use, detaching. */
  state: string;
  volume: string;
  slot: number;
  /** The server (name) it is attached to in this interval. */
  server?: string;
}

export interface HostMark {
  t: number;
  message: string;
}

export interface HostHistory {
  hostname: string;
  machines: MachineSpan[];
  disks: DiskSpan[];
  faults: HostMark[];
}

function str(e: LogEvent, k: string): string | undefined {
  const v = e.data?.[k];
  return typeof v === 'string' ? v : undefined;
}

const baseName = (k: string): string => k.slice(k.lastIndexOf('/') + 1);

const VOLUME_STATE: Record<string, string | null> = {
  'volume.created': 'creating',
  'volume.available': 'available',
  'volume.attach-requested': 'attaching',
  'volume.attached': 'in-use',
  'volume.detach-requested': 'detaching',
  'volume.detached': 'available',
  'volume.deleted': null,
};

/** Every hostname's history up to `until` (default: the last event), in the order hostnames first appear. */
export function hostHistories(events: readonly LogEvent[], until?: number): Map<string, HostHistory> {
  const b = new HostHistoryBuilder();
  b.addAll(events);
  return b.snapshot(until);
}

/**
 * hostHistories, fed one event at a time (the live dashboard reads the
 * growing event log on every update: only the new events are read again).
 * snapshot() gives the same result as hostHistories over the events added.
 */
export class HostHistoryBuilder {
  private readonly out = new Map<string, HostHistory>();
  private readonly phaseOf = new Map<string, { phase: string; since: number }>();
  /** Machine → its open span (serving a hostname). */
  private readonly serving = new Map<string, MachineSpan>();
  private readonly hostOfMachine = new Map<string, string>();
  private readonly machineOfServer = new Map<string, string>();
  private readonly serverName = new Map<string, string>();
  /** Persistent volume → identity, its open state and the server it is attached to. */
  private readonly vols = new Map<string, { hostname: string; slot: number; name: string; open?: DiskSpan; server?: string }>();
  private lastT = 0;
  /** How many events of a log have been added (addAll adds the rest). */
  added = 0;

  private host(h: string): HostHistory {
    let x = this.out.get(h);
    if (!x) this.out.set(h, (x = { hostname: h, machines: [], disks: [], faults: [] }));
    return x;
  }

  /** The events of `events` not added yet (a log that only grows). */
  addAll(events: readonly LogEvent[]): void {
    for (let i = this.added; i < events.length; i++) this.add(events[i]!);
    this.added = events.length;
  }

  add(e: LogEvent): void {
    this.lastT = e.t;
    const closePhase = (span: MachineSpan, t: number): void => {
      const last = span.phases.at(-1);
      if (last && last.to > t) last.to = t;
    };
    const { serving, phaseOf, hostOfMachine, machineOfServer, serverName, vols } = this;
    if (e.type === 'machine.phase' && str(e, 'machine')) {
      const m = baseName(str(e, 'machine')!);
      const phase = str(e, 'phase') ?? '?';
      phaseOf.set(m, { phase, since: e.t });
      const span = serving.get(m);
      if (span) {
        closePhase(span, e.t);
        span.phases.push({ from: e.t, to: Infinity, phase });
      }
    } else if (e.type === 'hcsmachine.entry-bound' && str(e, 'machine') && str(e, 'hostname')) {
      const m = baseName(str(e, 'machine')!);
      const h = str(e, 'hostname')!;
      if (serving.has(m)) return;
      const span: MachineSpan = { machine: m, from: e.t, to: Infinity, phases: [{ from: e.t, to: Infinity, phase: phaseOf.get(m)?.phase ?? 'Provisioning' }], gone: false };
      serving.set(m, span);
      hostOfMachine.set(m, h);
      this.host(h).machines.push(span);
    } else if (e.type === 'hcsmachine.server-bound' && str(e, 'machine') && str(e, 'serverId')) {
      machineOfServer.set(str(e, 'serverId')!, baseName(str(e, 'machine')!));
    } else if (e.type === 'object.deleted' && e.data?.kind === 'Machine' && e.data.cluster === 'management') {
      const m = String(e.data.name);
      const span = serving.get(m);
      if (span) {
        span.to = e.t;
        span.gone = true;
        closePhase(span, e.t);
        serving.delete(m);
      }
    } else if (e.source === 'cloud' && e.type.startsWith('server.') && str(e, 'serverId') && str(e, 'name')) {
      serverName.set(str(e, 'serverId')!, str(e, 'name')!);
    } else if (e.source === 'cloud' && e.type.startsWith('volume.') && str(e, 'volumeId')) {
      const id = str(e, 'volumeId')!;
      if (e.type === 'volume.created') {
        const meta = e.data?.metadata as Record<string, string> | undefined;
        const h = meta?.[META_HOSTNAME];
        if (meta?.[META_PERSISTENT] !== 'true' || !h) return;
        vols.set(id, { hostname: h, slot: Number(meta[META_SLOT] ?? 0), name: str(e, 'name') ?? id.slice(0, 8) });
      }
      const v = vols.get(id);
      const state = VOLUME_STATE[e.type];
      if (!v || state === undefined) return;
      if ((e.type === 'volume.attach-requested' || e.type === 'volume.attached') && str(e, 'serverId')) v.server = str(e, 'serverId');
      if (state === 'available' || state === null) v.server = undefined;
      const server = v.server !== undefined ? (serverName.get(v.server) ?? v.server.slice(0, 8)) : undefined;
      if (v.open && v.open.state === state && v.open.server === server) return;
      if (v.open) v.open.to = e.t;
      v.open = undefined;
      if (state === null) return;
      v.open = { from: e.t, to: Infinity, state, volume: v.name, slot: v.slot, ...(server !== undefined ? { server } : {}) };
      this.host(v.hostname).disks.push(v.open);
    } else if (e.source === 'fault') {
      const path = str(e, 'path') ?? '';
      // The hostname whose volume or server the call names (last in the path: a detach names the server, then the volume).
      let best = -1;
      let h: string | undefined;
      for (const [id, v] of vols) {
        const p = path.lastIndexOf(id);
        if (p > best) [best, h] = [p, v.hostname];
      }
      for (const [sid, m] of machineOfServer) {
        const p = path.lastIndexOf(sid);
        if (p > best && hostOfMachine.has(m)) [best, h] = [p, hostOfMachine.get(m)];
      }
      if (h !== undefined) this.host(h).faults.push({ t: e.t, message: e.message });
    }
  }

  /** The histories now, open spans closed at `until` (default: the last event added); the builder is left as it was. */
  snapshot(until?: number): Map<string, HostHistory> {
    const end = Math.max(this.lastT, until ?? 0);
    const out = new Map<string, HostHistory>();
    for (const [h, x0] of this.out) {
      const x: HostHistory = { hostname: x0.hostname, machines: x0.machines.map((m) => ({ ...m, phases: m.phases.map((p) => ({ ...p })) })), disks: x0.disks.map((d) => ({ ...d })), faults: [...x0.faults] };
      for (const s of x.machines) {
        if (s.to === Infinity) s.to = end;
        for (const p of s.phases) if (p.to === Infinity) p.to = s.to;
        s.phases = s.phases.filter((p) => p.to > p.from || s.phases.length === 1);
      }
      for (const d of x.disks) if (d.to === Infinity) d.to = end;
      x.disks = x.disks.filter((d) => d.to > d.from);
      out.set(h, x);
    }
    return out;
  }
}

/**
 * The short name of a machine on its segment: the part after the prefix all
 * machines of the pool share (`demo-md-0-` → `x7k2p-q9z8w`, the MachineSet's
 * and the Machine's suffixes), or the Machine's own suffix where the pool has
 * one machine so far.
 */
export function shortNames(names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (names.length === 0) return out;
  let prefix = names[0]!;
  for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1);
  const cut = names.length > 1 ? prefix.lastIndexOf('-') + 1 : names[0]!.lastIndexOf('-') + 1;
  for (const n of names) out.set(n, n.slice(cut) || n);
  return out;
}

/** The Machine's own random suffix (its last dash-separated part): the label of a segment too narrow for the short name. */
export function suffixOf(name: string): string {
  return name.slice(name.lastIndexOf('-') + 1) || name;
}

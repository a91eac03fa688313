/**
 * The timeline picture of an event log, as a deterministic model
 * (`timelineModel`, what the tests check) and its SVG (`renderTimeline`).
 * The HTML report and the live dashboard (src/harness/dashboard) both draw it.
 *
 * - a lane per machine (with the hostname of its pool entry), server (with
 *   the hostname it serves) and persistent volume (each attached interval
 *   names its server), over virtual time;
 * - step starts with their titles on up to three label rows, never
 *   overlapping: steps at the same instant share one label, a label is cut
 *   to the room it has (the full titles are its tooltip);
 * - idle gaps (nothing drawn changes for long, e.g. a wait that times out)
 *   are compressed to a fixed width with a visible break marker and their
 *   duration, so a long timeout does not squeeze the rollout into a corner;
 * - faults (on the lane of the server or volume their call names), Warning
 *   events (on the lane of the machine they are about) and invariant
 *   violations;
 * - one colour per state of each lane kind, and a legend of what is drawn.
 */
import type { LogEvent } from '../../core/events.js';
import { META_PERSISTENT } from '../../product/api/metadata.js';

export type LaneGroup = 'machine' | 'server' | 'volume';

export interface Segment {
  from: number;
  to: number;
  state: string;
  /** A volume attaching / in-use / detaching: the server (name) it is attached to in this interval. */
  server?: string;
}

export interface Lane {
  group: LaneGroup;
  label: string;
  /** The cloud id of a server or volume lane. */
  id?: string;
  /** The hostname a machine's pool entry (or a server's machine) gives it. */
  hostname?: string;
  segments: Segment[];
}

/** One colour per state of each lane kind; no colour stands for two states (test/report/timeline.test.ts). */
export const STATE_COLORS: Record<LaneGroup, Record<string, string>> = {
  machine: { Pending: '#d0d7de', Provisioning: '#f4c542', Provisioned: '#a5d6ff', Running: '#2da44e', Deleting: '#cf222e', Failed: '#8250df' },
  server: { BUILD: '#bc4c00', ACTIVE: '#0a3069', deleting: '#ff8182', ERROR: '#1f2328', SHUTOFF: '#8c959f' },
  volume: { creating: '#d8b9ff', available: '#0969da', attaching: '#7ee8c8', 'in-use': '#1b7c83', detaching: '#fb8f44' },
};
const UNKNOWN_COLOR = '#eaeef2';
export const MARKER_COLORS = { fault: '#bf3989', warning: '#d4a72c', violation: '#a40e26' } as const;

function str(e: LogEvent, k: string): string | undefined {
  const v = e.data?.[k];
  return typeof v === 'string' ? v : undefined;
}

/** "cpaas-system/name" or "name" → "name". */
const baseName = (k: string): string => k.slice(k.lastIndexOf('/') + 1);

/** Derive lanes from the event log (open states run to `until`, default the last event). */
export function lanes(events: readonly LogEvent[], until?: number): Lane[] {
  const open = new Map<string, { lane: Lane; state: string; server: string | undefined; since: number }>();
  const out: Lane[] = [];
  const byKey = new Map<string, Lane>();
  const end = Math.max(events.length ? events[events.length - 1]!.t : 0, until ?? 0);
  const serverName = new Map<string, string>();
  const hostOfMachine = new Map<string, string>();
  const machineOfServer = new Map<string, string>();
  const set = (key: string, group: LaneGroup, label: string, state: string | null, t: number, server?: string): void => {
    const cur = open.get(key);
    if (!cur && state === null) return;
    if (!cur) {
      let lane = byKey.get(key);
      if (!lane) {
        lane = { group, label, segments: [], ...(group !== 'machine' ? { id: key.slice(2) } : {}) };
        out.push(lane);
        byKey.set(key, lane);
      }
      open.set(key, { lane, state: state!, server, since: t });
      return;
    }
    if (cur.state === state && cur.server === server) return;
    if (t > cur.since) cur.lane.segments.push({ from: cur.since, to: t, state: cur.state, ...(cur.server !== undefined ? { server: cur.server } : {}) });
    if (state === null) open.delete(key);
    else Object.assign(cur, { state, server, since: t });
  };
  const persistent = new Set<string>();
  /** The server a volume is attached to (attaching … detaching). */
  const attachedTo = new Map<string, string>();
  for (const e of events) {
    const d = e.data ?? {};
    if (e.type === 'hcsmachine.entry-bound' && str(e, 'machine') && str(e, 'hostname')) hostOfMachine.set(baseName(str(e, 'machine')!), str(e, 'hostname')!);
    else if (e.type === 'hcsmachine.server-bound' && str(e, 'machine') && str(e, 'serverId')) machineOfServer.set(str(e, 'serverId')!, baseName(str(e, 'machine')!));
    if (e.type === 'machine.phase' && str(e, 'machine')) set(`m/${str(e, 'machine')}`, 'machine', str(e, 'machine')!, str(e, 'phase') ?? '?', e.t);
    else if (e.type === 'object.deleted' && d.kind === 'Machine' && d.cluster === 'management') set(`m/${String(d.name)}`, 'machine', String(d.name), null, e.t);
    else if (e.source === 'cloud' && e.type.startsWith('server.') && str(e, 'serverId')) {
      const id = str(e, 'serverId')!;
      if (str(e, 'name')) serverName.set(id, str(e, 'name')!);
      const label = serverName.get(id) ?? id.slice(0, 8);
      const state = e.type === 'server.created' ? 'BUILD' : e.type === 'server.active' ? 'ACTIVE' : e.type === 'server.delete-requested' ? 'deleting' : e.type === 'server.deleted' ? null : e.type === 'server.error' ? 'ERROR' : undefined;
      if (state !== undefined) set(`s/${id}`, 'server', label, state, e.t);
    } else if (e.source === 'cloud' && e.type.startsWith('volume.') && str(e, 'volumeId')) {
      const id = str(e, 'volumeId')!;
      if (e.type === 'volume.created') {
        const meta = d.metadata as Record<string, string> | undefined;
        if (meta?.[META_PERSISTENT] !== 'true') continue;
        persistent.add(id);
      }
      if (!persistent.has(id)) continue;
      if (e.type === 'volume.attach-requested' && str(e, 'serverId')) attachedTo.set(id, str(e, 'serverId')!);
      const state = ({ 'volume.created': 'creating', 'volume.available': 'available', 'volume.attach-requested': 'attaching', 'volume.attached': 'in-use', 'volume.detach-requested': 'detaching', 'volume.detached': 'available', 'volume.deleted': null } as Record<string, string | null>)[e.type];
      if (state === undefined) continue;
      if (e.type === 'volume.attached' && str(e, 'serverId')) attachedTo.set(id, str(e, 'serverId')!);
      if (state === 'available' || state === null) attachedTo.delete(id);
      const sid = attachedTo.get(id);
      set(`v/${id}`, 'volume', str(e, 'name') ?? byKey.get(`v/${id}`)?.label ?? id.slice(0, 8), state, e.t, sid !== undefined ? (serverName.get(sid) ?? sid.slice(0, 8)) : undefined);
    }
  }
  for (const cur of open.values()) cur.lane.segments.push({ from: cur.since, to: end, state: cur.state, ...(cur.server !== undefined ? { server: cur.server } : {}) });
  for (const l of out) {
    const host = l.group === 'machine' ? hostOfMachine.get(l.label) : l.group === 'server' ? hostOfMachine.get(machineOfServer.get(l.id!) ?? '') : undefined;
    if (host !== undefined) l.hostname = host;
  }
  const order = { machine: 0, server: 1, volume: 2 };
  return out.filter((l) => l.segments.length).sort((a, b) => order[a.group] - order[b.group]);
}

// ---------------------------------------------------------------- time axis

export interface AxisBreak {
  /** The idle interval (ms, event-log time) drawn compressed. */
  from: number;
  to: number;
  /** Where it is drawn (px) and how wide. */
  x: number;
  w: number;
}

export interface TimeAxis {
  t0: number;
  t1: number;
  /** Plot area in px. */
  left: number;
  right: number;
  breaks: AxisBreak[];
}

const BREAK_W = 26;

/** Piecewise linear: event-log time → x. Idle gaps of the axis take BREAK_W px each. */
export function xOf(a: TimeAxis, t: number): number {
  const plot = a.right - a.left;
  const idle = a.breaks.reduce((n, b) => n + (b.to - b.from), 0);
  const active = a.t1 - a.t0 - idle;
  const k = active > 0 ? (plot - a.breaks.length * BREAK_W) / active : 0;
  let x = a.left;
  let at = a.t0;
  for (const b of a.breaks) {
    if (t <= b.from) break;
    x += (b.from - at) * k;
    if (t < b.to) return x + ((t - b.from) / (b.to - b.from)) * BREAK_W;
    x += BREAK_W;
    at = b.to;
  }
  return Math.min(a.right, x + (Math.min(t, a.t1) - at) * k);
}

/**
 * The axis over [t0, t1] with idle gaps compressed: a gap between two
 * consecutive instants where something drawn changes that is longer than a
 * threshold (4 % of the span, at least a minute) becomes a break, as long as
 * the breaks take at most a third of the width (else the threshold doubles).
 */
export function timeAxis(t0: number, t1: number, instants: readonly number[], left: number, right: number): TimeAxis {
  const ts = [...new Set([t0, ...instants.filter((t) => t > t0 && t < t1), t1])].sort((a, b) => a - b);
  const span = t1 - t0;
  let threshold = Math.max(60_000, span * 0.04);
  for (;;) {
    const gaps: { from: number; to: number }[] = [];
    for (let i = 1; i < ts.length; i++) if (ts[i]! - ts[i - 1]! > threshold) gaps.push({ from: ts[i - 1]!, to: ts[i]! });
    if (gaps.length * BREAK_W <= (right - left) / 3 || gaps.length === 0) {
      const axis: TimeAxis = { t0, t1, left, right, breaks: [] };
      // Compressing makes sense only when it leaves the active part wider than it was.
      const idle = gaps.reduce((n, g) => n + g.to - g.from, 0);
      if (gaps.length && idle < span && idle / span > (gaps.length * BREAK_W) / (right - left)) axis.breaks = gaps.map((g) => ({ ...g, x: 0, w: BREAK_W }));
      for (const b of axis.breaks) b.x = xOf(axis, b.from);
      return axis;
    }
    threshold *= 2;
  }
}

// ---------------------------------------------------------------- model

export interface StepLabel {
  /** Step numbers starting at this point (several steps can start at the same instant). */
  steps: number[];
  titles: string[];
  t: number;
  x: number;
  /** Label row (0 = top) and the text drawn there (cut with "…" to the room it has). */
  row: number;
  text: string;
  /** Where the text starts and ends (px). */
  x0: number;
  x1: number;
}

export type MarkerKind = 'fault' | 'warning' | 'violation';

export interface Marker {
  kind: MarkerKind;
  t: number;
  x: number;
  /** Index into `lanes`, or -1: the events row under the lanes. */
  lane: number;
  message: string;
}

export interface LegendItem {
  group: LaneGroup | 'marker';
  name: string;
  color: string;
}

export interface TimelineModel {
  width: number;
  height: number;
  axis: TimeAxis;
  lanes: Lane[];
  /** y of the first lane. */
  lanesTop: number;
  steps: StepLabel[];
  markers: Marker[];
  legend: LegendItem[];
  /** y of the legend's first row. */
  legendTop: number;
}

export interface TimelineOptions {
  /** End of the picture (default: the last event; the live dashboard passes the clock's now). */
  until?: number;
  /** Width in px (default 1100). */
  width?: number;
}

export const LABEL_W = 300;
export const LANE_H = 16;
export const LANE_GAP = 4;
const LABEL_ROWS = 3;
const ROW_H = 12;
/** px per character of the 10 px monospace step labels (an upper bound: DejaVu Sans Mono is 6.02). */
export const CHAR_W = 6.2;
const LEGEND_CHAR_W = 6.8;

/** Cut `s` to `n` characters with an ellipsis. */
export function elide(s: string, n: number): string {
  return s.length <= n ? s : n <= 1 ? '…' : `${s.slice(0, n - 1)}…`;
}

function stepGroups(ev: readonly LogEvent[], axis: TimeAxis): { steps: number[]; titles: string[]; t: number; x: number }[] {
  const groups: { steps: number[]; titles: string[]; t: number; x: number }[] = [];
  for (const e of ev) {
    if (e.type !== 'step.start') continue;
    const n = Number(e.data?.step ?? 0);
    const title = e.message.replace(/^step \d+: /, '');
    const x = xOf(axis, e.t);
    const last = groups.at(-1);
    if (last && x - last.x < 3) {
      last.steps.push(n);
      last.titles.push(title);
    } else groups.push({ steps: [n], titles: [title], t: e.t, x });
  }
  return groups;
}

/** Place the step labels on the rows so that no two overlap: the fullest text that fits, in the first row with room. */
export function placeStepLabels(groups: { steps: number[]; titles: string[]; t: number; x: number }[], right: number): StepLabel[] {
  const rowEnd = new Array<number>(LABEL_ROWS).fill(-Infinity);
  const out: StepLabel[] = [];
  groups.forEach((g, i) => {
    const num = g.steps.length > 1 ? `${g.steps[0]}–${g.steps.at(-1)}` : String(g.steps[0]);
    const full = g.steps.length > 1 ? `${num} ${g.titles[0]} (+${g.steps.length - 1})` : `${num} ${g.titles[0]}`;
    const x0 = g.x + 2;
    // The room up to the next label's line on the same row is unknown yet: give each label at most the room to the group 2 ahead.
    const limit = Math.min(right, groups[i + LABEL_ROWS - 1]?.x ?? right, x0 + 48 * CHAR_W);
    const fits = (row: number): boolean => rowEnd[row]! + 4 <= x0;
    let row = [...rowEnd.keys()].find(fits);
    let start = x0;
    if (row === undefined) {
      // No row is free at the line: the least busy row, the number only, right after what is there (it stays next to its line).
      row = rowEnd.indexOf(Math.min(...rowEnd));
      start = rowEnd[row]! + 4;
    }
    const room = Math.max(num.length, Math.floor((Math.max(limit, start + num.length * CHAR_W) - start) / CHAR_W));
    let text = start === x0 ? elide(full, room) : num;
    // Near the right edge (the last steps, often the failing one) the label may end at its line instead, where there is more room.
    if (x0 + Math.min(full.length, 48) * CHAR_W > right) {
      const end = g.x - 2;
      const best = [...rowEnd.keys()].map((r) => ({ r, from: Math.max(4, rowEnd[r]! + 4) })).sort((a, b) => a.from - b.from || a.r - b.r)[0]!;
      const leftRoom = Math.min(48, Math.floor((end - best.from) / CHAR_W));
      if (leftRoom > text.length) {
        text = elide(full, leftRoom);
        row = best.r;
        start = end - text.length * CHAR_W;
      }
    }
    const x1 = start + text.length * CHAR_W;
    rowEnd[row] = x1;
    out.push({ steps: g.steps, titles: g.titles, t: g.t, x: g.x, row, text, x0: start, x1 });
  });
  return out;
}

/** The deterministic model of the picture (what renderTimeline draws). */
export function timelineModel(ev: readonly LogEvent[], opts: TimelineOptions = {}): TimelineModel | undefined {
  if (ev.length === 0) return undefined;
  const t0 = ev[0]!.t;
  const t1 = Math.max(ev[ev.length - 1]!.t, opts.until ?? 0, t0 + 1000);
  const ls = lanes(ev, opts.until);
  const W = opts.width ?? 1100;
  const isMarker = (e: LogEvent): boolean => e.source === 'fault' || e.source === 'invariant' || e.data?.eventType === 'Warning';
  const instants = [...ls.flatMap((l) => l.segments.flatMap((s) => [s.from, s.to])), ...ev.filter((e) => e.type === 'step.start' || isMarker(e)).map((e) => e.t)];
  const axis = timeAxis(t0, t1, instants, LABEL_W, W - 10);
  const steps = placeStepLabels(stepGroups(ev, axis), W - 4);
  const lanesTop = (steps.length ? Math.max(...steps.map((s) => s.row)) + 1 : 0) * ROW_H + 8; // only the label rows in use
  const markers: Marker[] = [];
  for (const e of ev) {
    if (e.source === 'fault') {
      const path = typeof e.data?.path === 'string' ? e.data.path : '';
      // The lane of the resource the call names last in its path (REST paths go parent to child: a detach names the server, then the volume).
      let hit = -1;
      let at = -1;
      if (path)
        ls.forEach((l, i) => {
          const p = l.id !== undefined ? path.lastIndexOf(l.id) : -1;
          if (p > at) [hit, at] = [i, p];
        });
      markers.push({ kind: 'fault', t: e.t, x: xOf(axis, e.t), lane: hit, message: e.message });
    } else if (e.source === 'invariant') markers.push({ kind: 'violation', t: e.t, x: xOf(axis, e.t), lane: -1, message: e.message });
    else if (e.data?.eventType === 'Warning') {
      // A Warning Event on a Machine or HCSMachine (same name) goes on that machine's lane.
      const name = typeof e.data.name === 'string' ? e.data.name : '';
      const lane = e.data.kind === 'Machine' || e.data.kind === 'HCSMachine' ? ls.findIndex((l) => l.group === 'machine' && l.label === name) : -1;
      markers.push({ kind: 'warning', t: e.t, x: xOf(axis, e.t), lane, message: e.message });
    }
  }
  const lanesBottom = lanesTop + ls.length * (LANE_H + LANE_GAP) + LANE_H + LANE_GAP; // + the events row
  const used = new Set(ls.flatMap((l) => l.segments.map((s) => `${l.group}/${s.state}`)));
  const legend: LegendItem[] = [];
  for (const g of ['machine', 'server', 'volume'] as const) for (const [name, color] of Object.entries(STATE_COLORS[g])) if (used.has(`${g}/${name}`)) legend.push({ group: g, name, color });
  for (const l of ls) for (const s of l.segments) if (!STATE_COLORS[l.group][s.state] && !legend.some((x) => x.group === l.group && x.name === s.state)) legend.push({ group: l.group, name: s.state, color: UNKNOWN_COLOR });
  const names: Record<MarkerKind, string> = { fault: 'fault', warning: 'Warning event', violation: 'invariant violation' };
  for (const k of ['fault', 'warning', 'violation'] as const) if (markers.some((m) => m.kind === k)) legend.push({ group: 'marker', name: names[k], color: MARKER_COLORS[k] });
  if (axis.breaks.length) legend.push({ group: 'marker', name: 'idle time compressed', color: '#f6f8fa' });
  const legendTop = lanesBottom + (axis.breaks.length ? 36 : 24); // under the time axis (and the row of break lengths)
  const rows = legendRows(legend, W);
  return { width: W, height: legendTop + rows.length * 16 + 4, axis, lanes: ls, lanesTop, steps, markers, legend, legendTop };
}

export interface LegendEntry {
  item: LegendItem;
  /** Where the swatch goes. */
  x: number;
  /** The lane kind's name before its first state ("machine:"), where it goes. */
  head?: { text: string; x: number };
}

/** The legend laid out in rows: each lane kind's states after its name, wrapped to the width. */
export function legendRows(items: readonly LegendItem[], width: number): LegendEntry[][] {
  const rows: LegendEntry[][] = [];
  let row: LegendEntry[] = [];
  let x = 4;
  let group: string | undefined;
  for (const item of items) {
    const text = item.group === 'marker' ? 'marks:' : `${item.group}:`;
    const head = item.group !== group ? text.length * LEGEND_CHAR_W + 6 : 0;
    const w = head + 14 + item.name.length * LEGEND_CHAR_W + 12;
    if (x + w > width - 4 && row.length) {
      rows.push(row);
      row = [];
      x = 4;
    }
    row.push({ item, x: x + head, ...(head ? { head: { text, x } } : {}) });
    x += w;
    group = item.group;
  }
  if (row.length) rows.push(row);
  return rows;
}

/**
 * The SVG of the hostname-centred view (src/harness/report/hostnames.ts): per pool a
 * header, then one row per entry with its hostname and IP on the left, the
 * machines that served it as phase-coloured spans with their short names,
 * the persistent disk's state as a band under them, fault marks, and on the
 * right what holds the hostname now (machine, phase, version, disk).
 *
 * Nothing is cut: a machine's label is its short name where that fits, its
 * own 5-character suffix where only that fits, else none (the tooltip has
 * it); the right column is sized for the longest texts it can hold; time-axis
 * labels are placed left to right and one that would touch the one before is
 * left out.
 */
import { vtime } from './console.js';
import type { HostHistory } from './hostnames.js';
import { shortNames, suffixOf } from './hostnames.js';
import { CHAR_W, STATE_COLORS, MARKER_COLORS, timeAxis, xOf, type TimeAxis } from './timeline.js';
import { esc } from './timeline-svg.js';

/** What holds a hostname now (from the pool's status and the cloud). */
export interface HostNow {
  /** serving: a machine holds the entry; free: none and no disk; kept: none, but its persistent disk (data) is kept. */
  status: 'serving' | 'free' | 'kept';
  machine?: string;
  phase?: string;
  version?: string;
  disks: { slot: number; state: string; volume: string; server?: string }[];
}

export interface HostRow {
  hostname: string;
  ip: string;
  now: HostNow;
  history: HostHistory;
}

export interface HostPool {
  namespace: string;
  name: string;
  /** "control plane" or "workers" (from the machines it serves). */
  role: string;
  rows: HostRow[];
}

export interface HostPicture {
  pools: HostPool[];
  /** The time span drawn. */
  t0: number;
  t1: number;
}

const f1 = (n: number): string => n.toFixed(1);
export const HOST_LABEL_W = 130;
export const HOST_NOW_W = 330;
export const HOST_ROW_H = 28;
const HEAD_H = 18;
const BAND_H = 14;
const DISK_H = 7;
/** Monospace at 11 px (DejaVu Sans Mono 6.6 px; an upper bound). */
const CHAR_W11 = 6.8;

/** The rows' and the axis' geometry: exported for the tests that check nothing overlaps. */
export interface HostLayout {
  width: number;
  height: number;
  axis: TimeAxis;
  /** y of each row (pool → hostname → y). */
  rowY: Map<string, number>;
  ticks: { x: number; text: string; anchor: 'start' | 'end' }[];
}

const NICE_MS = [60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000];

/** Time-axis labels: the start, each break's end, round times in the active parts, the end; none touching the one before. */
export function axisTicks(axis: TimeAxis): { x: number; text: string; anchor: 'start' | 'end' }[] {
  const plot = axis.right - axis.left;
  const idle = axis.breaks.reduce((n, b) => n + (b.to - b.from), 0);
  const active = Math.max(1, axis.t1 - axis.t0 - idle);
  const pxPerMs = (plot - axis.breaks.length * 26) / active;
  const step = NICE_MS.find((s) => s * pxPerMs >= 110) ?? NICE_MS.at(-1)!;
  const cand: { t: number; anchor: 'start' | 'end' }[] = [{ t: axis.t0, anchor: 'start' }];
  const pieces: [number, number][] = [];
  let at = axis.t0;
  for (const b of axis.breaks) {
    pieces.push([at, b.from]);
    cand.push({ t: b.to, anchor: 'start' });
    at = b.to;
  }
  pieces.push([at, axis.t1]);
  for (const [a, z] of pieces) for (let t = Math.ceil((a - axis.t0) / step) * step + axis.t0; t < z; t += step) if (t > a) cand.push({ t, anchor: 'start' });
  cand.sort((p, q) => p.t - q.t);
  const text = (t: number): string => vtime(t - axis.t0);
  const out: { x: number; text: string; anchor: 'start' | 'end' }[] = [];
  let lastEnd = -Infinity;
  const endText = text(axis.t1);
  const endStart = axis.right - endText.length * CHAR_W;
  for (const c of cand) {
    const x = xOf(axis, c.t);
    const s = text(c.t);
    const x1 = x + s.length * CHAR_W;
    if (x < lastEnd + 8 || x1 + 8 > endStart) continue;
    out.push({ x, text: s, anchor: 'start' });
    lastEnd = x1;
  }
  out.push({ x: axis.right, text: endText, anchor: 'end' });
  return out;
}

function nowText(n: HostNow, short: string | undefined): { who: string; phase: string; version: string; disk: string } {
  const disk = n.disks.map((d) => `pd${d.slot} ${d.state}`).join(' ');
  if (n.status === 'serving') return { who: short && short.length <= 11 ? short : suffixOf(n.machine ?? ''), phase: n.phase ?? '', version: n.version ?? '', disk };
  if (n.status === 'kept') return { who: 'free', phase: 'data kept', version: '', disk };
  return { who: 'free', phase: '', version: '', disk };
}

/** The picture (an SVG element) and its layout. */
export function renderHostnames(p: HostPicture, width = 1400): { svg: string; layout: HostLayout } {
  const left = HOST_LABEL_W;
  const right = width - HOST_NOW_W - 8;
  const instants: number[] = [];
  for (const pool of p.pools)
    for (const r of pool.rows) {
      for (const m of r.history.machines) instants.push(m.from, m.to, ...m.phases.map((x) => x.from));
      for (const d of r.history.disks) instants.push(d.from, d.to);
    }
  const t1 = Math.max(p.t1, p.t0 + 1000);
  const axis = timeAxis(p.t0, t1, instants, left, right);
  const x = (t: number): number => xOf(axis, Math.max(p.t0, Math.min(t1, t)));
  const parts: string[] = [];
  const rowY = new Map<string, number>();
  let y = 4;
  const nowX = right + 12;
  const col = { who: nowX, phase: nowX + 12 * CHAR_W11, version: nowX + 12 * CHAR_W11 + 13 * CHAR_W11, disk: nowX + 12 * CHAR_W11 + 13 * CHAR_W11 + 8 * CHAR_W11 };
  for (const pool of p.pools) {
    const serving = pool.rows.filter((r) => r.now.status === 'serving').length;
    const head = `${pool.name} · ${pool.role} · ${pool.rows.length} entries, ${serving} serving`;
    parts.push(`<text x="4" y="${y + 12}" class="phead">${esc(head)}</text>`);
    if (pool === p.pools[0]) parts.push(`<text x="${f1(col.who)}" y="${y + 12}" class="dim">now: machine</text><text x="${f1(col.phase)}" y="${y + 12}" class="dim">phase</text><text x="${f1(col.version)}" y="${y + 12}" class="dim">version</text><text x="${f1(col.disk)}" y="${y + 12}" class="dim">disk</text>`);
    y += HEAD_H;
    const shorts = shortNames([...new Set(pool.rows.flatMap((r) => r.history.machines.map((m) => m.machine)).concat(pool.rows.flatMap((r) => (r.now.machine ? [r.now.machine] : []))))]);
    for (const r of pool.rows) {
      rowY.set(`${pool.name}/${r.hostname}`, y);
      const n = r.now;
      const diskState = n.disks.map((d) => d.state).join(',');
      const g: string[] = [];
      g.push(`<rect x="0" y="${y}" width="${width}" height="${HOST_ROW_H}" class="rowbg ${n.status}"/>`);
      g.push(`<text x="4" y="${y + 12}" class="host">${esc(r.hostname)}</text><text x="4" y="${y + 24}" class="dim">${esc(r.ip)}</text>`);
      // Machines that served the hostname: one rect per phase, the label over the whole span.
      for (const m of r.history.machines) {
        const short = shorts.get(m.machine) ?? suffixOf(m.machine);
        for (const ph of m.phases) {
          const x0 = x(ph.from);
          const w = Math.max(1.5, x(ph.to) - x0);
          g.push(`<rect x="${f1(x0)}" y="${y + 2}" width="${f1(w)}" height="${BAND_H}" fill="${STATE_COLORS.machine[ph.phase] ?? '#eaeef2'}" class="mseg" data-machine="${esc(m.machine)}" data-phase="${esc(ph.phase)}"><title>${esc(`${m.machine}: ${ph.phase} ${vtime(ph.from - p.t0)}–${vtime(ph.to - p.t0)}`)}</title></rect>`);
        }
        const x0 = x(m.from);
        const w = x(m.to) - x0;
        const label = [short, suffixOf(m.machine)].find((s) => s.length * CHAR_W + 6 <= w);
        // Dark text on a white halo: readable over every phase colour the span crosses.
        if (label) g.push(`<text x="${f1(x0 + 3)}" y="${y + 13}" class="seg">${esc(label)}</text>`);
        if (m.gone) g.push(`<line x1="${f1(x(m.to))}" y1="${y + 1}" x2="${f1(x(m.to))}" y2="${y + 17}" class="gone"/>`);
      }
      // The persistent disk: its state under the machines, a data mark where it starts (the volume holds the entry's data).
      for (const d of r.history.disks) {
        const x0 = x(d.from);
        const w = Math.max(1.5, x(d.to) - x0);
        g.push(`<rect x="${f1(x0)}" y="${y + 18}" width="${f1(w)}" height="${DISK_H}" fill="${STATE_COLORS.volume[d.state] ?? '#eaeef2'}" class="disk" data-state="${esc(d.state)}"><title>${esc(`${d.volume} (slot ${d.slot}): ${d.state}${d.server ? ` on ${d.server}` : ''} ${vtime(d.from - p.t0)}–${vtime(d.to - p.t0)}`)}</title></rect>`);
      }
      for (const f of r.history.faults) {
        const cx = x(f.t);
        g.push(`<circle cx="${f1(cx)}" cy="${y + 21.5}" r="4" fill="${MARKER_COLORS.fault}" stroke="#1f2328" stroke-width="0.5" class="fault"><title>${esc(`${vtime(f.t - p.t0)} ${f.message}`)}</title></circle>`);
      }
      // Now.
      const t = nowText(n, n.machine ? shorts.get(n.machine) : undefined);
      const phaseFill = n.status === 'serving' ? (STATE_COLORS.machine[n.phase ?? ''] ?? '#57606a') : n.status === 'kept' ? '#9a6700' : '#57606a';
      g.push(`<text x="${f1(col.who)}" y="${y + 17}" class="now${n.status === 'serving' ? '' : ' dim'}">${esc(t.who)}</text>`);
      if (t.phase) g.push(`<text x="${f1(col.phase)}" y="${y + 17}" class="now" fill="${phaseFill === '#d0d7de' ? '#57606a' : phaseFill}">${esc(t.phase)}</text>`);
      if (t.version) g.push(`<text x="${f1(col.version)}" y="${y + 17}" class="now">${esc(t.version)}</text>`);
      if (n.disks.length) {
        const d0 = n.disks[0]!;
        const fill = STATE_COLORS.volume[d0.state] ?? '#8c959f';
        g.push(`<path d="M${f1(col.disk + 4)} ${y + 8} l4 5 l-4 5 l-4 -5 z" fill="${fill}" class="data"><title>${esc(n.disks.map((d) => `${d.volume} (slot ${d.slot}) ${d.state}${d.server ? ` on ${d.server}` : ''}`).join('\n'))}</title></path>`);
        g.push(`<text x="${f1(col.disk + 12)}" y="${y + 17}" class="now">${esc(t.disk)}</text>`);
      } else g.push(`<text x="${f1(col.disk)}" y="${y + 17}" class="now dim">no disk</text>`);
      parts.push(`<g class="hostrow" data-pool="${esc(pool.name)}" data-hostname="${esc(r.hostname)}" data-status="${n.status}" data-machine="${esc(n.machine ?? '')}" data-phase="${esc(n.phase ?? '')}" data-disk-state="${esc(diskState)}">${g.join('')}</g>`);
      y += HOST_ROW_H;
    }
  }
  const bottom = y;
  // Compressed idle gaps: a pale band with the gap's length in its tooltip.
  for (const b of axis.breaks) parts.push(`<rect x="${f1(b.x)}" y="4" width="${b.w}" height="${bottom - 4}" class="brk"><title>${esc(`idle ${vtime(b.from - p.t0)}–${vtime(b.to - p.t0)}: nothing changes, shown compressed`)}</title></rect>`);
  const ticks = axisTicks(axis);
  for (const t of ticks) parts.push(`<line x1="${f1(t.x)}" y1="${bottom}" x2="${f1(t.x)}" y2="${bottom + 4}" class="tk"/><text x="${f1(t.x)}" y="${bottom + 14}" text-anchor="${t.anchor}" class="tick">${esc(t.text)}</text>`);
  // Legend: the machine phases and disk states drawn.
  const used = new Set<string>();
  for (const pool of p.pools) for (const r of pool.rows) {
    for (const m of r.history.machines) for (const ph of m.phases) used.add(`m/${ph.phase}`);
    for (const d of r.history.disks) used.add(`v/${d.state}`);
  }
  let lx = 4;
  const ly = bottom + 22;
  const key = (color: string, name: string, shape = 'rect'): void => {
    parts.push(shape === 'rect' ? `<rect x="${f1(lx)}" y="${ly}" width="10" height="10" fill="${color}" stroke="#8c959f" stroke-width="0.5"/>` : `<circle cx="${f1(lx + 5)}" cy="${ly + 5}" r="4" fill="${color}"/>`);
    parts.push(`<text x="${f1(lx + 13)}" y="${ly + 9}" class="lbl">${esc(name)}</text>`);
    lx += 13 + name.length * CHAR_W + 12;
  };
  parts.push(`<text x="${lx}" y="${ly + 9}" class="dim">machine:</text>`);
  lx += 9 * CHAR_W + 4;
  for (const [name, c] of Object.entries(STATE_COLORS.machine)) if (used.has(`m/${name}`)) key(c, name);
  parts.push(`<text x="${f1(lx)}" y="${ly + 9}" class="dim">disk:</text>`);
  lx += 6 * CHAR_W + 4;
  for (const [name, c] of Object.entries(STATE_COLORS.volume)) if (used.has(`v/${name}`)) key(c, name);
  if (p.pools.some((pool) => pool.rows.some((r) => r.history.faults.length))) key(MARKER_COLORS.fault, 'fault', 'circle');
  const height = ly + 16;
  const css = {
    '.lbl': 'font:10px monospace;fill:#1f2328', '.dim': 'font:10px monospace;fill:#57606a', '.tick': 'font:10px monospace;fill:#57606a', '.seg': 'font:10px monospace;fill:#1f2328;paint-order:stroke;stroke:#fff;stroke-width:2.5px;stroke-linejoin:round',
    '.host': 'font:bold 11px monospace;fill:#1f2328', '.phead': 'font:bold 11px system-ui,sans-serif;fill:#0969da', '.now': 'font:11px monospace;fill:#1f2328', '.now.dim': 'fill:#57606a',
    '.rowbg': 'fill:#fff', '.rowbg.free': 'fill:#f6f8fa', '.rowbg.kept': 'fill:#fff8c5', '.gone': 'stroke:#1f2328;stroke-width:1.5',
    '.brk': 'fill:#d0d7de;opacity:0.35', '.tk': 'stroke:#8c959f',
  };
  const style = `<style>${Object.entries(css).map(([k, v]) => `svg.hostnames ${k}{${v}}`).join('')}</style>`;
  const svg = `<svg width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg" class="hostnames">${style}${parts.join('')}</svg>`;
  return { svg, layout: { width, height, axis, rowY, ticks } };
}

/** The SVG of a timeline model (src/harness/report/timeline.ts): lanes, step labels, breaks, markers and the legend. */
import type { LogEvent } from '../../core/events.js';
import { vtime } from './console.js';
import { CHAR_W, elide, LABEL_W, LANE_GAP, LANE_H, legendRows, MARKER_COLORS, STATE_COLORS, timelineModel, xOf, type Marker, type TimelineModel, type TimelineOptions } from './timeline.js';

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const f1 = (n: number): string => n.toFixed(1);

/** "30m", "1h 5m", "45s": the length of a compressed gap. */
export function span(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h${m ? ` ${m}m` : ''}` : m ? `${m}m${s % 60 && m < 10 ? ` ${s % 60}s` : ''}` : `${s}s`;
}

/** Dark text on light fills, white on dark ones. */
export function ink(fill: string): string {
  const n = parseInt(fill.slice(1), 16);
  const lum = 0.299 * ((n >> 16) & 255) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
  return lum > 150 ? '#1f2328' : '#ffffff';
}

/** Lane-label characters at 10 px monospace in the label column. */
const LANE_CHARS = Math.floor((LABEL_W - 12) / CHAR_W);

export function renderTimeline(m: TimelineModel): string {
  const { axis, lanesTop: top } = m;
  const t0 = axis.t0;
  const x = (t: number): number => xOf(axis, t);
  const laneY = (i: number): number => top + i * (LANE_H + LANE_GAP);
  const eventsRow = m.lanes.length;
  const bottom = laneY(eventsRow) + LANE_H;
  const parts: string[] = [];
  // Lanes: label (elided, full in the tooltip) and state segments.
  m.lanes.forEach((lane, i) => {
    const y = laneY(i);
    const full = `${lane.group}: ${lane.label}${lane.hostname ? ` · ${lane.hostname}` : ''}`;
    parts.push(`<text x="4" y="${y + 12}" class="lbl">${esc(elide(full, LANE_CHARS))}<title>${esc(full)}</title></text>`);
    for (const s of lane.segments) {
      const x0 = x(s.from);
      const w = Math.max(1, x(s.to) - x0);
      const fill = STATE_COLORS[lane.group][s.state] ?? '#eaeef2';
      const on = s.server !== undefined ? ` on ${s.server}` : '';
      parts.push(`<rect x="${f1(x0)}" y="${y}" width="${f1(w)}" height="${LANE_H}" fill="${fill}" data-lane="${esc(lane.group)}" data-state="${esc(s.state)}"${s.server !== undefined ? ` data-server="${esc(s.server)}"` : ''}><title>${esc(`${lane.label}: ${s.state}${on} ${vtime(s.from - t0)}–${vtime(s.to - t0)}`)}</title></rect>`);
      if (s.server !== undefined) {
        // The server's name inside the interval, in its widest piece between compressed gaps.
        const pieces: [number, number][] = [];
        let from = x0;
        for (const b of axis.breaks) {
          if (b.x + b.w <= from || b.x >= x0 + w) continue;
          pieces.push([from, b.x]);
          from = b.x + b.w;
        }
        pieces.push([from, x0 + w]);
        const [a, z] = pieces.reduce((best, p) => (p[1] - p[0] > best[1] - best[0] ? p : best));
        const room = Math.floor((z - a - 6) / CHAR_W);
        if (room >= 6) parts.push(`<text x="${f1(a + 3)}" y="${y + 12}" class="seg" fill="${ink(fill)}">${esc(elide(`→ ${s.server}`, room))}</text>`);
      }
    }
  });
  parts.push(`<text x="4" y="${laneY(eventsRow) + 12}" class="lbl dim">events (not on a lane)</text>`);
  // Compressed idle gaps: a pale band with zigzag edges over every lane.
  for (const b of axis.breaks) {
    const zig = (cx: number): string => {
      const pts: string[] = [];
      for (let y = top - 4, k = 0; y <= bottom + 4; y += 4, k++) pts.push(`${f1(cx + (k % 2 ? 2 : -2))},${y}`);
      return `<polyline points="${pts.join(' ')}" class="zig"/>`;
    };
    parts.push(`<g class="break" data-from="${b.from - t0}" data-to="${b.to - t0}"><rect x="${f1(b.x)}" y="${top - 4}" width="${b.w}" height="${bottom - top + 8}" fill="#f6f8fa" opacity="0.6"/>${zig(b.x + 5)}${zig(b.x + b.w - 5)}<title>${esc(`idle ${vtime(b.from - t0)}–${vtime(b.to - t0)} (${span(b.to - b.from)}): nothing drawn changes, shown compressed`)}</title></g>`);
  }
  // Step starts: a dashed line and the placed label (white halo so crossing lines stay readable).
  for (const s of m.steps) {
    const y = 10 + s.row * 12;
    const tip = s.steps.map((n, i) => `step ${n}: ${s.titles[i]}`).join('\n');
    parts.push(`<line x1="${f1(s.x)}" y1="${y + 2}" x2="${f1(s.x)}" y2="${bottom}" class="step"/><text x="${f1(s.x0)}" y="${y}" class="steplbl" data-row="${s.row}">${esc(s.text)}<title>${esc(tip)}</title></text>`);
  }
  // Markers.
  const markY = (mk: Marker): number => laneY(mk.lane >= 0 ? mk.lane : eventsRow) + LANE_H / 2;
  for (const mk of m.markers) {
    const cx = f1(mk.x);
    const cy = markY(mk);
    const lane = mk.lane >= 0 ? ` data-lane="${esc(m.lanes[mk.lane]!.group)}"` : '';
    const tip = `<title>${esc(`${vtime(mk.t - t0)} ${mk.message}`)}</title>`;
    if (mk.kind === 'fault') parts.push(`<circle cx="${cx}" cy="${cy}" r="4" fill="${MARKER_COLORS.fault}" stroke="#1f2328" stroke-width="0.5" class="fault"${lane}>${tip}</circle>`);
    else if (mk.kind === 'warning') parts.push(`<path d="M${cx} ${cy - 6} l5.5 10 h-11 z" fill="${MARKER_COLORS.warning}" stroke="#1f2328" stroke-width="0.6" class="warning"${lane}>${tip}</path>`);
    else parts.push(`<g class="violation"><circle cx="${cx}" cy="${cy}" r="5.5" fill="${MARKER_COLORS.violation}"/><text x="${cx}" y="${cy + 3.5}" class="bang">!</text>${tip}</g>`);
  }
  // Time axis: start, each break's length and where it ends, the end; a label overlapping the one before is left out.
  const ticks: { x: number; text: string; anchor: 'start' | 'middle' | 'end' }[] = [{ x: axis.left, text: vtime(0), anchor: 'start' }];
  for (const b of axis.breaks) ticks.push({ x: b.x + b.w + 2, text: vtime(b.to - t0), anchor: 'start' });
  const endTick = { x: axis.right, text: vtime(axis.t1 - t0), anchor: 'end' as const };
  const extent = (t: { x: number; text: string; anchor: string }): [number, number] => {
    const w = t.text.length * CHAR_W;
    return t.anchor === 'start' ? [t.x, t.x + w] : t.anchor === 'end' ? [t.x - w, t.x] : [t.x - w / 2, t.x + w / 2];
  };
  const kept: typeof ticks = [];
  for (const t of ticks) if (!kept.length || extent(t)[0] > extent(kept.at(-1)!)[1] + 6) kept.push(t);
  while (kept.length > 1 && extent(kept.at(-1)!)[1] + 6 > extent(endTick)[0]) kept.pop();
  kept.push(endTick);
  for (const t of kept) parts.push(`<text x="${f1(t.x)}" y="${bottom + 14}" text-anchor="${t.anchor}" class="tick">${esc(t.text)}</text>`);
  // How long each compressed gap is, on a row of its own under its band (a label overlapping the one before is left out; the band's tooltip has it).
  let lastEnd = -Infinity;
  for (const b of axis.breaks) {
    const text = `≈${span(b.to - b.from)}`;
    const w = text.length * CHAR_W;
    const cx = Math.min(Math.max(b.x + b.w / 2, axis.left + w / 2), m.width - 4 - w / 2);
    if (cx - w / 2 <= lastEnd + 4) continue;
    lastEnd = cx + w / 2;
    parts.push(`<text x="${f1(cx)}" y="${bottom + 26}" text-anchor="middle" class="tick brk">${esc(text)}</text>`);
  }
  // Legend.
  legendRows(m.legend, m.width).forEach((row, r) => {
    const y = m.legendTop + r * 16;
    for (const e of row) {
      if (e.head) parts.push(`<text x="${f1(e.head.x)}" y="${y + 9}" class="lbl dim">${esc(e.head.text)}</text>`);
      const sw =
        e.item.group !== 'marker'
          ? `<rect x="${f1(e.x)}" y="${y}" width="10" height="10" fill="${e.item.color}" stroke="#8c959f" stroke-width="0.5"/>`
          : e.item.name === 'fault'
            ? `<circle cx="${f1(e.x + 5)}" cy="${y + 5}" r="4" fill="${e.item.color}"/>`
            : e.item.name === 'Warning event'
              ? `<path d="M${f1(e.x + 5)} ${y} l5 10 h-10 z" fill="${e.item.color}" stroke="#1f2328" stroke-width="0.6"/>`
              : e.item.name === 'invariant violation'
                ? `<circle cx="${f1(e.x + 5)}" cy="${y + 5}" r="5" fill="${e.item.color}"/>`
                : `<rect x="${f1(e.x)}" y="${y}" width="10" height="10" fill="${e.item.color}" stroke="#8c959f" stroke-width="0.5"/>`;
      parts.push(`<g class="key" data-group="${e.item.group}" data-name="${esc(e.item.name)}">${sw}<text x="${f1(e.x + 14)}" y="${y + 9}" class="lbl">${esc(e.item.name)}</text></g>`);
    }
  });
  // Scoped to the picture: inline in a page (the report, the dashboard) an SVG <style> applies to the whole document.
  const css = {
    '.lbl': 'font:10px monospace;fill:#1f2328', '.dim': 'fill:#57606a', '.tick': 'font:10px monospace;fill:#57606a', '.seg': 'font:10px monospace',
    '.step': 'stroke:#8c959f;stroke-dasharray:2 3', '.steplbl': 'font:10px monospace;fill:#57606a;paint-order:stroke;stroke:#fff;stroke-width:3px',
    '.zig': 'fill:none;stroke:#8c959f;stroke-width:1', '.bang': 'font:bold 9px sans-serif;fill:#fff;text-anchor:middle',
  };
  const style = `<style>${Object.entries(css).map(([k, v]) => `svg.timeline ${k}{${v}}`).join('')}</style>`;
  return `<svg width="${m.width}" height="${m.height}" viewBox="0 0 ${m.width} ${m.height}" xmlns="http://www.w3.org/2000/svg" class="timeline">${style}${parts.join('')}</svg>`;
}

/**
 * The timeline picture of an event log (see src/harness/report/timeline.ts for what
 * it shows). The HTML report and the live dashboard (src/harness/dashboard) both draw it.
 */
export function timelineSvg(ev: readonly LogEvent[], opts: TimelineOptions = {}): string {
  const m = timelineModel(ev, opts);
  return m ? renderTimeline(m) : '';
}

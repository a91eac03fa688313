/**
 * A self-contained HTML report: verdicts, steps, and a timeline picture per
 * scenario — one lane per machine, server and persistent volume over virtual
 * time, with step starts, faults and invariant violations marked.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LogEvent } from '../core/events.js';
import type { ScenarioResult } from '../scenario/runner.js';
import type { Coverage } from './coverage.js';
import { vtime } from './console.js';
import { countsText, scenarioReport } from './model.js';

interface Segment {
  from: number;
  to: number;
  state: string;
}

interface Lane {
  group: 'machine' | 'server' | 'volume';
  label: string;
  /** The cloud id of a server or volume lane. */
  id?: string;
  segments: Segment[];
}

const COLORS: Record<string, string> = {
  Pending: '#d0d7de', Provisioning: '#f4c542', Provisioned: '#7fb3ff', Running: '#2da44e', Deleting: '#cf222e', Failed: '#8250df',
  BUILD: '#f4c542', ACTIVE: '#2da44e', deleting: '#cf222e', ERROR: '#8250df', SHUTOFF: '#8c959f',
  creating: '#f4c542', available: '#7fb3ff', attaching: '#f4c542', 'in-use': '#2da44e', detaching: '#fb8f44',
};

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function str(e: LogEvent, k: string): string | undefined {
  const v = e.data?.[k];
  return typeof v === 'string' ? v : undefined;
}

/** Derive lanes from the event log (open states run to `until`, default the last event). */
export function lanes(events: readonly LogEvent[], until?: number): Lane[] {
  const open = new Map<string, { lane: Lane; state: string; since: number }>();
  const out: Lane[] = [];
  const end = Math.max(events.length ? events[events.length - 1]!.t : 0, until ?? 0);
  const set = (key: string, group: Lane['group'], label: string, state: string | null, t: number): void => {
    let cur = open.get(key);
    if (!cur && state === null) return;
    if (!cur) {
      const lane: Lane = { group, label, segments: [], ...(group !== 'machine' ? { id: key.slice(2) } : {}) };
      out.push(lane);
      cur = { lane, state: state!, since: t };
      open.set(key, cur);
      return;
    }
    if (cur.state === state) return;
    cur.lane.segments.push({ from: cur.since, to: t, state: cur.state });
    if (state === null) open.delete(key);
    else {
      cur.state = state;
      cur.since = t;
    }
  };
  const persistent = new Set<string>();
  for (const e of events) {
    const d = e.data ?? {};
    if (e.type === 'machine.phase' && str(e, 'machine')) set(`m/${str(e, 'machine')}`, 'machine', str(e, 'machine')!, str(e, 'phase') ?? '?', e.t);
    else if (e.type === 'object.deleted' && d.kind === 'Machine' && d.cluster === 'management') set(`m/${String(d.name)}`, 'machine', String(d.name), null, e.t);
    else if (e.source === 'cloud' && e.type.startsWith('server.') && str(e, 'serverId')) {
      const id = str(e, 'serverId')!;
      const label = str(e, 'name') ?? id.slice(0, 8);
      const state = e.type === 'server.created' ? 'BUILD' : e.type === 'server.active' ? 'ACTIVE' : e.type === 'server.delete-requested' ? 'deleting' : e.type === 'server.deleted' ? null : e.type === 'server.error' ? 'ERROR' : undefined;
      if (state !== undefined) set(`s/${id}`, 'server', label, state, e.t);
    } else if (e.source === 'cloud' && e.type.startsWith('volume.') && str(e, 'volumeId')) {
      const id = str(e, 'volumeId')!;
      if (e.type === 'volume.created') {
        const meta = d.metadata as Record<string, string> | undefined;
        if (meta?.['hcs.io/persistent'] !== 'true') continue;
        persistent.add(id);
      }
      if (!persistent.has(id)) continue;
      const state = { 'volume.created': 'creating', 'volume.available': 'available', 'volume.attach-requested': 'attaching', 'volume.attached': 'in-use', 'volume.detach-requested': 'detaching', 'volume.detached': 'available', 'volume.deleted': null }[e.type];
      if (state !== undefined) set(`v/${id}`, 'volume', str(e, 'name') ?? id.slice(0, 8), state, e.t);
    }
  }
  for (const cur of open.values()) cur.lane.segments.push({ from: cur.since, to: end, state: cur.state });
  const order = { machine: 0, server: 1, volume: 2 };
  return out.filter((l) => l.segments.length).sort((a, b) => order[a.group] - order[b.group]);
}

export interface TimelineOptions {
  /** End of the picture (default: the last event; the live dashboard passes the clock's now). */
  until?: number;
  /** Width in px (default 1100). */
  width?: number;
}

/**
 * The timeline picture of an event log: a lane per machine, server and
 * persistent volume, step starts, and faults (drawn on the lane of the
 * server or volume they hit when the call names one) and invariant
 * violations. The HTML report and the live dashboard (src/dashboard) both draw it.
 */
export function timelineSvg(ev: readonly LogEvent[], opts: TimelineOptions = {}): string {
  if (ev.length === 0) return '';
  const t0 = ev[0]!.t;
  const t1 = Math.max(ev[ev.length - 1]!.t, opts.until ?? 0, t0 + 1000);
  const ls = lanes(ev, opts.until);
  const W = opts.width ?? 1100;
  const L = 260;
  const H = 16;
  const top = 24;
  const x = (t: number): number => L + ((t - t0) / (t1 - t0)) * (W - L - 10);
  const height = top + ls.length * (H + 4) + 30;
  const parts: string[] = [];
  ls.forEach((lane, i) => {
    const y = top + i * (H + 4);
    parts.push(`<text x="4" y="${y + 12}" class="lbl">${esc(lane.group)}: ${esc(lane.label)}</text>`);
    for (const s of lane.segments) {
      const w = Math.max(1, x(s.to) - x(s.from));
      parts.push(`<rect x="${x(s.from).toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${H}" fill="${COLORS[s.state] ?? '#999'}" data-lane="${esc(lane.group)}" data-state="${esc(s.state)}"><title>${esc(`${lane.label}: ${s.state} ${vtime(s.from - t0)}–${vtime(s.to - t0)}`)}</title></rect>`);
    }
  });
  for (const e of ev) {
    if (e.type === 'step.start') {
      const step = String(e.data?.step ?? '');
      parts.push(`<line x1="${x(e.t)}" y1="14" x2="${x(e.t)}" y2="${height - 20}" class="step"/><text x="${x(e.t) + 2}" y="12" class="steplbl">${esc(step)}</text>`);
    } else if (e.source === 'fault') {
      const path = typeof e.data?.path === 'string' ? e.data.path : '';
      // The lane of the resource the call names last in its path (REST paths go parent to child: a detach names the server, then the volume).
      let hit = -1;
      let at = -1;
      if (path) ls.forEach((l, i) => {
        const p = l.id !== undefined ? path.lastIndexOf(l.id) : -1;
        if (p > at) [hit, at] = [i, p];
      });
      const cy = hit >= 0 ? top + hit * (H + 4) + H / 2 : height - 12;
      parts.push(`<circle cx="${x(e.t)}" cy="${cy}" r="4" fill="#fb8f44" stroke="#1f2328" stroke-width="0.5" class="fault"${hit >= 0 ? ` data-lane="${esc(ls[hit]!.group)}"` : ''}><title>${esc(e.message)}</title></circle>`);
    } else if (e.source === 'invariant') {
      parts.push(`<circle cx="${x(e.t)}" cy="${height - 12}" r="5" fill="#cf222e"><title>${esc(e.message)}</title></circle>`);
    }
  }
  parts.push(`<text x="${L}" y="${height - 2}" class="lbl">${vtime(0)}</text><text x="${W - 70}" y="${height - 2}" class="lbl">${vtime(t1 - t0)}</text>`);
  return `<svg width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}

function timeline(r: ScenarioResult): string {
  return timelineSvg(r.events);
}

export function renderHtml(results: ScenarioResult[], coverage?: Coverage): string {
  const legend = Object.entries(COLORS).map(([k, c]) => `<span class="key"><i style="background:${c}"></i>${esc(k)}</span>`).join(' ');
  const sections = results.map((r) => {
    const m = scenarioReport(r);
    const mark = { passed: '✓', failed: '✗', skipped: '–' };
    const steps = m.steps.map((s) => `<tr class="${s.status}"><td>${s.index}</td><td>${s.endMs !== undefined ? vtime(s.endMs) : ''}</td><td>${mark[s.status]}</td><td>${esc(s.title)}${s.status === 'skipped' ? ' <span class="meta">(not reached)</span>' : ''}${s.rules.length ? ` <span class="rules">${esc(s.rules.join(' '))}</span>` : ''}${s.error ? `<div class="err">${esc(s.error)}</div>` : ''}</td><td class="meta">${esc(s.file)}:${s.line}</td></tr>`).join('');
    return `<section id="${esc(r.scenario.name)}"><h2>${r.ok ? '✓' : '✗'} ${esc(r.scenario.name)}</h2>
<p>${esc(r.scenario.description)}</p>
<p class="meta">${esc(countsText(m.counts))} · seed ${r.seed} · ${vtime(r.virtualMs)} virtual · ${(r.wallMs / 1000).toFixed(2)} s wall · ${r.events.length} events · replay: <code>${esc(m.replay)}</code></p>
${timeline(r)}
<table class="steps"><tr><th>#</th><th>at</th><th></th><th>step</th><th>written at</th></tr>${steps}</table></section>`;
  });
  const rows = results.map((r) => {
    const c = scenarioReport(r).counts;
    return `<tr class="${r.ok ? 'passed' : 'failed'}"><td><a href="#${esc(r.scenario.name)}">${esc(r.scenario.name)}</a></td><td>${r.ok ? 'PASS' : 'FAIL'}</td><td>${c.passed}/${c.total}</td><td>${c.failed}</td><td>${c.skipped}</td><td>${vtime(r.virtualMs)}</td><td>${r.seed}</td></tr>`;
  }).join('');
  const cov = coverage ? `<h2>SPEC coverage</h2><p>${coverage.covered.length}/${coverage.total} rules exercised.${coverage.uncovered.length ? ` Not exercised: ${esc(coverage.uncovered.map((u) => u.id).join(' '))}` : ''}</p>` : '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>hcs-testbed report</title><style>
body{font:14px system-ui,sans-serif;margin:24px;color:#1f2328}table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;text-align:left;vertical-align:top}
tr.failed td{background:#ffebe9}tr.skipped td{color:#8c959f}.err{color:#cf222e}.rules{color:#0969da;font-size:12px}.meta{color:#57606a}.lbl{font:11px monospace;fill:#1f2328}
.step{stroke:#8c959f;stroke-dasharray:2 3}.steplbl{font:10px monospace;fill:#57606a}.key{margin-right:10px;font-size:12px}.key i{display:inline-block;width:10px;height:10px;margin-right:4px}
svg{border:1px solid #d0d7de;background:#fff;margin:8px 0}</style></head><body>
<h1>hcs-testbed report</h1><table><tr><th>scenario</th><th>verdict</th><th>steps passed</th><th>failed</th><th>not reached</th><th>virtual</th><th>seed</th></tr>${rows}</table>
<p>${legend} <span class="key"><i style="background:#fb8f44;border-radius:5px"></i>fault</span> <span class="key"><i style="background:#cf222e;border-radius:5px"></i>invariant violation</span></p>
${cov}${sections.join('\n')}</body></html>\n`;
}

export function writeHtml(dir: string, results: ScenarioResult[], coverage?: Coverage): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'report.html');
  writeFileSync(file, renderHtml(results, coverage));
  return file;
}

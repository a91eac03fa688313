/**
 * A self-contained HTML report: verdicts, steps, and a timeline picture per
 * scenario — one lane per machine, server and persistent volume over virtual
 * time, with step starts, faults and invariant violations marked.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioResult } from '../scenario/runner.js';
import type { Coverage } from './coverage.js';
import { vtime } from './console.js';
import { countsText, scenarioReport, totalCounts } from './model.js';
import { timelineSvg } from './timeline-svg.js';

export { lanes, timelineModel, type Lane, type Segment, type TimelineOptions } from './timeline.js';
export { timelineSvg } from './timeline-svg.js';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function timeline(r: ScenarioResult): string {
  return timelineSvg(r.events);
}

export function renderHtml(results: ScenarioResult[], coverage?: Coverage): string {
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
tr.failed td{background:#ffebe9}tr.skipped td{color:#8c959f}.err{color:#cf222e}.rules{color:#0969da;font-size:12px}.meta{color:#57606a}
svg{border:1px solid #d0d7de;background:#fff;margin:8px 0}</style></head><body>
<h1>hcs-testbed report</h1><p class="meta" id="totals">${results.filter((r) => r.ok).length} passed, ${results.filter((r) => !r.ok).length} failed · ${esc(countsText(totalCounts(results.map(scenarioReport))))}</p><table><tr><th>scenario</th><th>verdict</th><th>steps passed</th><th>failed</th><th>not reached</th><th>virtual</th><th>seed</th></tr>${rows}</table>
${cov}${sections.join('\n')}</body></html>\n`;
}

export function writeHtml(dir: string, results: ScenarioResult[], coverage?: Coverage): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'report.html');
  writeFileSync(file, renderHtml(results, coverage));
  return file;
}

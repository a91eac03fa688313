/**
 * JUnit XML for CI: one testsuite per scenario, one testcase per step of the
 * shared report model (src/harness/report/model.ts) — every step as written plus the
 * invariants at rest, so `tests`, `failures` and `skipped` are the counts the
 * console, JSON and HTML reports show.
 *
 * Format: the common JUnit XML format as documented by Testmo
 * (https://github.com/testmoapp/junitxml, "Complete JUnit XML example"), which
 * GitLab and Jenkins read: `time` in (wall) seconds on testcases and suites,
 * `file` and `line` on testcases, `<properties>` inside a testcase, and
 * `<skipped message=…/>` for a test that was not executed. Virtual time, which
 * CI tools do not know, is the testcase property `virtualSeconds`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioResult } from '../scenario/runner.js';
import { scenarioReport, totalCounts, type ReportStep, type ScenarioReport } from './model.js';

function esc(s: string): string {
  // XML 1.0 forbids most control characters even as references; drop them (ANSI colour codes, NULs).
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const secs = (ms: number): string => (ms / 1000).toFixed(3);

/** The testcase name: the step number (two digits, so CI tools sort them in order) and the full title. */
export function testcaseName(s: ReportStep): string {
  return `${String(s.index).padStart(2, '0')} ${s.title}`;
}

function testcase(m: ScenarioReport, s: ReportStep): string {
  const attrs = `classname="${esc(m.name)}" name="${esc(testcaseName(s))}" time="${secs(s.wallMs)}" file="${esc(s.file)}" line="${s.line}"`;
  const props = `<properties><property name="virtualSeconds" value="${secs(s.virtualMs)}"/>${s.rules.length ? `<property name="rules" value="${esc(s.rules.join(' '))}"/>` : ''}</properties>`;
  const outcome =
    s.status === 'failed'
      ? `<failure message="${esc(s.error ?? 'failed')}">${esc([...s.detail, `replay: ${m.replay}`].join('\n'))}</failure>`
      : s.status === 'skipped'
        ? '<skipped message="not reached: an earlier step failed"/>'
        : '';
  return `    <testcase ${attrs}>${props}${outcome}</testcase>`;
}

export function renderJunit(results: ScenarioResult[]): string {
  const models = results.map(scenarioReport);
  const suites = models.map((m) => {
    const c = m.counts;
    return `  <testsuite name="${esc(m.name)}" tests="${c.total}" failures="${c.failed}" errors="0" skipped="${c.skipped}" time="${secs(m.wallMs)}" file="${esc(m.file)}">
    <properties><property name="seed" value="${m.seed}"/><property name="virtualSeconds" value="${secs(m.virtualMs)}"/><property name="replay" value="${esc(m.replay)}"/></properties>
${m.steps.map((s) => testcase(m, s)).join('\n')}
  </testsuite>`;
  });
  const t = totalCounts(models);
  const wall = models.reduce((n, m) => n + m.wallMs, 0);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="hcs-testbed" tests="${t.total}" failures="${t.failed}" errors="0" skipped="${t.skipped}" time="${secs(wall)}">\n${suites.join('\n')}\n</testsuites>\n`;
}

export function writeJunit(dir: string, results: ScenarioResult[]): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'junit.xml');
  writeFileSync(file, renderJunit(results));
  return file;
}

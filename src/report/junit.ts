import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioResult } from '../scenario/runner.js';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** JUnit XML for CI: one testsuite per scenario, one testcase per step. */
export function writeJunit(dir: string, results: ScenarioResult[]): string {
  mkdirSync(dir, { recursive: true });
  const suites = results.map((r) => {
    const cases = r.scenario.steps.map((s) => {
      const res = r.steps.find((x) => x.index === s.index);
      const name = esc(`${String(s.index).padStart(2, '0')} ${res?.title ?? s.kind}`);
      const time = res ? ((res.endMs - res.startMs) / 1000).toFixed(3) : '0';
      if (!res) return `    <testcase classname="${esc(r.scenario.name)}" name="${name}" time="0"><skipped message="not reached"/></testcase>`;
      if (!res.ok) return `    <testcase classname="${esc(r.scenario.name)}" name="${name}" time="${time}"><failure message="${esc(res.error ?? 'failed')}">${esc([...res.detail, `replay: hcs-testbed run ${r.scenario.file} --seed ${r.seed}`].join('\n'))}</failure></testcase>`;
      return `    <testcase classname="${esc(r.scenario.name)}" name="${name}" time="${time}"/>`;
    });
    const failures = r.steps.filter((s) => !s.ok).length;
    const skipped = r.scenario.steps.length - r.steps.length;
    return `  <testsuite name="${esc(r.scenario.name)}" tests="${r.scenario.steps.length}" failures="${failures}" skipped="${skipped}" time="${(r.wallMs / 1000).toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  const file = join(dir, 'junit.xml');
  writeFileSync(file, `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${suites.join('\n')}\n</testsuites>\n`);
  return file;
}

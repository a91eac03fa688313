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
    const reached = new Set(r.steps.map((x) => x.index));
    const unreached = r.scenario.steps.filter((s) => !reached.has(s.index));
    const cases = [
      ...r.steps.map((res) => {
        const name = esc(`${String(res.index).padStart(2, '0')} ${res.title}`);
        const time = ((res.endMs - res.startMs) / 1000).toFixed(3);
        if (!res.ok) return `    <testcase classname="${esc(r.scenario.name)}" name="${name}" time="${time}"><failure message="${esc(res.error ?? 'failed')}">${esc([...res.detail, `replay: hcs-testbed run ${r.scenario.file} --seed ${r.seed}`].join('\n'))}</failure></testcase>`;
        return `    <testcase classname="${esc(r.scenario.name)}" name="${name}" time="${time}"/>`;
      }),
      ...unreached.map((s) => `    <testcase classname="${esc(r.scenario.name)}" name="${esc(`${String(s.index).padStart(2, '0')} ${s.name ?? s.kind}`)}" time="0"><skipped message="not reached"/></testcase>`),
    ];
    const failures = r.steps.filter((s) => !s.ok).length;
    const skipped = unreached.length;
    return `  <testsuite name="${esc(r.scenario.name)}" tests="${cases.length}" failures="${failures}" skipped="${skipped}" time="${(r.wallMs / 1000).toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  const file = join(dir, 'junit.xml');
  writeFileSync(file, `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${suites.join('\n')}\n</testsuites>\n`);
  return file;
}

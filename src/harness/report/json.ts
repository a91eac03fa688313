import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioResult } from '../scenario/runner.js';
import { scenarioReport } from './model.js';

/**
 * Write the event log (JSON lines) and a verdict (JSON) per scenario under `dir`.
 * The verdict's `counts` and `steps` are the shared report model (src/harness/report/model.ts):
 * every step as written plus the invariants at rest, each `passed`, `failed` or `skipped` (not reached).
 */
export function writeJsonReports(dir: string, results: ScenarioResult[]): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const r of results) {
    const base = join(dir, r.scenario.name);
    const m = scenarioReport(r);
    writeFileSync(`${base}.events.jsonl`, r.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    writeFileSync(
      `${base}.result.json`,
      JSON.stringify(
        {
          scenario: m.name,
          file: m.file,
          seed: m.seed,
          ok: m.ok,
          virtualMs: m.virtualMs,
          wallMs: Math.round(m.wallMs),
          counts: m.counts,
          rulesExercised: r.rulesExercised,
          steps: m.steps.map(({ index, kind, title, line, status, startMs, endMs, wallMs, error, rules, detail }) => ({ index, kind, title, line, status, ok: status === 'passed', startMs, endMs, wallMs: Math.round(wallMs), error, rules, detail })),
          replay: m.replay,
        },
        null,
        2,
      ) + '\n',
    );
    written.push(`${base}.events.jsonl`, `${base}.result.json`);
  }
  return written;
}

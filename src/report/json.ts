import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioResult } from '../scenario/runner.js';

/** Write the event log (JSON lines) and a verdict summary (JSON) per scenario under `dir`. */
export function writeJsonReports(dir: string, results: ScenarioResult[]): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const r of results) {
    const base = join(dir, r.scenario.name);
    writeFileSync(`${base}.events.jsonl`, r.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    writeFileSync(
      `${base}.result.json`,
      JSON.stringify(
        {
          scenario: r.scenario.name,
          file: r.scenario.file,
          seed: r.seed,
          ok: r.ok,
          virtualMs: r.virtualMs,
          rulesExercised: r.rulesExercised,
          steps: r.steps.map(({ index, kind, title, line, ok, startMs, endMs, error, rules, detail }) => ({ index, kind, title, line, ok, startMs, endMs, error, rules, detail })),
        },
        null,
        2,
      ) + '\n',
    );
    written.push(`${base}.events.jsonl`, `${base}.result.json`);
  }
  return written;
}

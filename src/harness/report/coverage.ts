import type { ScenarioResult } from '../scenario/runner.js';
import { SPEC_RULES } from '../../core/rules.js';

export interface Coverage {
  total: number;
  covered: { id: string; by: string[] }[];
  uncovered: { id: string; text: string }[];
}

/** Which SPEC rules the passing scenarios exercised (header `rules` and step `rules`). */
export function specCoverage(results: ScenarioResult[]): Coverage {
  const by = new Map<string, string[]>();
  for (const r of results) for (const id of r.rulesExercised) by.set(id, [...(by.get(id) ?? []), r.scenario.name]);
  return {
    total: SPEC_RULES.length,
    covered: SPEC_RULES.filter((x) => by.has(x.id)).map((x) => ({ id: x.id, by: by.get(x.id)! })),
    uncovered: SPEC_RULES.filter((x) => !by.has(x.id)).map((x) => ({ id: x.id, text: x.text })),
  };
}

export function coverageText(c: Coverage): string {
  const lines = [`SPEC coverage: ${c.covered.length}/${c.total} rules exercised by passing scenarios`];
  if (c.uncovered.length) lines.push(`not exercised: ${c.uncovered.map((u) => u.id).join(' ')}`);
  return lines.join('\n') + '\n';
}

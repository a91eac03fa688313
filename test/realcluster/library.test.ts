/**
 * The scenario library on a real kube-apiserver (`--backend apiserver`: the
 * binaries built by tools/kube, the testbed's CRDs and admission webhook)
 * gives the same verdicts as on the embedded default: per scenario the same
 * outcome, the same steps passing, the same SPEC rules exercised. Event logs
 * are not compared: uids, generated names and the interleaving of watch
 * events come from the apiserver.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { openBackend, type OpenBackend } from '../../src/harness/realcluster/backends.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import { skipReason, suiteSuffix } from './env.js';

const DIR = join(import.meta.dirname, '..', '..', 'scenarios');
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();

/** What "the same verdict" means: outcome, which steps passed or failed (and why, by kind of failure), rules exercised. */
function verdict(r: ScenarioResult): { ok: boolean; steps: string[]; rules: string[] } {
  return {
    ok: r.ok,
    steps: r.steps.map((s) => `${s.index} ${s.ok ? 'pass' : s.inputError ? 'input-error' : 'FAIL'}`),
    rules: r.rulesExercised,
  };
}

function failures(r: ScenarioResult): string {
  return r.steps.filter((s) => !s.ok).map((s) => `step ${s.index} (${s.title}): ${s.error ?? ''}`).join('\n');
}

describe.skipIf(!!skipReason)(`the scenario library on a real kube-apiserver${suiteSuffix}`, () => {
  let backend: OpenBackend;
  beforeAll(async () => {
    backend = await openBackend({ backend: 'apiserver' });
  }, 180_000);
  afterAll(async () => {
    await backend?.close();
  }, 60_000);

  it('covers every scenario file', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(15);
  });

  it.each(FILES)('%s: same verdict as on the embedded default', async (file) => {
    const scenario = loadScenario(join('scenarios', file));
    const embedded = await runScenario(scenario, embeddedTestbedFactory());
    const real = await runScenario(scenario, backend.factory);
    expect(verdict(real), `real apiserver:\n${failures(real)}\nembedded:\n${failures(embedded)}`).toEqual(verdict(embedded));
    // The library is meant to pass: a scenario failing on both sides is a failure too.
    expect(embedded.ok, failures(embedded)).toBe(true);
  }, 600_000);
});

/**
 * The flows issue 37 added (scenarios/pause-and-disk-edits.yaml, scenarios/operator-hand.yaml) catch the bugs of the
 * operations they exercise: each bug is planted in this test only and fails the flow at the step that exercises it.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type TestbedOptions } from '../../src/harness/testbed/index.js';
import { forgetfulClaimer } from './mutants.js';

const TIMEOUT = 180_000;

const planted = vi.hoisted(() => ({ typeMutable: false, pausedNoScale: false }));

vi.mock('../../src/product/api/admission.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/product/api/admission.js')>();
  // The bug: the accepted disk's type is left out of DISK-4's immutable fields.
  return { ...real, validatePool: (...a: Parameters<typeof real.validatePool>) => real.validatePool(...a).filter((c) => !(planted.typeMutable && /persistentDisks\[\d+\]\.type$/.test(c.field))) };
});

vi.mock('../../src/world/capi/rollout-planner.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/capi/rollout-planner.js')>();
  // The bug: a paused MachineDeployment's MachineSets are never scaled (upstream scales them proportionally).
  return { ...real, planPausedScale: (...a: Parameters<typeof real.planPausedScale>) => (planted.pausedNoScale ? { calls: [], notes: [] } : real.planPausedScale(...a)) };
});

async function run(file: string, opts: Omit<TestbedOptions, 'seed'> = {}): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), file);
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory(opts));
}

const failedStep = (r: ScenarioResult): { title: string; error?: string } => r.steps.find((s) => !s.ok)!;

describe('issue 37 flows catch the bugs of the operations they exercise', () => {
  it('DISK-4: an accepted disk whose type may change fails pause-and-disk-edits at the type patch', { timeout: TIMEOUT }, async () => {
    planted.typeMutable = true;
    try {
      const r = await run('pause-and-disk-edits.yaml');
      expect(r.ok).toBe(false);
      expect(failedStep(r).title).toBe('an accepted disk\'s type cannot change (SSD -> SAS)');
      expect(failedStep(r).error).toBe('expected kubectl to fail with "DISK-4", but it succeeded');
    } finally {
      planted.typeMutable = false;
    }
  });

  it('MD-1: a paused MachineDeployment whose MachineSets are never scaled fails pause-and-disk-edits while paused', { timeout: TIMEOUT }, async () => {
    planted.pausedNoScale = true;
    try {
      const r = await run('pause-and-disk-edits.yaml');
      expect(r.ok).toBe(false);
      expect(failedStep(r).title).toBe('paused, the old MachineSet is scaled back to 3 and nothing rolls');
      expect(failedStep(r).error).toMatch(/machineSets: MachineSets of demo-md-0: replicas 2,0 \(expected 3,0\)/);
    } finally {
      planted.pausedNoScale = false;
    }
  });

  it('DISK-3: a provider that ignores a disk made by hand and creates its own fails operator-hand', { timeout: TIMEOUT }, async () => {
    const r = await run('operator-hand.yaml', { diskClaimer: forgetfulClaimer });
    expect(r.ok).toBe(false);
    const f = failedStep(r);
    expect(f.title).toBe('the provider claimed the hand-made disk (no second volume for demo-worker-4 slot 0)');
    expect(f.error).toMatch(/^volume: \d+ volumes for demo-worker-4\/slot0 \(expected 1\): restored-worker-4 /);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/parse.js';
import { runScenario } from '../../src/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/testbed/index.js';

const DIR = 'test/scenarios/bug-reports';

describe('bug report 1: worker infrastructure upgrade with maxSurge 1 strands the old disk (issue 14)', () => {
  it('with maxSurge 1 the run fails on the stranded-data invariant, naming hostname, slot, volume and rule (MD-3)', async () => {
    const r = await runScenario(loadScenario(`${DIR}/report-1-maxsurge-1.yaml`), embeddedTestbedFactory());
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.title).toMatch(/^wait machineDeployment/);
    expect(failed.error).toMatch(
      /invariant violated: MD-3: stranded data: hostname demo-worker-\d \(pool cpaas-system\/demo-worker-pool\) was retired with its slot 0 volume demo-demo-worker-\d-pd0 \([0-9a-f-]{36}\) available and holding data, while machine \S+ took the fresh entry demo-worker-4/,
    );
    // The failure explains itself: Warning events, non-True conditions and the cloud at the failure (also in the JSON report's detail).
    expect(failed.detail).toContain('Warning events during the step:');
    expect(failed.detail.some((l) => /HCSMachine \S+: PersistentDiskReuse=False MaxSurgeTookAnotherEntry/.test(l))).toBe(true);
    expect(failed.detail).toContain('cloud at the failure:');
    expect(failed.detail.some((l) => /persistent volume demo-demo-worker-\d-pd0 \(\w{8}\) demo-worker-\d\/slot0: available$/.test(l))).toBe(true);
    expect(failed.detail.some((l) => /persistent volume demo-demo-worker-4-pd0 .* in-use on demo-md-0-/.test(l))).toBe(true);
    expect(failed.detail.some((l) => /^ {2}pool demo-worker-pool: .*demo-worker-\d free/.test(l))).toBe(true);
    const v = r.violations.find((x) => x.rule === 'MD-3')!;
    expect(v).toBeDefined();
  }, 120_000);

  it('the same procedure with maxSurge 0 passes: every disk is back in service on its hostname', async () => {
    const r = await runScenario(loadScenario(`${DIR}/report-1-maxsurge-0.yaml`), embeddedTestbedFactory());
    expect(r.steps.find((s) => !s.ok)?.error ?? '').toBe('');
    expect(r.ok).toBe(true);
    expect(r.violations).toEqual([]);
  }, 120_000);

  it('negative: the library scenario that intends the MD-3 effect fails without its expectViolations', async () => {
    const text = readFileSync('scenarios/maxsurge-disk-reuse.yaml', 'utf8').replace(/^expectViolations: \[MD-3\]\n/m, '');
    const r = await runScenario(loadScenario('scenarios/maxsurge-disk-reuse.yaml', text), embeddedTestbedFactory());
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)!.error).toContain('invariant violated: MD-3: stranded data: hostname demo-worker-');
  }, 120_000);
});

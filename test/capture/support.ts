/** Shared by the capture tests: run a scenario's first k steps, capture the testbed as a user would, replay the rest. */
import type { Scenario } from '../../src/harness/scenario/types.js';
import { runScenario, type ScenarioResult, type TestbedHandle } from '../../src/harness/scenario/runner.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';
import { captureTestbed } from '../../src/harness/capture/testbed-capture.js';
import { createReplayTestbed } from '../../src/harness/capture/replay.js';
import { parseBundle, serializeBundle, type Bundle } from '../../src/harness/capture/bundle.js';

/** The embedded testbed after the scenario's first `k` steps (kept open: close it). */
export function runTo(sc: Scenario, k: number): Promise<{ tb: Testbed; result: ScenarioResult }> {
  return runToOn(sc, k, (seed) => createTestbed({ seed }));
}

/** The testbed a factory makes (any backend), after the scenario's first `k` steps (kept open: close it). */
export async function runToOn<T extends TestbedHandle>(sc: Scenario, k: number, factory: (seed: number) => Promise<T>): Promise<{ tb: T; result: ScenarioResult }> {
  let tb: T | undefined;
  let realClose: (() => Promise<void>) | undefined;
  const result = await runScenario({ ...sc, steps: sc.steps.slice(0, k) }, async (seed) => {
    tb = await factory(seed);
    realClose = tb.close;
    tb.close = async () => undefined;
    return tb;
  });
  tb!.close = realClose!;
  return { tb: tb!, result };
}

/** Capture through the kubeconfig and the cloud API, and read the bundle back from its text (as from a file). */
export async function captureText(tb: Testbed, o: { pageSize?: number } = {}): Promise<{ bundle: Bundle; text: string }> {
  const text = serializeBundle(await captureTestbed(tb, o));
  return { bundle: parseBundle(text), text };
}

/** The scenario's steps after the first `k`, on a testbed started from the bundle. */
export function replayTail(sc: Scenario, k: number, bundle: Bundle): Promise<ScenarioResult> {
  return runScenario({ ...sc, steps: sc.steps.slice(k) }, (seed) => createReplayTestbed(bundle, { seed }));
}

/** Capture points of a scenario: early (after its first step), mid-rollout (just before the wait of its first rollout), end. */
export function capturePoints(sc: Scenario): { early: number; mid: number; end: number } {
  const n = sc.steps.length;
  const firstWait = sc.steps.findIndex((s) => s.kind === 'wait');
  let mid = sc.steps.findIndex((s, i) => i > firstWait && s.kind === 'wait' && !['wait', 'expect', 'read'].includes(sc.steps[i - 1]!.kind));
  if (mid < 1) mid = Math.floor(n / 2);
  return { early: 1, mid, end: n };
}

/** Step verdicts as a string: "." passed, "X" failed. */
export const verdicts = (steps: ScenarioResult['steps']): string => steps.map((s) => (s.ok ? '.' : 'X')).join('');

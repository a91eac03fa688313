/**
 * Shared by the capture tests (and the kind incident): the healthy three-worker cluster they start from; run a
 * scenario's first k steps, capture the testbed as a user would, replay the rest.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScenario } from '../../src/harness/scenario/parse.js';
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

/**
 * The healthy cluster: library:worker-cluster with its three workers Running and their Nodes Ready and, with
 * `markers`, a data file on each worker's persistent disk (/var/cpaas/marker, "state of <hostname>"). A scenario of
 * 2 steps (3 with markers), from a file of its own.
 */
export function workersUp(name: string, seed: number, o: { description?: string; markers?: boolean } = {}): Scenario {
  const markers = o.markers
    ? `  - write:
      hostnames: [demo-worker-1, demo-worker-2, demo-worker-3]
      path: /var/cpaas/marker
      content: "state of {hostname}"
`
    : '';
  const text = `name: ${name}
${o.description ? `description: ${o.description}\n` : ''}seed: ${seed}
steps:
  - apply: library:worker-cluster
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 3}
      - nodes: {cluster: demo, ready: true, count: 3}
    timeout: 30m
${markers}`;
  const file = join(mkdtempSync(join(tmpdir(), `${name}-`)), `${name}.yaml`);
  writeFileSync(file, text);
  return loadScenario(file);
}

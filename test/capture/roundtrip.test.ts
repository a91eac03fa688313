/**
 * Round trip on the library (issue 35, "Must show"): for every library scenario, at three points — early (after its
 * first step), mid-rollout (just before the wait of its first rollout) and at its end — the running testbed is captured
 * through its kubeconfig and its cloud API (src/harness/capture/testbed-capture.ts: the real Kubernetes client over
 * HTTPS, the signed HCS list calls paged by marker), the bundle is read back from its text, a testbed is started from
 * it and the remaining steps run there. The verdicts (outcome, every remaining step, the invariants at rest) and the
 * per-hostname sequences of Machine creations and deletions over the whole run (test/upstream/sequences.ts: the
 * provider's entry-bound / entry-released events; the replay's log continues the captured history) equal the
 * uninterrupted run's.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { createTestbed } from '../../src/harness/testbed/index.js';
import { runShape } from '../upstream/sequences.js';
import { capturePoints, captureText, replayTail, runTo, verdicts } from './support.js';

const SCENARIOS = readdirSync('scenarios').filter((f) => f.endsWith('.yaml')).sort();

describe('capture, replay, run the rest: the library round trip', () => {
  it('covers the whole library', () => {
    expect(SCENARIOS.length).toBe(24);
  });

  it.each(SCENARIOS)('%s: early, mid-rollout and end give the uninterrupted run\'s verdicts and per-hostname sequences', async (file) => {
    const sc = loadScenario(`scenarios/${file}`);
    const full = await runScenario(sc, (seed) => createTestbed({ seed }));
    expect(full.ok).toBe(true);
    const want = runShape(full, 0).hostnames;
    const points = capturePoints(sc);
    for (const [name, k] of Object.entries(points)) {
      const { tb } = await runTo(sc, k);
      const { bundle } = await captureText(tb);
      await tb.close();
      const r = await replayTail(sc, k, bundle);
      const tail = full.steps.filter((s) => s.index > k);
      const at = `${sc.name} captured ${name} (after step ${k} of ${sc.steps.length})`;
      expect(`${at}: ${verdicts(r.steps)} ${r.ok}`, r.steps.filter((s) => !s.ok).map((s) => `${s.index} ${s.title}: ${s.error}`).join('\n')).toBe(`${at}: ${verdicts(tail)} ${full.ok}`);
      expect(r.steps.map((s) => s.title)).toEqual(tail.map((s) => s.title));
      expect(runShape(r, 0).hostnames, at).toEqual(want);
    }
  }, 600_000);
});

describe('the round trip can fail', () => {
  it('negative: a bundle without the disks\' data files replays to another verdict (the markers check of worker-infra-upgrade fails)', async () => {
    const sc = loadScenario('scenarios/worker-infra-upgrade.yaml');
    const k = capturePoints(sc).mid;
    const { tb } = await runTo(sc, k);
    const { bundle } = await captureText(tb);
    await tb.close();
    expect(bundle.disks.some((d) => Object.keys(d.files).length > 0)).toBe(true);
    const r = await replayTail(sc, k, { ...bundle, disks: bundle.disks.map((d) => ({ ...d, files: {} })) });
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)?.title).toBe('the persistent disk kept its data');
  }, 300_000);
});

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HcsClient } from '../../src/product/cloud/index.js';
import { EvsDiskClaimer, type DiskClaimer } from '../../src/product/provider/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { specCoverage } from '../../src/harness/report/coverage.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import { forgetfulClaimer } from './mutants.js';

const DIR = 'scenarios';
const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();

describe('the scenario library passes on the embedded default', () => {
  const results: ScenarioResult[] = [];
  it.each(files)('%s', async (file) => {
    const s = loadScenario(join(DIR, file));
    const r = await runScenario(s, embeddedTestbedFactory());
    results.push(r);
    const failed = r.steps.find((x) => !x.ok);
    expect(failed?.error ?? '', `step ${failed?.index}: ${failed?.title}\n${failed?.detail.join('\n')}`).toBe('');
    expect(r.ok).toBe(true);
    expect(r.steps).toHaveLength(s.steps.length + 1); // + invariants at rest
  });

  // Runs after the scenarios above (tests in a file run in order): the library
  // must exercise every SPEC rule ID.
  it('exercises every SPEC rule ID', () => {
    expect(results.map((r) => r.scenario.name).sort()).toEqual(files.map((f) => loadScenario(join(DIR, f)).name).sort());
    const c = specCoverage(results);
    expect(c.uncovered.map((u) => u.id), 'SPEC rules no passing scenario exercises').toEqual([]);
    expect(c.covered.length).toBe(c.total);
  });
});

describe('scale-out-workers', () => {
  const scenario = (): ReturnType<typeof loadScenario> => loadScenario(join(DIR, 'scale-out-workers.yaml'));

  it('is deterministic: same seed -> identical event log; another seed -> a different one', async () => {
    const a = await runScenario(scenario(), embeddedTestbedFactory());
    const b = await runScenario(scenario(), embeddedTestbedFactory());
    const c = await runScenario(scenario(), embeddedTestbedFactory(), { seed: 43 });
    const log = (r: typeof a): string => r.events.map((e) => JSON.stringify(e)).join('\n');
    expect(a.ok && b.ok && c.ok).toBe(true);
    expect(a.events.length).toBeGreaterThan(100);
    expect(log(b)).toBe(log(a));
    expect(log(c)).not.toBe(log(a));
  });

  it('DISK-3: fails when the provider does not reuse the (hostname, slot) volume', async () => {
    // Broken on purpose: the classic disk-reuse bug. The scenario's persistentDisks/markers checks must catch it.
    const r = await runScenario(scenario(), embeddedTestbedFactory({ diskClaimer: forgetfulClaimer }));
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.kind === 'expect' || failed.kind === 'wait').toBe(true);
    expect(failed.error).toMatch(/persistentDisks|markers/);
    expect(failed.error).toMatch(/volumes|identity|missing/);
  });

  it('DISK-3, DISK-8: fails when a re-created worker gets a new volume instead of its detached one', async () => {
    // Subtler bug: disks are reused while their machine lives, but a disk that was
    // attached once and is now free is treated as stale and replaced by a new one.
    // Everything passes until the scale back out, where the checks must catch it.
    const staleIgnoring = (cloud: HcsClient): DiskClaimer => {
      const real = new EvsDiskClaimer(cloud);
      const usedBefore = new Set<string>();
      const filter = <T extends { volumeId: string; status: string; attachedServerIds: string[] } | undefined>(d: T): T | undefined => {
        if (!d) return d;
        if (d.attachedServerIds.length > 0) usedBefore.add(d.volumeId);
        else if (d.status === 'available' && usedBefore.has(d.volumeId)) return undefined;
        return d;
      };
      return {
        find: async (id) => filter(await real.find(id)),
        async claim(req) {
          const found = filter(await real.find(req));
          if (found) return found;
          const res = await cloud.createVolume({
            volume: {
              name: `${req.cluster}-${req.hostname}-pd${req.slot}`,
              size: req.size,
              volume_type: req.type,
              availability_zone: req.availabilityZone,
              metadata: { 'hcs.io/cluster': req.cluster, 'hcs.io/hostname': req.hostname, 'hcs.io/slot': String(req.slot), 'hcs.io/persistent': 'true' },
            },
          });
          return { volumeId: res.volume_ids[0]!, name: 'x', status: 'creating', attachedServerIds: [], created: true, warnings: [] };
        },
      };
    };
    const r = await runScenario(scenario(), embeddedTestbedFactory({ diskClaimer: staleIgnoring }));
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    const s = scenario();
    // It gets as far as the scale back out, then the persistentDisks/markers checks fail.
    expect(failed.index).toBeGreaterThan(s.steps.findIndex((x) => x.kind === 'kubectl' && x.command.includes('"value": 2')) + 1);
    // The stranded-data invariant (DISK-8) flags it as soon as the scale-out completes, before the checks.
    expect(failed.error).toMatch(/stranded data: machine \S+ serves hostname demo-worker-\d .* slot 0 volume|identity not reused|expected attached|missing on node/);
  });
});

/**
 * Negative tests of the disk-reuse contract invariants (src/harness/scenario/disk-reuse.ts, issue 22):
 * each plants, inside the test, the provider bug its invariant is meant to catch, runs a library
 * scenario against it and shows the run fails on that invariant, with its rule ID. The library's
 * own verdicts on the reference provider (test/library/library.test.ts, `npm run scenarios`)
 * show the same invariants hold there.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HcsClient } from '../../src/product/cloud/index.js';
import { EvsDiskClaimer, type DiskClaimer } from '../../src/product/provider/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult, type TestbedFactory } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type Testbed, type TestbedOptions } from '../../src/harness/testbed/index.js';
import { overriding } from './mutants.js';

const DIR = resolve('scenarios');
const TIMEOUT = 120_000;

async function run(file: string, opts: Omit<TestbedOptions, 'seed'> = {}, prepare?: (tb: Testbed) => void, invariantsOff?: string[]): Promise<ScenarioResult> {
  const path = join(DIR, file);
  const base = embeddedTestbedFactory(opts);
  const factory: TestbedFactory = async (seed) => {
    const tb = (await base(seed)) as Testbed;
    prepare?.(tb);
    return tb;
  };
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), factory, invariantsOff ? { invariantsOff } : {});
}

/** The run failed on an invariant violation of `rule` whose message matches `why`. */
function violates(r: ScenarioResult, rule: string, why: RegExp): void {
  expect(r.ok, 'the planted bug must fail the scenario').toBe(false);
  const v = r.violations.filter((x) => x.rule === rule);
  expect(v.map((x) => x.message), `a ${rule} violation (got: ${r.violations.map((x) => `${x.rule}: ${x.message}`).join(' | ') || 'none'}; failed step: ${r.steps.find((s) => !s.ok)?.error})`).not.toHaveLength(0);
  expect(v.some((x) => why.test(x.message)), v.map((x) => x.message).join('\n')).toBe(true);
  const failed = r.steps.find((s) => !s.ok)!;
  expect(failed.error).toContain(`${rule}:`);
}

/** A claimer that delegates to the real one with a changed identity (the planted bug). */
function claimerWith(change: (r: { hostname: string; slot: number }) => { hostname: string; slot: number }): (cloud: HcsClient) => DiskClaimer {
  return (cloud) => {
    const real = new EvsDiskClaimer(cloud);
    return {
      find: (id) => real.find({ ...id, ...change(id), knownVolumeId: undefined } as Parameters<DiskClaimer['find']>[0]),
      claim: (req) => real.claim({ ...req, ...change(req), knownVolumeId: undefined } as Parameters<DiskClaimer['claim']>[0]),
    };
  };
}

describe('disk-reuse contract invariants catch the bugs they state', () => {
  it('DISK-3: a claimer that swaps two hostnames attaches a disk to a server of another hostname', { timeout: TIMEOUT }, async () => {
    const swap: Record<string, string> = { 'demo-worker-1': 'demo-worker-2', 'demo-worker-2': 'demo-worker-1' };
    const r = await run('worker-infra-upgrade.yaml', { diskClaimer: claimerWith((x) => ({ hostname: swap[x.hostname] ?? x.hostname, slot: x.slot })) });
    violates(r, 'DISK-3', /of hostname demo-worker-[12] slot 0 is (in-use|attaching) on server .* which serves hostname demo-worker-[12]/);
  });

  it('DISK-3: a slot mapping off by one claims and attaches the (hostname, slot+1) volume, a slot the pool does not declare', { timeout: TIMEOUT }, async () => {
    // The pool status then says slot 0 is Creating while no (hostname, 0) volume exists: POOL-5 (pool-status.ts) catches
    // the bug 60 s in, before the volume is attached; it is left out so that this statement is shown on its own.
    const r = await run('worker-infra-upgrade.yaml', { diskClaimer: claimerWith((x) => ({ hostname: x.hostname, slot: x.slot + 1 })) }, undefined, ['pool-status']);
    expect((await run('worker-infra-upgrade.yaml', { diskClaimer: claimerWith((x) => ({ hostname: x.hostname, slot: x.slot + 1 })) })).violations.map((v) => v.rule)).toContain('POOL-5');
    violates(r, 'DISK-3', /of hostname demo-worker-\d slot 1 is (in-use|attaching) on server .* but pool cpaas-system\/demo-worker-pool declares no slot 1 for demo-worker-\d \(slots 0\)/);
  });

  it('DISK-3: cloud-init that lists a node\'s two persistent disks in the wrong order mounts slot 1\'s volume at slot 0\'s path', { timeout: TIMEOUT }, async () => {
    // The planted bug: the rendered cloud-init swaps the devices of the node's two persistent disks (a slot <-> volume
    // mapping error in the rendering). Only demo-worker-3 gets two (its appended slot 1, after its replacement).
    const r = await run('persistent-disk-edits.yaml', {
      guest: (o) => ({
        ...o,
        hypervisor: overriding(o.hypervisor, {
          server: (id: string) => {
            const s = o.hypervisor.server(id);
            const text = s?.userData;
            if (!s || !text) return s;
            const devices = [...new Set([...text.matchAll(/virtio-[0-9a-f-]{20}/g)].map((m) => m[0]))];
            if (devices.length !== 2) return s;
            const [a, b] = devices as [string, string];
            return { ...s, userData: text.replaceAll(a, '\u0000').replaceAll(b, a).replaceAll('\u0000', b) };
          },
        }),
      }),
    });
    violates(r, 'DISK-3', /node demo-worker-3 mounts volume .* of hostname demo-worker-3 slot 1 at \/var\/cpaas, which pool demo-worker-pool gives slot 0 of demo-worker-3/);
  });

  it('POOL-4: a provider that counts a server in "deleting" as gone releases the entry while the old server still exists', { timeout: TIMEOUT }, async () => {
    // The planted bug: ShowServer of a server whose deletion has started answers "not found" to the provider.
    const r = await run('worker-infra-upgrade.yaml', {
      diskClaimer: (cloud) => {
        const show = cloud.showServer.bind(cloud);
        cloud.showServer = async (id: string) => {
          const s = await show(id);
          return s?.['OS-EXT-STS:task_state'] === 'deleting' ? undefined : s;
        };
        return new EvsDiskClaimer(cloud);
      },
    });
    violates(r, 'POOL-4', /pool entry demo-worker-\d of cpaas-system\/demo-worker-pool is (free|bound to HCSMachine \S+) while server .* of its former holder still exists/);
  });

  it('POOL-4: the same bug in overlapping-rollouts, whose slow deletions (long delete job, detach timeout) hold the window open', { timeout: TIMEOUT }, async () => {
    const r = await run('overlapping-rollouts.yaml', {
      diskClaimer: (cloud) => {
        const show = cloud.showServer.bind(cloud);
        cloud.showServer = async (id: string) => {
          const s = await show(id);
          return s?.['OS-EXT-STS:task_state'] === 'deleting' ? undefined : s;
        };
        return new EvsDiskClaimer(cloud);
      },
    });
    violates(r, 'POOL-4', /pool entry demo-worker-\d of cpaas-system\/demo-worker-pool is (free|bound to HCSMachine \S+) while server .* of its former holder still exists/);
  });

  it('DISK-6: a provider that hot-attaches a disk appended to the pool to the running server', { timeout: TIMEOUT }, async () => {
    // The planted bug: as soon as a persistent volume created for a hostname is available, attach it to the running
    // server of that hostname (instead of leaving it for the next replacement's cloud-init).
    const r = await run('persistent-disk-edits.yaml', {}, (tb) => {
      tb.events.subscribe((e) => {
        if (e.type !== 'volume.available' || typeof e.data?.volumeId !== 'string') return;
        const v = tb.cloud.hypervisor.volume(e.data.volumeId);
        const host = v?.metadata['hcs.io/hostname'];
        if (!v || v.metadata['hcs.io/persistent'] !== 'true' || !host) return;
        const running = tb.cloud.hypervisor.listServers().find((s) => s.status === 'ACTIVE' && tb.cloud.hypervisor.server(s.id)?.metadata['hcs.io/hostname'] === host);
        if (running) void tb.hcs.attachVolume(running.id, v.id).catch(() => undefined);
      });
    });
    violates(r, 'DISK-6', /persistent volume .* of hostname demo-worker-3 slot 1 was appended to pool cpaas-system\/demo-worker-pool after server .* was built \(it had slots 0\)/);
  });
});

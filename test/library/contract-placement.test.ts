/**
 * Negative tests of control plane placement across failure domains (src/harness/scenario/cp-placement.ts and the
 * KCP-2 scale-down invariant, issue 37). The failure domains are judged against the HCSCluster's
 * spec.controlPlaneAvailabilityZones the cloud lists, never against the status the provider and Cluster API
 * published — so a provider that publishes the wrong ones is caught, which an invariant deriving its expectation
 * from Cluster.status.failureDomains cannot do. Each bug is planted in this test only and fails
 * control-plane-failure-domains; the library passes unmutated (`npm run scenarios`).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { KubeClient } from '../../src/core/kube/client.js';
import type { HCSCluster } from '../../src/product/api/hcs.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult, type TestbedFactory } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type Testbed } from '../../src/harness/testbed/index.js';

const TIMEOUT = 180_000;

const planted = vi.hoisted(() => ({
  /** 'no-fd': KCP places machines in no failure domain; 'most': in the one with the most machines. */
  kcp: undefined as undefined | 'no-fd' | 'most',
  /** The provider builds servers in the template's availabilityZone, ignoring Machine.spec.failureDomain. */
  ignoreFailureDomain: false,
}));

vi.mock('../../src/world/capi/failure-domains.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/capi/failure-domains.js')>();
  return {
    ...real,
    pickFewestFailureDomain: (...a: Parameters<typeof real.pickFewestFailureDomain>) => {
      if (planted.kcp === 'no-fd') return undefined;
      if (planted.kcp === 'most') {
        const [fds, all] = a;
        return [...fds].sort((x, y) => all.filter((m) => m.failureDomain === y).length - all.filter((m) => m.failureDomain === x).length || x.localeCompare(y))[0];
      }
      return real.pickFewestFailureDomain(...a);
    },
  };
});

vi.mock('../../src/product/provider/machine-wait.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/product/provider/machine-wait.js')>();
  return { ...real, azOf: (run: Parameters<typeof real.azOf>[0]) => (planted.ignoreFailureDomain ? run.hm.spec.availabilityZone : real.azOf(run)) };
});

/** The provider publishes `fds` (control plane) in HCSCluster.status.failureDomains whatever the spec and the cloud say. */
function publishes(fds: string[]): TestbedFactory {
  const base = embeddedTestbedFactory({});
  return async (seed) => {
    const tb = (await base(seed)) as Testbed;
    const mgmt = tb.env.mgmt as KubeClient;
    for (const m of ['updateStatus', 'updateStatusShared'] as const) {
      const real = mgmt[m]?.bind(mgmt) as ((o: unknown, p?: unknown) => Promise<unknown>) | undefined;
      if (!real) continue;
      (mgmt as unknown as Record<string, unknown>)[m] = (obj: HCSCluster, opts?: unknown) =>
        real(obj.kind === 'HCSCluster' && obj.status?.failureDomains ? { ...obj, status: { ...obj.status, failureDomains: Object.fromEntries(fds.map((f) => [f, { controlPlane: true }])) } } : obj, opts);
    }
    return tb;
  };
}

async function run(factory: TestbedFactory = embeddedTestbedFactory({})): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), 'control-plane-failure-domains.yaml');
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), factory);
}

function violates(r: ScenarioResult, rule: string, why: RegExp): void {
  expect(r.ok, 'the planted bug must fail the scenario').toBe(false);
  const v = r.violations.filter((x) => x.rule === rule);
  expect(v.some((x) => why.test(x.message)), `a ${rule} violation matching ${why} (got: ${r.violations.map((x) => `${x.rule}: ${x.message}`).join(' | ') || 'none'}; failed step: ${r.steps.find((s) => !s.ok)?.error})`).toBe(true);
}

describe('control plane placement across failure domains (issue 37)', () => {
  it('KCP-2: a provider that publishes only az1 although the HCSCluster names az1 and az2 (both listed by the cloud) fails', { timeout: TIMEOUT }, async () => {
    const r = await run(publishes(['az1']));
    violates(r, 'KCP-2', /^HCSCluster cpaas-system\/demo status\.failureDomains names control plane failure domains \[az1\], expected \[az1, az2\]/);
    // Cluster API copies them: the Cluster's failure domains are judged against the same independent expectation.
    violates(r, 'KCP-2', /^Cluster cpaas-system\/demo status\.failureDomains names control plane failure domains \[az1\], expected \[az1, az2\]/);
  });

  it('KCP-2: a KubeadmControlPlane that places its machines in no failure domain fails', { timeout: TIMEOUT }, async () => {
    planted.kcp = 'no-fd';
    try {
      violates(await run(), 'KCP-2', /^control plane Machine demo-control-plane-\w+ has spec\.failureDomain \(none\), expected one of \[az1, az2\]/);
    } finally {
      planted.kcp = undefined;
    }
  });

  it('KCP-2: a KubeadmControlPlane that places each machine in the failure domain with the most machines fails', { timeout: TIMEOUT }, async () => {
    planted.kcp = 'most';
    try {
      violates(await run(), 'KCP-2', /^KubeadmControlPlane cpaas-system\/demo-control-plane at rest with 5 machines placed az1=5, az2=0/);
    } finally {
      planted.kcp = undefined;
    }
  });

  it('TPL-2: a provider that builds every server in the template\'s availability zone, not the Machine\'s failure domain, fails', { timeout: TIMEOUT }, async () => {
    planted.ignoreFailureDomain = true;
    try {
      violates(await run(), 'TPL-2', /^server [0-9a-f-]+ of control plane Machine demo-control-plane-\w+ is in availability zone az1, but the Machine's spec\.failureDomain is az2$/);
    } finally {
      planted.ignoreFailureDomain = false;
    }
  });
});

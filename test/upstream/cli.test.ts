/**
 * `hcs-testbed run --capi upstream` refuses, exit 2 with the reason and no
 * stack trace, where it cannot run: with a backend other than apiserver, and
 * (before anything is started) without the binaries or outside a network
 * namespace with only lo (the v1.10 managers' webhook servers bind every
 * interface). Runs everywhere; the mode itself is run by
 * test/upstream/scenarios.test.ts under `npm run test:upstream`.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { testbedCrdsForUpstream, upstreamProblem } from '../../src/harness/realcluster/upstream/upstream.js';

async function run(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await main(args, (s) => (out += s));
  return { code, out };
}

describe('run --capi upstream: where it cannot run (issue 16)', () => {
  it('needs --backend apiserver', async () => {
    const r = await run(['run', 'scenarios/scale-out-workers.yaml', '--backend', 'kubeconfig', '--kubeconfig', '/nonexistent', '--capi', 'upstream']);
    expect(r.code).toBe(2);
    expect(r.out).toContain('--capi upstream goes with --backend apiserver');
    expect(r.out).not.toMatch(/\n\s+at /);
  });

  it.skipIf(upstreamProblem() === undefined)('says why it cannot run here (binaries, or interfaces besides lo) and starts nothing', async () => {
    const r = await run(['run', 'scenarios/scale-out-workers.yaml', '--backend', 'apiserver', '--capi', 'upstream']);
    expect(r.code).toBe(2);
    expect(r.out).toContain('--capi upstream cannot run here');
    expect(r.out).toContain(upstreamProblem()!);
    expect(r.out).not.toMatch(/\n\s+at /);
  });

  it('installs the HCS CRDs with the v1beta1 contract label, and none of the testbed\'s own Cluster API CRDs', () => {
    const crds = testbedCrdsForUpstream();
    const groups = new Set(crds.map((c) => c.spec.group));
    expect([...groups].sort()).toEqual(['app.alauda.io', 'infrastructure.cluster.x-k8s.io']);
    for (const c of crds.filter((x) => x.spec.group === 'infrastructure.cluster.x-k8s.io')) expect(c.metadata.labels?.['cluster.x-k8s.io/v1beta1'], c.metadata.name).toBe('v1beta1');
  });
});

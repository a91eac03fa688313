/**
 * Negative tests of the continuous Node invariants (src/harness/scenario/invariants.ts, src/harness/scenario/drain-order.ts;
 * issue 22): each plants, inside the test, the bug its invariant is meant to catch (the mutant catalogue's
 * guest/node-without-ips and capi/machine-skips-drain), runs a library scenario against it and shows the run
 * fails on that invariant, with its rule ID, while the library passes them on the unmutated system
 * (`npm run scenarios`, test/library/library.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { evictablePods } from '../../src/harness/scenario/drain-order.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type TestbedOptions } from '../../src/harness/testbed/index.js';
import { overriding } from './mutants.js';

const TIMEOUT = 120_000;

const planted = vi.hoisted(() => ({ skipDrain: false }));

// The planted Cluster API bug (capi/machine-skips-drain): the Machine controller's drain evicts nothing and reports
// success, so the infrastructure is deleted with the Node's pods still on it.
vi.mock('../../src/world/workload/drain.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/workload/drain.js')>();
  return {
    ...real,
    drainNode: (...a: Parameters<typeof real.drainNode>) => (planted.skipDrain ? Promise.resolve({ evicted: [], skipped: [], warnings: [], waiting: [] }) : real.drainNode(...a)),
  };
});

async function run(file: string, opts: Omit<TestbedOptions, 'seed'> = {}): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), file);
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory(opts));
}

/** The run failed, while the nodes run (not only at rest), on an invariant violation of `rule` whose message matches `why`. */
function violates(r: ScenarioResult, rule: string, why: RegExp): void {
  expect(r.ok, 'the planted bug must fail the scenario').toBe(false);
  const v = r.violations.filter((x) => x.rule === rule);
  expect(v.map((x) => x.message), `a ${rule} violation (got: ${r.violations.map((x) => `${x.rule}: ${x.message}`).join(' | ') || 'none'}; failed step: ${r.steps.find((s) => !s.ok)?.error})`).not.toHaveLength(0);
  expect(v.some((x) => why.test(x.message)), v.map((x) => x.message).join('\n')).toBe(true);
  const failed = r.steps.find((s) => !s.ok)!;
  expect(failed.title).not.toContain('invariants at rest');
  expect(failed.error).toContain(`${rule}:`);
}

describe('Node invariants catch the bugs they state', () => {
  it('NET-7: a kubelet that registers its Node without the pool entry\'s static IPs (node-ip not passed) fails while the node is Ready', { timeout: TIMEOUT }, async () => {
    // The planted bug: the guest sees its server without addresses, so its kubelet registers only the Hostname address.
    // The certificate's SANs still come from the provider (the server's ports), so BOOT-2 holds: only NET-7 sees it.
    const r = await run('scale-out-workers.yaml', {
      guest: (o) => ({
        ...o,
        hypervisor: overriding(o.hypervisor, {
          server: (id: string) => {
            const s = o.hypervisor.server(id);
            return s && { ...s, ips: [] };
          },
        }),
      }),
    });
    violates(r, 'NET-7', /^Node demo-worker-\d \(Machine \S+, pool demo-worker-pool entry demo-worker-\d\) is Ready without the entry's static IP 192\.168\.\d+\.\d+ as InternalIP \(its addresses: Hostname=demo-worker-\d\)$/);
  });

  it('MD-4: a Machine controller that deletes the infrastructure without draining the Node fails at the first control plane machine it removes', { timeout: TIMEOUT }, async () => {
    planted.skipDrain = true;
    try {
      const r = await run('control-plane-upgrade.yaml');
      violates(
        r,
        'MD-4',
        /^Machine cpaas-system\/demo-control-plane-\w+: its HCSMachine demo-control-plane-\w+ is being deleted while Node demo-cp-\d still runs \d pods a drain evicts \(kube-system\/coredns-\S+, .*; DrainingSucceeded True\): the Node must be drained before its infrastructure goes$/,
      );
    } finally {
      planted.skipDrain = false;
    }
  });

  it('MD-4: the pods a drain evicts are those not managed by a DaemonSet, not mirror pods, not labelled drain=skip, not finished or being deleted', { timeout: 10_000 }, () => {
    const pod = (name: string, extra: Record<string, unknown> = {}, phase = 'Running'): Parameters<typeof evictablePods>[0][number] =>
      ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns', name, ...extra }, status: { phase } }) as Parameters<typeof evictablePods>[0][number];
    const pods = [
      pod('rs', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: '1', controller: true }] }),
      pod('bare'),
      pod('ds', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'x', uid: '2', controller: true }] }),
      pod('mirror', { annotations: { 'kubernetes.io/config.mirror': 'abc' } }),
      pod('skip', { labels: { 'cluster.x-k8s.io/drain': 'skip' } }),
      pod('going', { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      pod('done', {}, 'Succeeded'),
    ];
    expect(evictablePods(pods)).toEqual(['ns/bare', 'ns/rs']);
  });
});

/**
 * The contract/reference classification and the conformance mode (issue 22):
 * the reference provider passes the contract; a provider that differs from it
 * only in reference details (no MD-3 flagging) passes the contract but not
 * the run; a disk-reuse bug fails the contract naming its rule.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKS, describeCheck } from '../../src/harness/scenario/checks.js';
import type { CheckSpec, Step } from '../../src/harness/scenario/types.js';
import { conformanceTable, conformanceText } from '../../src/harness/scenario/conformance.js';
import { kubectlTier } from '../../src/harness/scenario/contract.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult, type SkippedCheck } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import type { TestbedOptions } from '../../src/harness/testbed/testbed.js';
import { forgetfulClaimer } from '../library/mutants.js';
import { main } from '../../src/harness/cli/main.js';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import { InvariantMonitor } from '../../src/harness/scenario/invariants.js';
import type { CloudView, World } from '../../src/harness/scenario/world.js';
import { runningCluster } from './fixtures.js';

const WORKER_SCENARIOS = ['scale-out-workers.yaml', 'worker-infra-upgrade.yaml', 'maxsurge-disk-reuse.yaml'];
const tier = (type: string, p: Record<string, unknown>): ReturnType<(typeof CHECKS)[string]['tier']> => CHECKS[type]!.tier(p);

describe('classification: contract or reference (src/harness/scenario/contract.ts)', () => {
  it('reads of the cloud, the guest, objects and the testbed are contract', () => {
    for (const [type, p] of [
      ['persistentDisks', { pool: 'p' }],
      ['markers', {}],
      ['machines', { count: 3 }],
      ['events', { source: 'cloud', type: 'server.deleted', count: 3 }],
      ['events', { source: 'guest', type: 'guest.join-failed', contains: 'carries Kubernetes' }],
      ['events', { source: 'invariant', type: 'invariant.expected-violation', rule: 'MD-3', count: 1 }],
      ['events', { type: 'event.NoFreePoolEntry', count: 0 }],
      ['events', { type: 'event.EtcdQuorumLost', rule: 'KCP-5' }],
      ['condition', { kind: 'HCSMachine', type: 'PoolEntryBound', reason: 'NoFreePoolEntry', count: 1 }],
      ['condition', { kind: 'KubeadmControlPlane', type: 'EtcdClusterHealthy', status: 'True' }],
      ['object', { kind: 'HCSMachineConfigPool', name: 'p', path: 'status.available', equals: 0 }],
      ['object', { kind: 'HCSMachineConfigPool', name: 'p', path: 'status.entries[0].persistentDisks[0].phase', equals: 'Attached' }],
    ] as const) expect(tier(type, p).tier, `${type} ${JSON.stringify(p)}`).toBe('contract');
  });

  it('the reference provider\'s log wording, Event/condition messages, counts, rule annotations and own conditions are reference', () => {
    expect(tier('controllerLog', { contains: 'MD-3' })).toMatchObject({ tier: 'reference' });
    expect(tier('events', { type: 'event.NoFreePoolEntry', rule: 'MD-3' })).toMatchObject({ tier: 'reference', core: { type: 'event.NoFreePoolEntry' } });
    expect(tier('events', { type: 'event.MaxSurgeTookAnotherEntry', count: 3 })).toMatchObject({ tier: 'reference' });
    expect(tier('events', { type: 'event.MaxSurgeTookAnotherEntry', count: 3 }).core).toBeUndefined();
    expect(tier('events', { source: 'provider', rule: 'OVN-2' }).tier).toBe('reference');
    expect(tier('condition', { kind: 'HCSMachine', type: 'PoolEntryBound', reason: 'NoFreePoolEntry', contains: 'MD-3: ', count: 1 })).toMatchObject({
      tier: 'reference',
      core: { kind: 'HCSMachine', type: 'PoolEntryBound', reason: 'NoFreePoolEntry', count: 1 },
    });
    expect(tier('condition', { kind: 'HCSCluster', name: 'demo', type: 'VersionsConsistent', status: 'True' })).toMatchObject({ tier: 'reference' });
    expect(tier('condition', { kind: 'HCSMachine', type: 'PersistentDiskReuse', reason: 'MaxSurgeTookAnotherEntry' }).tier).toBe('reference');
    expect(kubectlTier('kubectl logs -n cpaas-system deployment/hcs-controller-manager', true).tier).toBe('reference');
    expect(kubectlTier('kubectl describe hcsmachine -n cpaas-system', true).tier).toBe('reference');
    expect(kubectlTier('kubectl get machines -n cpaas-system', true).tier).toBe('contract');
  });

  it('every check of the library is classified, and the worker scenarios hold the reference checks the issue names', () => {
    const refs: string[] = [];
    for (const f of [...WORKER_SCENARIOS, 'worker-k8s-upgrade.yaml', 'cloud-faults.yaml', 'network.yaml', 'create-cluster.yaml', 'kube-ovn-upgrade.yaml', 'rollback.yaml']) {
      for (const st of loadScenario(join('scenarios', f)).steps) {
        if (st.kind !== 'wait' && st.kind !== 'expect') continue;
        for (const c of st.checks) {
          const t = CHECKS[c.type]!.tier(c.params);
          expect(['contract', 'reference']).toContain(t.tier);
          if (t.tier === 'reference') refs.push(`${f}: ${c.type} ${JSON.stringify(c.params)}`);
        }
      }
    }
    expect(refs.join('\n')).toMatch(/maxsurge-disk-reuse.yaml: controllerLog/);
    expect(refs.join('\n')).toMatch(/maxsurge-disk-reuse.yaml: events .*"count":3/);
    expect(refs.join('\n')).toMatch(/worker-k8s-upgrade.yaml: condition .*VersionsConsistent/);
  });
});

describe('contract versions of reference checks', () => {
  it('volume (DISK-3): one volume per (hostname, slot), attached to the holder\'s server; a fresh duplicate and a detached one fail', { timeout: 60_000 }, async () => {
    const tb = await runningCluster();
    try {
      const run = (p: Record<string, unknown>): ReturnType<(typeof CHECKS)[string]['run']> => CHECKS.volume!.run(tb.world, p);
      const host = tb.env.mgmt.listSync<HCSMachine>('HCSMachine').map((m) => m.status!.hostname!).sort()[0]!;
      expect(await run({ hostname: host, slot: 0, attached: true })).toMatchObject({ ok: true });
      // The bug of a provider that creates a fresh volume instead of claiming the (hostname, slot) one.
      await tb.hcs.createVolume({ volume: { name: `dup-${host}`, size: 50, volume_type: 'SSD', availability_zone: 'az1', metadata: { 'hcs.io/cluster': 'demo', 'hcs.io/hostname': host, 'hcs.io/slot': '0', 'hcs.io/persistent': 'true' } } });
      await tb.sim.advance(30_000);
      const dup = await run({ hostname: host, slot: 0, attached: true });
      expect(dup.ok).toBe(false);
      expect(dup.detail).toMatch(new RegExp(`2 volumes for ${host}/slot0 \\(expected 1\\)`));
      expect(await run({ hostname: host, slot: 0, count: 2 })).toMatchObject({ ok: true });
      const other = await run({ hostname: host, slot: 0, attached: false, count: 2 });
      expect(other.ok).toBe(false);
      expect(other.detail).toMatch(/expected available/);
    } finally {
      await tb.close();
    }
  });

  it('a contract-only monitor sets the reference invariant (server name == HCSMachine name) aside as skipped', { timeout: 60_000 }, async () => {
    const tb = await runningCluster();
    try {
      const c = tb.world.cloud;
      const renamed: CloudView = {
        listServers: () => c.listServers().map((s) => ({ ...s, name: `vm-${s.id.slice(0, 6)}` })),
        server: (id) => {
          const s = c.server(id);
          return s && { ...s, name: `vm-${s.id.slice(0, 6)}` };
        },
        listVolumes: () => c.listVolumes(),
        readFile: (v, p) => c.readFile(v, p),
        images: () => c.images(),
      };
      const world: World = { ...tb.world, cloud: renamed };
      const full = await new InvariantMonitor(world, () => tb.events.all()).check();
      expect(full.map((v) => v.key)).toEqual(expect.arrayContaining([expect.stringMatching(/^TPL-4\/serverId\//)]));
      const contract = new InvariantMonitor(world, () => tb.events.all(), { contractOnly: true });
      expect(await contract.check()).toEqual([]);
      expect(contract.skippedReference().map((s) => s.rule)).toEqual(['TPL-4', 'TPL-4', 'TPL-4']);
      expect(contract.skippedReference()[0]!.why).toMatch(/naming/);
    } finally {
      await tb.close();
    }
  });
});

async function conformanceRun(file: string, opts: Omit<TestbedOptions, 'seed'> = {}): Promise<ScenarioResult> {
  return runScenario(loadScenario(join('scenarios', file)), embeddedTestbedFactory(opts), { conformance: true });
}

describe('conformance mode on the embedded reference provider', () => {
  it('the worker scenarios pass the contract; reference checks are skipped and marked', { timeout: 120_000 }, async () => {
    const results = [];
    for (const f of WORKER_SCENARIOS) results.push(await conformanceRun(f));
    for (const r of results) expect(r.ok, `${r.scenario.name}: ${r.steps.find((s) => !s.ok)?.error ?? ''}`).toBe(true);
    const t = conformanceTable(results);
    expect(t.rows.filter((r) => r.status === 'fail')).toEqual([]);
    expect(t.rows.find((r) => r.rule === 'DISK-8')?.status).toBe('pass');
    expect(t.skippedChecks).toBeGreaterThanOrEqual(8);
    const skipped = results.flatMap((r) => r.steps.flatMap((s) => s.skipped ?? []));
    expect(skipped.some((s) => /controllerLog/.test(s.check))).toBe(true);
    expect(skipped.some((s) => s.core === 'events(type=event.NoFreePoolEntry)')).toBe(true);
    const text = conformanceText(t);
    expect(text).toMatch(/^RULE +SCENARIOS +RESULT$/m);
    expect(text).toMatch(/^DISK-9 +.*maxsurge-disk-reuse.* PASS/m);
    expect(text).toMatch(/0 fail/);
  });

  it('a provider that differs only in reference details (no MD-3 flagging) fails run but passes conformance', { timeout: 120_000 }, async () => {
    const blind = { surgeCheck: async (): Promise<undefined> => undefined };
    const plain = await runScenario(loadScenario(join('scenarios', 'maxsurge-disk-reuse.yaml')), embeddedTestbedFactory(blind));
    expect(plain.ok).toBe(false);
    const conf = await conformanceRun('maxsurge-disk-reuse.yaml', blind);
    expect(conf.ok, conf.steps.find((s) => !s.ok)?.error).toBe(true);
    expect(conformanceTable([conf]).rows.find((r) => r.rule === 'MD-3')?.status).toBe('pass');
  });

  it('a planted disk-reuse bug (a fresh volume on every claim) fails the contract, naming the rule and the evidence', { timeout: 120_000 }, async () => {
    const r = await conformanceRun('scale-out-workers.yaml', { diskClaimer: forgetfulClaimer });
    expect(r.ok).toBe(false);
    const t = conformanceTable([r]);
    const failed = t.rows.filter((x) => x.status === 'fail').map((x) => x.rule);
    expect(failed.some((x) => ['DISK-3', 'DISK-8'].includes(x)), failed.join(' ')).toBe(true);
    const row = t.rows.find((x) => x.rule === 'DISK-3' || x.rule === 'DISK-8')!;
    expect(row.failures[0]!.scenario).toBe('scale-out-workers');
    expect(row.failures[0]!.evidence).toMatch(/persistentDisks|markers|volume/);
    expect(t.rows.some((x) => x.status === 'not reached')).toBe(true);
    expect(conformanceText(t)).toMatch(/FAIL\n.*✗ scale-out-workers step \d+/);
  });
});

describe('hcs-testbed conformance (CLI)', () => {
  it('prints the table and exits 0 on the reference provider; --help documents it', { timeout: 120_000 }, async () => {
    let out = '';
    const code = await main(['conformance', 'scenarios/worker-infra-upgrade.yaml', '--no-color'], (s) => (out += s));
    expect(code, out).toBe(0);
    expect(out).toMatch(/^RULE +SCENARIOS +RESULT$/m);
    expect(out).toMatch(/^DISK-8 +worker-infra-upgrade +PASS/m);
    let help = '';
    await main(['--help'], (s) => (help += s));
    expect(help).toMatch(/hcs-testbed conformance \[PATH\.\.\.\]/);
    expect(help).toMatch(/--conformance/);
    let bad = '';
    expect(await main(['conformance', 'scenarios/worker-infra-upgrade.yaml', '--jobs', '2'], (s) => (bad += s))).toBe(2);
    expect(bad).toMatch(/--jobs/);
  });
});

describe('conformance table: blame', () => {
  it('a step failed by an invariant violation fails the violated rule only, not the step\'s other rules', () => {
    const scenario = loadScenario(join('scenarios', 'scale-out-workers.yaml'));
    const wait = scenario.steps.find((s) => s.kind === 'wait' && (s.rules ?? []).includes('MD-4'))!;
    const message = 'persistent volume pd0 (v1) was deleted';
    const r = {
      scenario, seed: 42, ok: false, events: [], virtualMs: 0, wallMs: 0, rulesExercised: [],
      violations: [{ rule: 'DISK-9', key: 'DISK-9/deleted/v1', message, at: 0 }],
      steps: [{ index: wait.index, kind: 'wait' as const, title: 'wait', line: 0, ok: false, startMs: 0, endMs: 0, detail: [], rules: wait.rules ?? [], error: `invariant violated: DISK-9: ${message}` }],
    } satisfies ScenarioResult;
    const t = conformanceTable([r]);
    expect(t.rows.filter((x) => x.status === 'fail').map((x) => x.rule)).toEqual(['DISK-9']);
    expect(t.rows.find((x) => x.rule === 'MD-4')?.status).toBe('not reached');
  });
});

describe('conformance table: honesty (issue 37)', () => {
  /** A passed scenario of hand-written steps: header rules `header`, each step with its rules and skipped checks. */
  function passed(header: string[], steps: { step: Step; skipped?: SkippedCheck[] }[]): ScenarioResult {
    const scenario = { file: 'x.yaml', name: 'x', description: '', rules: header, seed: 1, expectViolations: [], steps: steps.map((s) => s.step) };
    return {
      scenario, seed: 1, ok: true, events: [], virtualMs: 0, wallMs: 0, rulesExercised: [], violations: [],
      steps: steps.map(({ step, skipped }) => ({ index: step.index, kind: step.kind, title: 't', line: 0, ok: true, startMs: 0, endMs: 0, detail: [], rules: step.rules ?? [], ...(skipped ? { skipped } : {}) })),
    };
  }
  const check = (type: string, params: Record<string, unknown>): CheckSpec => ({ type, params, line: 1 });
  const status = (t: ReturnType<typeof conformanceTable>, rule: string): string | undefined => t.rows.find((r) => r.rule === rule)?.status;

  it('a rule whose every check was skipped reads SKIPPED although its scenario passed and names it in its header', () => {
    const refCond = check('condition', { kind: 'HCSCluster', name: 'demo', type: 'VersionsConsistent', status: 'False' });
    const refEvent = check('events', { type: 'event.VersionMismatch', rule: 'KCP-4' });
    const t = conformanceTable([
      passed(['KCP-4', 'OPS-3'], [
        { step: { kind: 'expect', index: 1, line: 1, rules: ['KCP-4'], checks: [refCond, refEvent] }, skipped: [{ check: describeCheck('condition', refCond.params), why: 'reference' }, { check: describeCheck('events', refEvent.params), why: 'reference' }] },
        { step: { kind: 'kubectl', index: 2, line: 2, rules: ['OPS-3'], command: 'kubectl logs deployment/hcs-controller-manager', expectOutput: ['x'] }, skipped: [{ check: 'expectOutput ["x"]', why: 'reference' }] },
      ]),
    ]);
    expect(status(t, 'KCP-4')).toBe('skipped');
    expect(status(t, 'OPS-3')).toBe('skipped');
    expect(conformanceText(t)).toMatch(/^KCP-4 +x +SKIPPED \(reference only\)$/m);
  });

  it('one contract check that ran and passed makes the rule PASS; a check with rules of its own counts for those only', () => {
    const t = conformanceTable([
      passed(['UPG-1'], [
        { step: { kind: 'expect', index: 1, line: 1, rules: ['KCP-4'], checks: [check('nodes', { cluster: 'demo', count: 3 })] } },
        // markers states DISK-8: it is no evidence for the step's KCP-3.
        { step: { kind: 'expect', index: 2, line: 2, rules: ['KCP-3'], checks: [check('markers', {})] } },
        // An edit is an action, not a check.
        { step: { kind: 'edit', index: 3, line: 3, rules: ['POOL-3'], target: { kind: 'X', name: 'y', namespace: 'z' }, set: {} } },
      ]),
    ]);
    expect(status(t, 'KCP-4')).toBe('pass');
    expect(status(t, 'DISK-8')).toBe('pass');
    expect(status(t, 'KCP-3')).toBe('not reached');
    expect(status(t, 'POOL-3')).toBe('not reached');
    // A header rule no check ran for does not pass with its scenario ...
    expect(status(t, 'UPG-1')).toBe('not reached');
    // ... unless the continuous invariants state it (they held at every instant).
    expect(status(conformanceTable([passed(['DISK-9'], [])]), 'DISK-9')).toBe('pass');
  });
});

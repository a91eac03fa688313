import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { main } from '../../src/harness/cli/main.js';
import { forgetfulClaimer } from './mutants.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const DIR = 'test/library/bug-reports';

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

describe('bug report 2: the detach of the persistent volume times out during scale-in (issue 14)', () => {
  it('replayed as written, the wait for the scale back out fails, and the failure explains where the next claim of the hostname stands (DiskDetachStuck, DISK-9)', async () => {
    const r = await runScenario(loadScenario(`${DIR}/report-2-detach-timeout.yaml`), embeddedTestbedFactory());
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.index).toBe(8);
    expect(failed.error).toMatch(/^timed out after 1800s of virtual time: machines: 2 machines Running \(expected 3\) \[.*=Deleting/);
    const d = failed.detail;
    const text = d.join('\n');
    // Warning events: the stuck detach of the machine being deleted, with the cloud's FAIL reason and the retries.
    expect(d).toContain('Warning events during the step:');
    expect(text).toMatch(/HCSMachine cpaas-system\/(\S+): DiskDetachStuck: persistent disk detach from server \S+ has not finished for over 5m: demo-demo-worker-\d-pd0 \(detaching, attempt \d; the previous detach job \w+ ended FAIL: Ecs\.0002 detachVolume timed out after 600s/);
    expect(text).toMatch(/DiskDetachFailed: persistent disk demo-demo-worker-\d-pd0 \(\S+\) is still attached to server \S+: detach job \w+ ended FAIL: .*asking the cloud again \(attempt 2\)\. The server is not deleted while the disk is attached \(DISK-9\) \[DISK-9 HCS-2 OPS-2\]/);
    const old = /HCSMachine cpaas-system\/(\S+): DiskDetachStuck/.exec(text)![1]!;
    // Conditions: the machine being deleted waits for its disk; the cloud: the disk still on the old server, the entry still bound to it.
    expect(d.some((l) => l.startsWith(`  HCSMachine ${old} (being deleted): InstanceReady=False DiskDetachStuck:`))).toBe(true);
    expect(d.some((l) => l.startsWith(`  Machine ${old} (being deleted): InfrastructureReady=False Deleting`))).toBe(true);
    expect(d).toContain('cloud at the failure:');
    const vol = d.find((l) => /^ {2}persistent volume demo-demo-worker-\d-pd0 .*: (detaching|in-use) on /.test(l) && l.endsWith(` on ${old}`));
    expect(vol, text).toBeDefined();
    const host = /demo-worker-\d/.exec(vol!)![0];
    expect(d.some((l) => new RegExp(`^ {2}server ${old} ACTIVE .*demo-${host}-pd0`).test(l))).toBe(true);
    expect(d.some((l) => l.startsWith('  pool demo-worker-pool: ') && l.includes(`${host}→${old} (being deleted: the entry is released when its server is gone)`))).toBe(true);
    expect(d).toContain('cloud jobs that failed or are stuck (newest last):');
    expect(d.some((l) => /^ {2}#\d+ job detachVolume \w+ FAIL: Ecs\.0002 detachVolume timed out after 600s/.test(l))).toBe(true);
    // The next claim of that hostname does not exist: Cluster API counts the machine being deleted (PR #3434).
    expect(r.events.filter((e) => e.type === 'object.created' && e.data?.kind === 'Machine')).toHaveLength(3);
    // The explanation is printed on the console, too, not only kept in the JSON report.
    let out = '';
    const code = await main(['run', `${DIR}/report-2-detach-timeout.yaml`, '--jobs', '1', '--no-color'], (t) => (out += t));
    expect(code).toBe(1);
    expect(out).toContain(`HCSMachine ${old} (being deleted): InstanceReady=False DiskDetachStuck`);
    expect(out).toContain(`${host}→${old} (being deleted`);
  }, 180_000);

  it('a wait that starts after the DiskDetachStuck Warning was emitted still shows it (earlier, still standing), not only the event log', async () => {
    const text = readFileSync(`${DIR}/report-2-detach-timeout.yaml`, 'utf8').replace('  - advance: 3m\n', '  - advance: 6m\n').replace('    timeout: 30m\n  - expect:', '    timeout: 1m\n  - expect:');
    const r = await runScenario(loadScenario(`${DIR}/report-2-detach-timeout.yaml`, text), embeddedTestbedFactory());
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.index).toBe(8);
    expect(failed.detail).not.toContain('Warning events during the step:');
    const at = failed.detail.indexOf('Warning events before the step, still standing (the object still has that condition reason):');
    expect(at).toBeGreaterThan(-1);
    expect(failed.detail[at + 1]).toMatch(/^ {2}#\d+ HCSMachine cpaas-system\/\S+: DiskDetachStuck: persistent disk detach from server \S+ has not finished for over 5m: demo-demo-worker-\d-pd0 \(detaching\).* \[OPS-2 DISK-9\]$/);
  }, 180_000);

  it('with the cloud recovering, the old machine waits and retries, then the replacement claims the hostname, the same disk and its data (DISK-3, DISK-8, DISK-9)', async () => {
    const r = await runScenario(loadScenario(`${DIR}/report-2-detach-timeout-recovers.yaml`), embeddedTestbedFactory());
    expect(r.steps.find((s) => !s.ok)?.error ?? '').toBe('');
    expect(r.ok).toBe(true);
    expect(r.violations).toEqual([]);
    // The same persistent volumes as before the scale-in: none created for the replacement (DISK-3).
    expect(r.events.filter((e) => e.source === 'cloud' && e.type === 'volume.created' && /-pd0/.test(e.message))).toHaveLength(3);
  }, 180_000);

  it('negative: with a claimer that forgets the (hostname, slot) identity, the replacement after the recovery fails the disk and data checks (DISK-3, DISK-8)', async () => {
    const r = await runScenario(loadScenario(`${DIR}/report-2-detach-timeout-recovers.yaml`), embeddedTestbedFactory({ diskClaimer: forgetfulClaimer }));
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.error).toMatch(/DISK-3|DISK-8|markers|persistentDisks/);
  }, 180_000);
});

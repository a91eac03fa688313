import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const scenario = (extra = ''): ReturnType<typeof loadScenario> =>
  loadScenario(
    'scenarios/inline.yaml',
    `name: inline
seed: 9
steps:
  - apply: manifests/worker-cluster
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 3}
    timeout: 30m
${extra}`,
  );

describe('scenario runner', () => {
  it('reports progress during waits and a world summary after them', async () => {
    const seen: string[] = [];
    const r = await runScenario(scenario(), embeddedTestbedFactory(), { onProgress: (_t, s) => seen.push(s), progressEveryMs: 0 });
    expect(r.ok).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((s) => /machines .*Provisioning|machines .*Pending/.test(s))).toBe(true);
    expect(r.steps[1]!.summary).toMatch(/^machines Running 3 · servers ACTIVE 3 · volumes \d+$/);
  });

  it('a failing wait names the check, what it saw, and stops the run there', async () => {
    const r = await runScenario(scenario(`  - wait:
      - nodes: {cluster: demo, ready: true, count: 5}
    timeout: 2m
  - advance: 1m
`), embeddedTestbedFactory());
    expect(r.ok).toBe(false);
    expect(r.steps).toHaveLength(3);
    expect(r.steps[2]!.error).toMatch(/timed out after 120s of virtual time: nodes: 3 nodes Ready \(expected 5\)/);
    expect(r.steps[2]!.summary).toContain('machines Running 3');
  });

  it('edit and read steps: a scripted edit changes the live object; read checks a node file', async () => {
    const r = await runScenario(scenario(`  - edit:
      kind: MachineDeployment
      name: demo-md-0
      set: {spec.replicas: 2, metadata.labels.team: storage}
  - wait:
      - machines: {deployment: demo-md-0, count: 2}
    timeout: 30m
  - expect:
      - object: {kind: MachineDeployment, name: demo-md-0, path: metadata.labels.team, equals: storage}
  - write: {hostnames: [demo-worker-1], path: /var/cpaas/x, content: hello}
  - read: {hostname: demo-worker-1, path: /var/cpaas/x, content: hello}
  - read: {hostname: demo-worker-1, path: /var/cpaas/y, absent: true}
`), embeddedTestbedFactory());
    const failed = r.steps.find((s) => !s.ok);
    expect(failed?.error ?? '').toBe('');
  });
});

describe('read and file checks on a hostname no node has (issue 14)', () => {
  it('read/file with absent: true fail on an unknown hostname; a missing file says so instead of "reads undefined"', async () => {
    const bad = await runScenario(scenario(`  - read: {hostname: demo-worker-9, path: /var/cpaas/x, absent: true}
`), embeddedTestbedFactory());
    expect(bad.ok).toBe(false);
    expect(bad.steps[2]!.error).toBe('no running node with hostname "demo-worker-9" to read /var/cpaas/x from');
    const file = await runScenario(scenario(`  - expect:
      - file: {hostname: demo-worker-9, path: /var/cpaas/x, absent: true}
`), embeddedTestbedFactory());
    expect(file.steps[2]!.error).toContain('no running node with hostname demo-worker-9');
    const missing = await runScenario(scenario(`  - read: {hostname: demo-worker-1, path: /var/cpaas/none, content: hello}
`), embeddedTestbedFactory());
    expect(missing.steps[2]!.error).toBe('demo-worker-1:/var/cpaas/none does not exist, expected "hello"');
  });
});

describe('every step is in the event log with its step number; a violation an edit caused names that step (issue 14)', () => {
  it('edit, kubectl, apply, fault, crash and write steps record step.action events carrying their step number', async () => {
    const r = await runScenario(scenario(`  - kubectl: kubectl annotate machinedeployment demo-md-0 -n cpaas-system team=storage --overwrite
  - edit: {kind: MachineDeployment, name: demo-md-0, set: {metadata.labels.team: storage}}
  - fault: {service: ecs, operation: showServer, effect: {type: latency, ms: 10}, count: 1}
  - fault: {clear: true}
  - crash: {controllers: [hcsmachine], downFor: 10s}
  - write: {hostnames: [demo-worker-1], path: /var/cpaas/x, content: hello}
  - apply: library:scale-out/worker-pool-4.yaml
`), embeddedTestbedFactory());
    expect(r.steps.find((s) => !s.ok)?.error ?? '').toBe('');
    const actions = r.events.filter((e) => e.type === 'step.action').map((e) => [e.data?.step, e.message]);
    expect(actions).toEqual([
      ...actions.filter(([s]) => s === 1), // the first apply's objects
      [3, 'step 3: kubectl annotate machinedeployment demo-md-0 -n cpaas-system team=storage --overwrite (exit 0)'],
      [4, 'step 4: edit MachineDeployment cpaas-system/demo-md-0: metadata.labels.team="storage"'],
      [5, 'step 5: fault rule fault-1 added: ecs.showServer {"type":"latency","ms":10}'],
      [6, 'step 6: fault rules cleared'],
      [7, 'step 7: crashed hcsmachine for 10s'],
      [7, 'step 7: restarted hcsmachine'],
      [8, expect.stringMatching(/^step 8: write demo-worker-1:\/var\/cpaas\/x on persistent volume [0-9a-f-]{36}$/)],
      [9, 'step 9: apply HCSMachineConfigPool cpaas-system/demo-worker-pool: configured'],
    ]);
    expect(actions.filter(([s]) => s === 1).length).toBeGreaterThan(3);
    // Each action sits between its step's start and end.
    for (const e of r.events.filter((x) => x.type === 'step.action')) {
      const start = r.events.find((x) => x.type === 'step.start' && x.data?.step === e.data?.step)!;
      const end = r.events.find((x) => (x.type === 'step.pass' || x.type === 'step.fail') && x.data?.step === e.data?.step)!;
      expect(start.seq).toBeLessThan(e.seq);
      expect(e.seq).toBeLessThan(end.seq);
    }
  });

  it('an edit step that breaks an invariant (BOOT-4) fails with the violation naming that step, not an earlier unrelated event', async () => {
    // Same seed, same names: the Machine to edit is read from a first run.
    const first = await runScenario(scenario(), embeddedTestbedFactory());
    const machine = first.events.find((e) => e.type === 'machine.phase' && /-> Running$/.test(e.message))?.message.match(/Machine \S+\/(\S+) phase/)?.[1];
    expect(machine).toBeDefined();
    const r = await runScenario(scenario(`  - advance: 1m
  - edit: {kind: Machine, name: ${machine}, set: {spec.version: v1.31.9}}
  - advance: 1m
`), embeddedTestbedFactory());
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.index).toBe(4);
    expect(failed.error).toMatch(
      new RegExp(`^invariant violated: BOOT-4: Node \\S+ runs kubelet v1\\.31\\.6 but Machine ${machine} asks for v1\\.31\\.9 \\(caused by step 4, event #\\d+: step 4: edit Machine cpaas-system/${machine}: spec\\.version="v1\\.31\\.9"\\)$`),
    );
    const v = r.violations.find((x) => x.rule === 'BOOT-4')!;
    expect(v.causeStep).toBe(4);
    expect(r.events.find((e) => e.seq === v.causeSeq)?.type).toBe('step.action');
  });
});

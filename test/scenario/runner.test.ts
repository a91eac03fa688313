import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/parse.js';
import { runScenario } from '../../src/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/testbed/index.js';

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

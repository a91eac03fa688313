import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { CRASH_CONTROLLERS, loadScenario, ScenarioErrors } from '../../src/harness/scenario/parse.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

/** All error lines of a scenario text (loadScenario reports every error at once). */
function errors(text: string, file = 'scenarios/v.yaml'): string[] {
  try {
    loadScenario(file, text);
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioErrors);
    return (e as ScenarioErrors).errors.map((x) => x.message);
  }
  return [];
}

const head = 'name: v\nseed: 1\nsteps:\n';

describe('validate rejects everything run would, all errors at once, with suggestions (issue 14)', () => {
  it('a misspelt step field says which and suggests the right one, instead of "several actions"', () => {
    const e = errors(`${head}  - apply: manifests/worker-cluster\n    expectErorr: DISK-2\n`);
    expect(e).toEqual(['scenarios/v.yaml:5: field steps[0].expectErorr: unknown field "expectErorr" (did you mean "expectError"?)']);
    expect(errors(`${head}  - wiat:\n      - servers: {count: 1}\n    timeout: 1m\n`)[0]).toContain('unknown field "wiat" (did you mean "wait"?)');
    expect(errors(`${head}  - advance: 1m\n    timeout: 2m\n`)[0]).toContain('field "timeout" does not belong to a advance step');
    expect(errors(`${head}  - advance: 1m\n    wait: {servers: {count: 1}}\n`)[0]).toContain('step has several actions (advance, wait)');
  });

  it('checks, their parameters and values: phase Runing, unknown checks, status values, events rule IDs', () => {
    const e = errors(`${head}  - wait:
      - machines: {phase: Runing, count: 3}
      - machine: {count: 3}
      - servers: {status: active, count: 1}
      - condition: {kind: HCSMachine, type: Ready, status: Flase}
      - events: {rule: DISK-33}
      - nodes: {cluster: demo, count: 3, redy: true}
    timeout: 1m
`);
    expect(e).toEqual([
      expect.stringContaining('field steps[0].wait[0].machines.phase: "Runing" is not a phase of check machines (did you mean "Running"?)'),
      expect.stringContaining('field steps[0].wait[1].machine: unknown check "machine" (did you mean "machines"?)'),
      expect.stringContaining('"active" is not a status of check servers (did you mean "ACTIVE"?)'),
      expect.stringContaining('"Flase" is not a status of check condition (did you mean "False"?)'),
      expect.stringContaining('"DISK-33" is not a SPEC rule ID'),
      expect.stringContaining('unknown parameter "redy" of check nodes (did you mean "ready"?)'),
    ]);
  });

  it('fault rules as the cloud checks them: services, operations, effects and their fields', () => {
    const e = errors(`${head}  - fault: {service: ecs, operation: detachVolumes, effect: {type: stuck}}
  - fault: {service: evz, operation: createVolume, effect: {type: stuck}}
  - fault: {service: ecs, operation: showServer, effect: {type: latncy, ms: 5}}
  - fault: {service: ecs, operation: showServer, effect: {type: latency}}
  - fault: {service: ecs, operation: showServer, effect: {type: latency, ms: 5}, probablity: 0.5}
`);
    expect(e[0]).toContain('field steps[0].fault.operation: unknown ecs operation "detachVolumes" (did you mean "detachVolume"?)');
    expect(e[1]).toContain('unknown cloud service "evz" (did you mean "evs"?)');
    expect(e[2]).toContain('unknown fault effect "latncy" (did you mean "latency"?)');
    expect(e[3]).toMatch(/field steps\[3\]\.fault\.effect\.ms: is required \(HCS-6\)/);
    expect(e[4]).toContain('steps[4].fault.probablity: is not a known field (did you mean "probability"?)');
    expect(e).toHaveLength(5);
  });

  it('the timeout fault effect (a detach job that times out, HCS-6): type, fields and the operations it applies to', () => {
    const e = errors(`${head}  - fault: {service: ecs, operation: detachVolume, effect: {type: timout, ms: 600000}}
  - fault: {service: ecs, operation: detachVolume, effect: {type: timeout, ms: 600000, errorCod: Ecs.0108}}
  - fault: {service: ecs, operation: detachVolume, effect: {type: timeout, msec: 600000}}
  - fault: {service: ecs, operation: showServer, effect: {type: timeout}}
  - fault: {service: ecs, operation: detachVolume, effect: {type: timeout, ms: -5}}
  - fault: {service: ecs, operation: detachVolume, effect: {type: timeout, ms: 600000, errorCode: Ecs.0108, failReason: guest busy}}
`);
    expect(e).toEqual([
      expect.stringContaining('field steps[0].fault.effect.type: unknown fault effect "timout" (did you mean "timeout"?)'),
      expect.stringContaining('field steps[1].fault.effect.errorCod: is not a field of a timeout effect (did you mean "errorCode"?) (HCS-6)'),
      expect.stringContaining('field steps[2].fault.effect.msec: is not a field of a timeout effect (fields: ms, errorCode, failReason) (HCS-6)'),
      expect.stringContaining('field steps[3].fault.effect.type: timeout only applies to operations that start a job (createServers, deleteServers, attachVolume, detachVolume'),
      expect.stringContaining('field steps[4].fault.effect.ms: must be between 1 and'),
    ]);
  });

  it('crash targets and controller names, edit kinds', () => {
    const e = errors(`${head}  - crash: {controllers: [hcsmachin, providers]}
  - edit: {kind: MachineDeploymnet, name: demo-md-0, set: {spec.replicas: 2}}
`);
    expect(e[0]).toContain('unknown controller "hcsmachin" (did you mean "hcsmachine"?)');
    expect(e[1]).toContain('unknown controller "providers" (did you mean "provider"?)');
    expect(e[2]).toContain('unknown kind "MachineDeploymnet" (did you mean "MachineDeployment"?)');
  });

  it('the crash controller list matches the testbed', async () => {
    const tb = await embeddedTestbedFactory()(1);
    try {
      expect([...tb.world.crash(['all'])].sort()).toEqual([...CRASH_CONTROLLERS].sort());
    } finally {
      await tb.close();
    }
  });

  it('missing manifests, unknown kinds, wrong field types (CRD schema), with file and line of the manifest', () => {
    const d = mkdtempSync(join(tmpdir(), 'hcs-validate-'));
    writeFileSync(join(d, 'kind.yaml'), 'apiVersion: v1\nkind: Sekret\nmetadata: {name: x}\n');
    writeFileSync(join(d, 'types.yaml'), 'apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata: {name: md, namespace: cpaas-system}\nspec:\n  clusterName: demo\n  replicas: "three"\n');
    const file = join(d, 's.yaml');
    const e = errors(`${head}  - apply: nope/\n  - apply: kind.yaml\n  - apply: types.yaml\n  - kubectl: kubectl apply -f missing.yaml\n  - apply: types.yaml\n    expectError: must be of type integer\n`, file);
    expect(e[0]).toContain(`${file}:4: field steps[0].apply: manifest "nope/" not found (looked in ${d}`);
    expect(e[1]).toMatch(/kind\.yaml:2: field kind: unknown kind "Sekret"/);
    expect(e[2]).toMatch(/types\.yaml:6: field spec\.replicas: MachineDeployment md: Invalid value: "string": spec\.replicas in body must be of type integer/);
    expect(e[3]).toContain('kubectl apply -f missing.yaml: no such file or directory');
    expect(e).toHaveLength(4); // the last apply expects its rejection
  });

  it('relative paths where absolute ones are required (write, read, file, mount, markers)', () => {
    const e = errors(`${head}  - write: {hostname: h, path: var/cpaas/x, content: c}
  - read: {hostname: h, path: x, content: c}
  - expect:
      - file: {hostname: h, path: etc/x, absent: true}
      - mount: {hostname: h, path: var/cpaas}
      - markers: {path: var/cpaas/x}
`);
    expect(e).toHaveLength(5);
    expect(e[0]).toContain('steps[0].write.path: must be an absolute path, got "var/cpaas/x" (did you mean "/var/cpaas/x"?)');
    for (const x of e) expect(x).toContain('absolute path');
  });

  it('expectViolations names only what the invariants check (MD-3 is one), rules only SPEC IDs', () => {
    expect(errors(`name: v\nexpectViolations: [MD-3, DISK-8]\nsteps:\n  - advance: 1s\n`)).toEqual([]);
    const e = errors(`name: v\nexpectViolations: [MD-2, MD-33]\nrules: [DSIK-3]\nsteps:\n  - advance: 1s\n`);
    expect(e).toEqual([
      expect.stringContaining('field rules[0]: "DSIK-3" is not a SPEC rule ID (e.g. DISK-3, POOL-2) (did you mean "DISK-3"?)'),
      expect.stringContaining('field expectViolations[0]: "MD-2" cannot be expected: no continuous invariant checks it (expectable: DISK-3, DISK-6, DISK-8, DISK-9,'),
      expect.stringContaining('field expectViolations[1]: "MD-33" is not a SPEC rule ID (e.g. DISK-3, POOL-2) (did you mean "MD-3"?)'),
    ]);
  });

  it('a server step names a hostname and an action, stop or start', () => {
    expect(errors(`name: v\nsteps:\n  - server: {hostname: demo-worker-1, action: stop}\n`)).toEqual([]);
    expect(errors(`name: v\nsteps:\n  - server: {hostname: demo-worker-1, action: reboot}\n`)).toEqual([expect.stringContaining('steps[0].server.action: must be stop or start')]);
    expect(errors(`name: v\nsteps:\n  - server: {action: stop}\n`)).toEqual([expect.stringContaining('steps[0].server.hostname: is required')]);
  });

  it('hcs-testbed validate prints every error of every file and exits 2; run refuses the same', async () => {
    const d = mkdtempSync(join(tmpdir(), 'hcs-validate-'));
    mkdirSync(join(d, 'lib'));
    writeFileSync(join(d, 'lib', 'a.yaml'), `${head}  - wait:\n      - machines: {phase: Runing, count: 3}\n    timeout: 1m\n  - crash: {controllers: [hcsmachin]}\n`);
    writeFileSync(join(d, 'lib', 'b.yaml'), `${head}  - apply: library:worker-clustr\n`);
    writeFileSync(join(d, 'lib', 'c.yaml'), `${head}  - apply: library:worker-cluster\n`);
    for (const cmd of ['validate', 'run']) {
      let out = '';
      const code = await main([cmd, join(d, 'lib')], (s) => (out += s));
      expect(code, out).toBe(2);
      expect(out).toContain('did you mean "Running"?');
      expect(out).toContain('did you mean "hcsmachine"?');
      expect(out).toContain('library manifest "worker-clustr" not found');
      expect(out).toContain('3 errors in 2 of 3 scenario files');
      expect(out).not.toContain('▶');
    }
  });
});

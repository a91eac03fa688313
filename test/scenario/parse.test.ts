import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { loadManifestFile } from '../../src/harness/manifests/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';

function err(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError');
}

describe('scenario files: errors name the file, line and field', () => {
  it('invalid YAML', () => {
    const e = err(() => loadScenario('bad.yaml', 'name: x\nsteps: [1,\nseed: 2\n'));
    expect(e.file).toBe('bad.yaml');
    expect(e.line).toBeGreaterThan(0);
    expect(e.message).toMatch(/^bad\.yaml:\d+:\d+: invalid YAML/);
  });

  it('unknown step action', () => {
    const e = err(() => loadScenario('s.yaml', 'name: x\nseed: 1\nsteps:\n  - wait: {machines: {count: 1}}\n    timeout: 1m\n  - bogus: 3\n'));
    expect(e.line).toBe(6);
    expect(e.field).toBe('steps[1].bogus');
    expect(e.message).toContain('unknown field "bogus" (step fields: apply, kubectl,');
    expect(e.message).toContain('field steps[1]: step has no action; use one of apply, kubectl,');
  });

  it('unknown check parameter, wrong type and missing required parameter', () => {
    const a = err(() => loadScenario('s.yaml', 'name: x\nsteps:\n  - expect:\n      - machines: {count: 3, phaze: Running}\n'));
    expect(a.field).toBe('steps[0].expect[0].machines.phaze');
    expect(a.line).toBe(4);
    expect(a.message).toContain('unknown parameter "phaze" of check machines');
    const b = err(() => loadScenario('s.yaml', 'name: x\nsteps:\n  - expect:\n      - machines: {count: "three"}\n'));
    expect(b.field).toBe('steps[0].expect[0].machines.count');
    expect(b.message).toContain('must be a number');
    const c = err(() => loadScenario('s.yaml', 'name: x\nsteps:\n  - expect:\n      - nodes: {count: 3}\n'));
    expect(c.message).toContain('needs "cluster"');
  });

  it('wait needs a timeout in Go duration syntax; rule IDs are checked', () => {
    expect(err(() => loadScenario('s.yaml', 'name: x\nsteps:\n  - wait: {servers: {count: 1}}\n')).field).toBe('steps[0].timeout');
    const d = err(() => loadScenario('s.yaml', 'name: x\nsteps:\n  - wait: {servers: {count: 1}}\n    timeout: 5 minutes\n'));
    expect(d.line).toBe(4);
    expect(d.message).toContain('invalid duration');
    const r = err(() => loadScenario('s.yaml', 'name: x\nrules: [DISK-3, DSK-4]\nsteps:\n  - advance: 1s\n'));
    expect(r.field).toBe('rules[1]');
  });

  it('parses a valid scenario', () => {
    const s = loadScenario('scenarios/x.yaml', 'name: x\nseed: 7\nrules: [DISK-3]\nsteps:\n  - apply: manifests/worker-cluster/01-cluster.yaml\n  - kubectl: kubectl get machines -n cpaas-system\n    expectOutput: Running\n  - advance: 90s\n');
    expect(s.seed).toBe(7);
    expect(s.steps.map((x) => x.kind)).toEqual(['apply', 'kubectl', 'advance']);
    expect(s.steps[2]).toMatchObject({ kind: 'advance', ms: 90_000, line: 8 });
  });
});

describe('manifest files', () => {
  it('name the document line and field of a malformed manifest', () => {
    const e = err(() => loadManifestFile('m.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: ok\n---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeploymnet\nmetadata:\n  name: md\n'));
    expect(e.file).toBe('m.yaml');
    expect(e.line).toBe(7);
    expect(e.field).toBe('kind');
    expect(e.message).toContain('unknown kind "MachineDeploymnet"');
    const v = err(() => loadManifestFile('m.yaml', 'apiVersion: cluster.x-k8s.io/v1alpha3\nkind: Machine\nmetadata:\n  name: m\n'));
    expect(v.field).toBe('apiVersion');
    expect(v.message).toContain('use cluster.x-k8s.io/v1beta1');
    const n = err(() => loadManifestFile('m.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: Bad_Name\n'));
    expect(n.field).toBe('metadata.name');
    expect(n.line).toBe(4);
  });
});

import { describe, expect, it } from 'vitest';
import { ANNOTATION_DELETE_MACHINE, CAPI_VERSION } from '../../src/product/api/capi.js';
import type { Machine, MachineDeployment } from '../../src/product/api/capi.js';
import { rfc3339 } from '../../src/core/clock.js';
import { computePhase, machinesToDelete, mdutil } from '../../src/world/capi/index.js';
import { safeEncodeString, scaledValue } from '../../src/world/capi/util.js';

const NOW = Date.UTC(2026, 0, 10);

function machine(name: string, ageDays: number, extra: { healthy?: boolean; deleting?: boolean; annotated?: boolean; failed?: boolean } = {}): Machine {
  return {
    apiVersion: CAPI_VERSION,
    kind: 'Machine',
    metadata: {
      name,
      creationTimestamp: rfc3339(NOW - ageDays * 86_400_000),
      ...(extra.deleting ? { deletionTimestamp: rfc3339(NOW) } : {}),
      ...(extra.annotated ? { annotations: { [ANNOTATION_DELETE_MACHINE]: '' } } : {}),
    },
    spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { name } },
    status: {
      ...(extra.healthy === false ? {} : { nodeRef: { kind: 'Node', name } }),
      ...(extra.failed ? { failureReason: 'CreateError' } : {}),
    },
  };
}

describe('delete policy (machineset_delete_policy.go)', () => {
  const ms = [machine('m-a', 3), machine('m-b', 1), machine('m-c', 5), machine('m-d', 2)];
  const names = (xs: Machine[]): string[] => xs.map((m) => m.metadata.name);

  it('Random: equal priority, name order', () => {
    expect(names(machinesToDelete(ms, 2, 'Random', NOW))).toEqual(['m-a', 'm-b']);
  });
  it('Oldest / Newest order by creation time', () => {
    expect(names(machinesToDelete(ms, 2, 'Oldest', NOW))).toEqual(['m-c', 'm-a']);
    expect(names(machinesToDelete(ms, 2, 'Newest', NOW))).toEqual(['m-b', 'm-d']);
  });
  it('deleting > delete-machine annotation > unhealthy (no nodeRef / failure) > policy order', () => {
    const xs = [machine('z-old', 9), machine('y-unhealthy', 1, { healthy: false }), machine('x-annot', 1, { annotated: true }), machine('w-del', 1, { deleting: true }), machine('v-failed', 1, { failed: true })];
    for (const p of ['Random', 'Oldest', 'Newest'] as const) {
      expect(names(machinesToDelete(xs, 4, p, NOW))).toEqual(['w-del', 'x-annot', 'v-failed', 'y-unhealthy']);
    }
  });
  it('diff bounds', () => {
    expect(machinesToDelete(ms, 0, 'Random', NOW)).toEqual([]);
    expect(machinesToDelete(ms, 9, 'Random', NOW)).toHaveLength(4);
  });
});

describe('MachineDeployment fenceposts (MD-1)', () => {
  it('percentages: surge rounds up, unavailable rounds down', () => {
    expect(mdutil.resolveFenceposts('25%', '25%', 10)).toEqual({ surge: 3, unavailable: 2 });
    expect(mdutil.resolveFenceposts('10%', '10%', 3)).toEqual({ surge: 1, unavailable: 0 });
    expect(mdutil.resolveFenceposts(2, 1, 5)).toEqual({ surge: 2, unavailable: 1 });
  });
  it('both zero → unavailable 1', () => {
    expect(mdutil.resolveFenceposts(0, 0, 3)).toEqual({ surge: 0, unavailable: 1 });
    expect(mdutil.resolveFenceposts('0%', '10%', 3)).toEqual({ surge: 0, unavailable: 1 });
  });
  it('maxUnavailable is capped at replicas; invalid strings are rejected', () => {
    const md = { spec: { replicas: 2, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 5 } } } } as unknown as MachineDeployment;
    expect(mdutil.maxUnavailable(md)).toBe(2);
    expect(() => scaledValue('abc', 3, true)).toThrow(/not a percentage/);
  });
  it('defaults as the upstream webhook', () => {
    const md = { apiVersion: CAPI_VERSION, kind: 'MachineDeployment', metadata: { name: 'md' }, spec: { clusterName: 'c', template: { spec: { clusterName: 'c', version: '1.30.4', bootstrap: {}, infrastructureRef: { name: 't' } } } } } as MachineDeployment;
    expect(mdutil.applyMachineDeploymentDefaults(md)).toBe(true);
    expect(md.spec).toMatchObject({ replicas: 1, minReadySeconds: 0, revisionHistoryLimit: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    // v1.10.10's defaulting webhook sets no deletePolicy (checked against it in test/upstream/managers.test.ts).
    expect(md.spec.strategy?.rollingUpdate?.deletePolicy).toBeUndefined();
    expect(md.spec.template.spec.version).toBe('v1.30.4');
    expect(mdutil.applyMachineDeploymentDefaults(md)).toBe(false);
  });
  it('template hash: stable, label-insensitive to machine-template-hash, name via SafeEncodeString', () => {
    const t = { metadata: { labels: { a: 'b' } }, spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { apiVersion: 'x/v1', kind: 'K', name: 't' } } };
    const h = mdutil.computeTemplateHash(t);
    expect(h).toBe(mdutil.computeTemplateHash(structuredClone(t)));
    expect(h).toMatch(/^\d+$/);
    // k8s rand.SafeEncodeString: alphanums[byte % 27]; '0' is 48 → index 21 → '4'.
    expect(safeEncodeString('0123')).toBe('4567');
    const withHash = { ...t, metadata: { labels: { a: 'b', 'machine-template-hash': h } } };
    expect(mdutil.equalMachineTemplate(t, withHash)).toBe(true);
    const otherVersion = { ...t, spec: { ...t.spec, infrastructureRef: { ...t.spec.infrastructureRef, apiVersion: 'x/v2' } } };
    expect(mdutil.equalMachineTemplate(t, otherVersion)).toBe(true);
    const otherName = { ...t, spec: { ...t.spec, infrastructureRef: { ...t.spec.infrastructureRef, name: 't2' } } };
    expect(mdutil.equalMachineTemplate(t, otherName)).toBe(false);
  });
});

describe('machine phase (reconcilePhase)', () => {
  const m = machine('m', 0);
  it('follows upstream precedence', () => {
    expect(computePhase(m, undefined, {})).toBe('Pending');
    expect(computePhase(m, undefined, { phase: 'Pending', bootstrapReady: true })).toBe('Provisioning');
    expect(computePhase(m, 'hcs://c/m', { phase: 'Provisioning', bootstrapReady: true })).toBe('Provisioned');
    expect(computePhase(m, 'hcs://c/m', { phase: 'Provisioned', bootstrapReady: true, infrastructureReady: true, nodeRef: { kind: 'Node', name: 'n' } })).toBe('Running');
    expect(computePhase(m, 'hcs://c/m', { phase: 'Running', failureReason: 'UpdateError' })).toBe('Failed');
    expect(computePhase(machine('m', 0, { deleting: true }), 'hcs://c/m', { phase: 'Running' })).toBe('Deleting');
  });
});

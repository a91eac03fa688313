/**
 * Model details that follow cluster-api v1.10.10 (the version tools/capi
 * builds; docs/capi.md "Upstream version followed"), one upstream behaviour
 * per test, each naming its source.
 */
import { describe, expect, it } from 'vitest';
import { ANNOTATION_DELETE_MACHINE, CAPI_VERSION } from '../../src/product/api/capi.js';
import type { Machine, MachineDeployment, MachineSet } from '../../src/product/api/capi.js';
import { validateMachineDeployment } from '../../src/world/capi/admission.js';
import { rfc3339 } from '../../src/core/clock.js';
import { machinesToDelete, mdutil } from '../../src/world/capi/index.js';
import { scaledValue } from '../../src/world/capi/util.js';
import { resolveFenceposts } from '../../src/world/capi/rollout-planner.js';
import { CLUSTER, NS, createWorld, machineDeployment, machines } from './fixtures.js';

describe('intstr (k8s.io/apimachinery pkg/util/intstr GetScaledValueFromIntOrPercent, as v1.10 mdutil and its webhook call it)', () => {
  it('a bare-digit string is an error, not an integer; ints and "N%" scale', () => {
    expect(() => scaledValue('1', 3, true)).toThrow(/invalid type: string is not a percentage: "1"/);
    expect(() => resolveFenceposts('1', 0, 3)).toThrow(/not a percentage/);
    expect(() => scaledValue('x%', 3, true)).toThrow(/invalid value "x%"/);
    expect(scaledValue(2, 3, true)).toBe(2);
    expect(scaledValue('50%', 3, true)).toBe(2);
    expect(scaledValue('50%', 3, false)).toBe(1);
  });
  it('the MachineDeployment webhook (internal/webhooks/machinedeployment.go) rejects it on maxSurge and maxUnavailable (MD-1)', () => {
    const md = (ru: Record<string, unknown>) => ({ apiVersion: CAPI_VERSION, kind: 'MachineDeployment', metadata: { name: 'm' }, spec: { clusterName: 'c', strategy: { type: 'RollingUpdate', rollingUpdate: ru }, template: { spec: {} } } }) as never;
    expect(validateMachineDeployment('CREATE', md({ maxSurge: '1', maxUnavailable: 0 }))).toEqual([
      { field: 'spec.strategy.rollingUpdate.maxSurge', message: 'Invalid value: "1": must be either an int or a percentage (a string must end in %)', rule: 'MD-1' },
    ]);
    expect(validateMachineDeployment('CREATE', md({ maxSurge: 1, maxUnavailable: '2' })).map((c) => c.field)).toEqual(['spec.strategy.rollingUpdate.maxUnavailable']);
    expect(validateMachineDeployment('CREATE', md({ maxSurge: '1%', maxUnavailable: 1 }))).toEqual([]);
  });
});

describe('delete-machine annotation (internal/controllers/machineset/machineset_delete_policy.go, v1.10.10)', () => {
  const NOW = Date.UTC(2026, 0, 10);
  const m = (name: string, o: { ageDays?: number; deleting?: boolean; annotation?: string; nodeRef?: boolean } = {}): Machine => ({
    apiVersion: CAPI_VERSION,
    kind: 'Machine',
    metadata: {
      name,
      creationTimestamp: rfc3339(NOW - (o.ageDays ?? 1) * 86_400_000),
      ...(o.deleting ? { deletionTimestamp: rfc3339(NOW) } : {}),
      ...(o.annotation !== undefined ? { annotations: { [ANNOTATION_DELETE_MACHINE]: o.annotation } } : {}),
    },
    spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { name } },
    status: o.nodeRef === false ? {} : { nodeRef: { kind: 'Node', name } },
  });
  it('ranks below a Machine already being deleted (mustDelete 100) and above unhealthy ones (betterDelete 50) and every policy order, whatever its value', () => {
    const xs = [m('a-oldest', { ageDays: 300 }), m('b-unhealthy', { nodeRef: false }), m('c-marked', { annotation: 'false' }), m('d-deleting', { deleting: true }), m('e-marked', { annotation: '' })];
    for (const p of ['Random', 'Oldest', 'Newest'] as const) {
      expect(machinesToDelete(xs, 4, p, NOW).map((x) => x.metadata.name)).toEqual(['d-deleting', 'c-marked', 'e-marked', 'b-unhealthy']);
    }
    // One to delete: the marked Machine goes first even though the Oldest policy ranks a-oldest highest otherwise.
    expect(machinesToDelete(xs.filter((x) => !x.metadata.deletionTimestamp), 1, 'Oldest', NOW).map((x) => x.metadata.name)).toEqual(['c-marked']);
  });
});

describe('spec.rolloutAfter (internal/controllers/machinedeployment/mdutil/util.go FindNewMachineSet, v1.10.10)', () => {
  const T = Date.UTC(2026, 0, 1, 1, 0, 0);
  const md = (rolloutAfter?: string): MachineDeployment => ({ ...machineDeployment(2, { maxSurge: 1, maxUnavailable: 0 }), spec: { ...machineDeployment(2, { maxSurge: 1, maxUnavailable: 0 }).spec, ...(rolloutAfter ? { rolloutAfter } : {}) } });
  const ms = (name: string, created: number, replicas: number, template: MachineDeployment['spec']['template']): MachineSet => ({
    apiVersion: CAPI_VERSION,
    kind: 'MachineSet',
    metadata: { name, namespace: NS, creationTimestamp: rfc3339(created) },
    spec: { clusterName: CLUSTER, replicas, selector: { matchLabels: {} }, template },
  });
  it('before rolloutAfter the matching MachineSet is new; from then on only one created at or after it', () => {
    const d = md(rfc3339(T));
    const old = ms('old', T - 3_600_000, 2, d.spec.template);
    expect(mdutil.findNewMachineSet(d, [old], T - 1)?.metadata.name).toBe('old');
    expect(mdutil.findNewMachineSet(d, [old], T)).toBeUndefined();
    const fresh = ms('fresh', T + 1000, 0, d.spec.template);
    expect(mdutil.findNewMachineSet(d, [old, fresh], T + 2000)?.metadata.name).toBe('fresh');
    expect(mdutil.findNewMachineSet(md(), [old, fresh], T + 2000)?.metadata.name).toBe('old');
  });

  it('rolls every Machine out once the time comes, with the same template (the model requeues at rolloutAfter; upstream picks it up at its next reconcile)', async () => {
    const w = await createWorld(51);
    const start = w.clock.now();
    const after = start + 30 * 60_000;
    await w.mgmt.create(md(rfc3339(after)));
    const running = () => machines(w).filter((x) => x.status?.phase === 'Running' && !x.metadata.deletionTimestamp);
    expect((await w.sim.runUntil(() => running().length === 2, 20 * 60_000)).ok).toBe(true);
    const first = running().map((x) => x.metadata.name);
    await w.sim.advance(after - w.clock.now() - 1000);
    expect(machines(w).map((x) => x.metadata.name).sort()).toEqual([...first].sort());
    const r = await w.sim.runUntil(() => running().length === 2 && running().every((x) => !first.includes(x.metadata.name)), 30 * 60_000);
    expect(r.ok).toBe(true);
    const created = w.events.all().filter((e) => e.type === 'machineset.created');
    expect(created).toHaveLength(2);
    expect(created[1]!.t).toBe(after);
  }, 60_000);
});

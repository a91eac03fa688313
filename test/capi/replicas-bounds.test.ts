/**
 * Issue 32.2, the work one write can ask for is bounded:
 * - spec.replicas of a MachineDeployment, MachineSet or KubeadmControlPlane at
 *   most MAX_REPLICAS (5,000: Kubernetes' largest supported cluster), else 422
 *   naming spec.replicas, nothing written;
 * - an integer beyond int32 where the CRD says format int32 is refused by the
 *   webhook's decode (400, as controller-runtime's webhooks answer; the
 *   apiserver itself accepts it: test/facade/apiserver-parity.test.ts);
 * - a MachineSet missing more than a burst of Machines creates one burst
 *   (MACHINESET_BURST) per MACHINESET_BURST_PACE_MS of virtual time, the pace
 *   of Cluster API's client (--kube-api-qps 20): the clock is never held at one
 *   instant by a backlog.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../src/core/kube/errors.js';
import type { Machine, MachineDeployment } from '../../src/product/api/capi.js';
import { schemaForKind } from '../../src/product/api/crds/index.js';
import { MAX_REPLICAS, replicasWithinLimit } from '../../src/world/capi/admission.js';
import { MACHINESET_BURST, MACHINESET_BURST_PACE_MS } from '../../src/world/capi/machineset.js';
import { int32Overflow, webhookDecode } from '../../src/world/webhook-decode.js';
import { applyObject, loadManifestPath } from '../../src/harness/manifests/index.js';
import { createTestbed } from '../../src/harness/testbed/index.js';
import { FIXTURES } from '../facade/fixture.js';

const md = (replicas: unknown): MachineDeployment => ({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', metadata: { name: 'md', namespace: 'ns' }, spec: { clusterName: 'c', replicas } }) as unknown as MachineDeployment;

describe('replicas and int32 bounds (unit)', () => {
  it('int32 fields: 2^31-1 passes, 2^31 and -2^31-1 are found with their path; beyond 2^53 is left to the schema', () => {
    const schema = schemaForKind('MachineDeployment');
    expect(int32Overflow(md(2147483647), schema)).toBeUndefined();
    expect(int32Overflow(md(2147483648), schema)).toEqual({ path: ['spec', 'replicas'], value: 2147483648 });
    expect(int32Overflow(md(-2147483649), schema)?.path).toEqual(['spec', 'replicas']);
    expect(int32Overflow(md(1e308), schema)).toBeUndefined();
    // int64 fields are not int32 (AppRelease status.observedGeneration).
    expect(int32Overflow({ status: { observedGeneration: 2 ** 40 } }, schemaForKind('AppRelease'))).toBeUndefined();
  });

  it("the webhook's decode: 400 BadRequest in controller-runtime's words, the field named", () => {
    const decode = webhookDecode('MachineDeployment');
    expect(() => decode(md(5))).not.toThrow();
    let err: unknown;
    try {
      decode(md(2147483648));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).code).toBe(400);
    expect((err as KubeApiError).message).toBe('admission webhook "default.machinedeployment.cluster.x-k8s.io" denied the request: json: cannot unmarshal number 2147483648 into Go struct field MachineDeploymentSpec.spec.replicas of type int32');
    expect((err as KubeApiError).causes[0]?.field).toBe('spec.replicas');
  });

  it('spec.replicas at most 5,000', () => {
    expect(MAX_REPLICAS).toBe(5000);
    expect(replicasWithinLimit(md(5000))).toEqual([]);
    expect(replicasWithinLimit(md(5001))).toEqual([{ field: 'spec.replicas', message: expect.stringMatching(/must be less than or equal to 5000/) }]);
    expect(replicasWithinLimit(md(2147483647))[0]?.field).toBe('spec.replicas');
  });
});

describe('the admission of the management cluster refuses them, nothing written', () => {
  it('create and update: 2147483647 is 422, 2147483648 is 400, the stored object unchanged', async () => {
    const tb = await createTestbed({ seed: 322 });
    try {
      for (const m of loadManifestPath(join(FIXTURES, 'worker-cluster'))) await applyObject(tb.env.mgmt, m.obj, m.obj.metadata.namespace);
      const ref = { kind: 'MachineDeployment', namespace: 'cpaas-system', name: 'demo-md-0' };
      const rv = tb.env.mgmt.getSync(ref)!.metadata.resourceVersion;
      await expect(tb.env.mgmt.patch(ref, 'merge', { spec: { replicas: 2147483647 } })).rejects.toMatchObject({ code: 422, causes: [{ field: 'spec.replicas' }] });
      await expect(tb.env.mgmt.patch(ref, 'merge', { spec: { replicas: 2147483648 } })).rejects.toMatchObject({ code: 400 });
      expect(tb.env.mgmt.getSync(ref)!.metadata.resourceVersion).toBe(rv);
    } finally {
      await tb.close();
    }
  }, 60_000);
});

describe('a backlog of Machines is paced, not done at one instant', () => {
  it(`a MachineDeployment scaled from 3 to ${MACHINESET_BURST + 100}: one burst now, the rest ${MACHINESET_BURST_PACE_MS / 1000} s of virtual time later`, async () => {
    const tb = await createTestbed({ seed: 323 });
    try {
      for (const m of loadManifestPath(join(FIXTURES, 'worker-cluster'))) await applyObject(tb.env.mgmt, m.obj, m.obj.metadata.namespace);
      const machines = (): number => tb.env.mgmt.listSync<Machine>('Machine', { namespace: 'cpaas-system' }).length;
      expect((await tb.sim.runUntil(async () => machines() === 3, 60_000)).ok).toBe(true);
      await tb.env.mgmt.patch({ kind: 'MachineDeployment', namespace: 'cpaas-system', name: 'demo-md-0' }, 'merge', { spec: { replicas: MACHINESET_BURST + 100 } });
      await tb.sim.settle();
      expect(machines()).toBe(3 + MACHINESET_BURST);
      await tb.sim.advance(MACHINESET_BURST_PACE_MS - 1_000);
      expect(machines()).toBe(3 + MACHINESET_BURST);
      await tb.sim.advance(1_000);
      expect(machines()).toBe(MACHINESET_BURST + 100);
    } finally {
      await tb.close();
    }
  }, 120_000);
});

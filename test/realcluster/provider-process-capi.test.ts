/**
 * `hcs-testbed run --capi external` on the apiserver backend (issue 16): the
 * run starts no Cluster API; here the testbed's TypeScript Cluster API
 * controllers, started by the test outside the run's controller manager
 * (their own client of the apiserver, their own work queue in live mode, not
 * driven by the run's simulation), stand in for a cluster's own Cluster API
 * (kind after `clusterctl init`). The scenario passes with the same step
 * verdicts as on the embedded backend; without that outside Cluster API
 * nothing reconciles Machines and the first wait times out, which proves
 * the run itself started none.
 */
import { describe, expect, it } from 'vitest';
import { setupCapiControllers } from '../../src/world/capi/index.js';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import { EventRecorder, type ControllerContext } from '../../src/core/runtime/context.js';
import { Manager } from '../../src/core/runtime/manager.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult, type TestbedHandle } from '../../src/harness/scenario/runner.js';
import { openBackend } from '../../src/harness/realcluster/backends.js';
import type { RemoteTestbed } from '../../src/harness/realcluster/remote.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/testbed.js';
import { skipReason, suiteSuffix } from './env.js';

function verdicts(r: ScenarioResult): string[] {
  return r.steps.map((s) => `${s.index} ${s.ok ? 'ok' : 'FAIL'} ${s.title}`);
}

describe.skipIf(!!skipReason)(`hcs-testbed run --capi external (apiserver backend, the Cluster API outside the run)${suiteSuffix}`, () => {
  it('scale-out-workers passes with an outside Cluster API, and no Machine moves without one', async () => {
    const backend = await openBackend({ backend: 'apiserver', capi: 'external', speed: 20 });
    try {
      expect(backend.description).toContain('Cluster API: external (none started here)');
      const s = loadScenario('scenarios/scale-out-workers.yaml');
      let outside = 0;
      const withOutsideCapi = async (seed: number): Promise<TestbedHandle> => {
        const tb = (await backend.factory(seed)) as RemoteTestbed;
        // The run registered no Cluster API controller.
        expect(tb.env.manager.controllerNames().filter((n) => n.startsWith('capi-'))).toEqual([]);
        const mgmt = new ClientNodeKube(tb.env.mgmt.kc, { clock: tb.env.clock, cacheReads: true });
        const manager = new Manager({ clock: tb.env.clock, events: tb.env.events });
        const ctx: ControllerContext = { clock: tb.env.clock, rng: tb.env.rng.fork('outside-capi'), events: tb.env.events, mgmt, workloads: tb.env.workloads, manager, logs: tb.env.logs, recorder: new EventRecorder(mgmt, tb.env.events, tb.env.clock) };
        setupCapiControllers(ctx);
        outside = manager.controllerNames().length;
        const abort = new AbortController();
        const loop = manager.run(abort.signal);
        const close = tb.close;
        tb.close = async () => {
          abort.abort();
          await loop;
          mgmt.close();
          await close();
        };
        return tb;
      };
      const embedded = await runScenario(s, embeddedTestbedFactory());
      const r = await runScenario(s, withOutsideCapi);
      const failed = r.steps.filter((x) => !x.ok).map((x) => `${x.index} ${x.title}: ${x.error}\n${x.detail.join('\n')}`);
      expect(failed, failed.join('\n\n')).toEqual([]);
      expect(outside).toBeGreaterThan(4);
      expect(verdicts(r)).toEqual(verdicts(embedded));

      // Without the outside Cluster API the run reconciles no Machine: the first wait times out.
      const short = { ...s, steps: s.steps.slice(0, 2).map((st) => (st.kind === 'wait' ? { ...st, timeoutMs: 120_000 } : st)) };
      const none = await runScenario(short, backend.factory);
      expect(none.ok).toBe(false);
      expect(none.steps[1]?.error).toMatch(/timed out after 120s of virtual time: machines: 0 machines Running/);
    } finally {
      await backend.close();
    }
  }, 600_000);
});

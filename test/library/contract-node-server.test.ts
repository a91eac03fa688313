/**
 * Negative tests of the Node/server invariant (src/harness/scenario/node-server.ts, issue 37): the cloud node
 * lifecycle controller's treatment of a stopped server's Node, and of a deleted server's Node. Each bug is planted in
 * this test's testbed only (the hypervisor view the controller is set up with) and fails a library scenario on HCS-1.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const TIMEOUT = 180_000;

const planted = vi.hoisted(() => ({ lifecycle: undefined as undefined | 'active-only' | 'never-deletes' }));

vi.mock('../../src/world/workload/node-lifecycle.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/workload/node-lifecycle.js')>();
  return {
    ...real,
    setupNodeLifecycle: (...a: Parameters<typeof real.setupNodeLifecycle>) => {
      const [ctx, hv, keys] = a;
      if (planted.lifecycle === 'never-deletes') return;
      // The bug: only ACTIVE servers count as existing, so a stopped server's NotReady Node is deleted.
      const view =
        planted.lifecycle === 'active-only'
          ? new Proxy(hv, {
              get: (t, p) =>
                p === 'listServers'
                  ? () => t.listServers().filter((s) => s.status === 'ACTIVE')
                  : p === 'listServerMetadata'
                    ? () => t.listServerMetadata().filter((s) => s.status === 'ACTIVE')
                    : (t as unknown as Record<string | symbol, unknown>)[p],
            })
          : hv;
      real.setupNodeLifecycle(ctx, view, keys);
    },
  };
});

async function run(file: string): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), file);
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
}

function violates(r: ScenarioResult, why: RegExp): void {
  expect(r.ok, 'the planted bug must fail the scenario').toBe(false);
  expect(r.violations.some((x) => x.rule === 'HCS-1' && why.test(x.message)), `an HCS-1 violation matching ${why} (got: ${r.violations.map((x) => `${x.rule}: ${x.message}`).join(' | ') || 'none'}; failed step: ${r.steps.find((s) => !s.ok)?.error})`).toBe(true);
}

describe('a Node compared with its server (issue 37)', () => {
  it('HCS-1: a lifecycle controller that deletes the Node of a stopped (SHUTOFF) server fails unhealthy-rollout', { timeout: TIMEOUT }, async () => {
    planted.lifecycle = 'active-only';
    try {
      violates(await run('unhealthy-rollout.yaml'), /^Node demo-worker-1 of cpaas-system\/demo was deleted while its server [0-9a-f-]+ is SHUTOFF and its Machine demo-md-0-\S+ lives: a stopped server's Node is kept/);
    } finally {
      planted.lifecycle = undefined;
    }
  });

  it('HCS-1: no lifecycle controller: the Node of a deleted worker (no control plane Machine, so Cluster API keeps it) lingers and fails scale-out-workers', { timeout: TIMEOUT }, async () => {
    planted.lifecycle = 'never-deletes';
    try {
      violates(await run('scale-out-workers.yaml'), /^Node demo-worker-\d of cpaas-system\/demo is NotReady and its server [0-9a-f-]+ is gone for \d+s, but the Node still exists/);
    } finally {
      planted.lifecycle = undefined;
    }
  });
});

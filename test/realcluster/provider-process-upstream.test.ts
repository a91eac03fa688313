/**
 * The standalone provider process on upstream Cluster API through the CLI
 * (issue 16 "must show"): `hcs-testbed run --backend apiserver --capi
 * upstream --provider external --provider-health URL --provider-log FILE`
 * with `hcs-testbed provider` started from the run's provider.env as a
 * separate OS process; the run waits for the provider's /readyz before the
 * first scenario, scale-out-workers passes every step as on the model, and
 * SIGTERM stops the provider with exit 0.
 *
 * The whole subset (scale-out-workers, the worker upgrades, maxsurge-disk-reuse,
 * control-plane-upgrade, ...) runs with the provider as a separate process in
 * test/upstream/scenarios.test.ts, compared with the model (verdicts and
 * per-hostname replacement sequences); what only this file shows is the CLI
 * path (flags, --provider-health, the console report), on one short scenario.
 *
 * The upstream managers' webhook servers bind every interface, so this runs
 * only in an lo-only network namespace: `npm run test:upstream` (root,
 * unshare -n); elsewhere it is skipped, saying why.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/testbed.js';
import { upstreamProblem } from '../../src/harness/realcluster/upstream/upstream.js';
import { startProviderChild } from '../upstream/provider-child.js';

const skip = upstreamProblem();
const SCENARIOS = ['scenarios/scale-out-workers.yaml'];
const SPEED = process.env.HCS_TESTBED_UPSTREAM_SPEED ?? '20';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.skipIf(!!skip)(`hcs-testbed provider as the provider of a run on upstream Cluster API v1.10.10${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  it('run --provider external --provider-health: scale-out-workers passes every step, as on the model; the provider stops on SIGTERM with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs-provider-upstream-'));
    const logFile = join(dir, 'provider.log');
    const port = await freePort();
    let out = '';
    const t0 = Date.now();
    const run = main(['run', ...SCENARIOS, '--backend', 'apiserver', '--capi', 'upstream', '--provider', 'external', '--speed', SPEED, '--provider-log', logFile, '--external-dir', join(dir, 'ext'), '--provider-health', `http://127.0.0.1:${port}/readyz`, '--no-color'], (s) => (out += s));
    // The provider, once the run has written what it needs.
    const envFile = join(dir, 'ext', 'provider.env');
    const deadline = Date.now() + 180_000;
    while (!existsSync(envFile)) {
      if (Date.now() > deadline) throw new Error(`no ${envFile} after 180 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const provider = await startProviderChild({ envFile, logFile, speed: SPEED, healthAddr: `127.0.0.1:${port}`, waitReady: false });
    let code: number;
    try {
      code = await run;
    } finally {
      const stopped = await provider.stop();
      expect({ code: stopped.code, signal: stopped.signal, killed: stopped.killed }, provider.stderr()).toEqual({ code: 0, signal: null, killed: false });
    }
    console.log(`${out.split('\n').filter((l) => /PASS|FAIL|passed/.test(l)).join('\n')}\nrun --capi upstream --provider external (speed ${SPEED}), with the managers' start: ${((Date.now() - t0) / 1000).toFixed(1)} s wall`);
    expect(code, out).toBe(0);
    expect(out).toContain('Cluster API: upstream v1.10.10 managers');
    expect(out).toContain('provider: external');
    for (const f of SCENARIOS) {
      const s = loadScenario(f);
      const model = await runScenario(s, embeddedTestbedFactory());
      expect(model.ok).toBe(true);
      expect(out).toContain(`PASS ${s.name}: ${model.steps.length}/${model.steps.length} steps passed`);
    }
  }, 900_000);
});

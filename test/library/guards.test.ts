/**
 * Two guards back each other up against a second server for one HCSMachine after a create whose answer was lost
 * (src/product/provider/server-build.ts and hcsmachine.ts findServer): the X-Client-Token derived from the
 * HCSMachine uid, and the lookup of the server by name. On a cloud as kind as the old mock-hcs (a created server is
 * listed at once, client tokens remembered for a day) either alone suffices, so removing one was an "equivalent"
 * mutant. With issue 37's adversarial options each is shown necessary on its own:
 * - lists lag behind writes (fault `listLag`, scenarios/lost-create.yaml): the name lookup cannot see the first
 *   server when the provider retries, so without the client token the retry is a second create — refused for the
 *   pool entry's taken IP (NET-7), a false IPAddressInUse alarm;
 * - the cloud forgets a client token after its job's retention (CloudConfig.jobs.retentionMs, here one minute)
 *   while the provider is down: after the restart only the name lookup finds the server, and without it the
 *   provider creates again, refused for the taken IP, and the machine never comes up.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { HcsClient } from '../../src/product/cloud/index.js';
import { defaultCloudConfig } from '../../mock-hcs/src/config.js';
import { HCSMachineController } from '../../src/product/provider/hcsmachine.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type TestbedOptions } from '../../src/harness/testbed/index.js';

const TIMEOUT = 180_000;

const planted = vi.hoisted(() => ({ throttleIsTerminal: false }));

vi.mock('../../src/product/provider/cloud-api.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/product/provider/cloud-api.js')>();
  // The bug the throttling flow found: only 5xx is retried, a 429 is a refusal (a throttled ListFlavors a wrong zone).
  return { ...real, isTransientCloudError: (ce: Parameters<typeof real.isTransientCloudError>[0]) => (planted.throttleIsTerminal ? ce.status >= 500 : real.isTransientCloudError(ce)) };
});

/** The bug: CreateServers without the X-Client-Token (the cloud cannot tell a retry from a new create). */
function withoutClientToken<T>(fn: () => Promise<T>): Promise<T> {
  const proto = HcsClient.prototype as unknown as { createServers(body: unknown, token?: string): Promise<unknown> };
  const real = proto.createServers;
  proto.createServers = function (this: unknown, body) {
    return real.call(this, body, undefined);
  };
  return fn().finally(() => {
    proto.createServers = real;
  });
}

/** The bug: the server is never looked up by name (a machine without spec.serverId always creates). */
function withoutNameLookup<T>(fn: () => Promise<T>): Promise<T> {
  const proto = HCSMachineController.prototype as unknown as { findServer(run: { hm: { spec: { serverId?: string } } }): Promise<unknown> };
  const real = proto.findServer;
  proto.findServer = async function (this: unknown, run) {
    return run.hm.spec.serverId ? real.call(this, run) : undefined;
  };
  return fn().finally(() => {
    proto.findServer = real;
  });
}

async function runFile(file: string, opts: Omit<TestbedOptions, 'seed'> = {}): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), file);
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory(opts));
}

/** A create whose answer is lost, then the provider down for 5 minutes: the cloud's one-minute token window passes. */
const RESTART = `name: lost-create-restart
seed: 5252
steps:
  - fault: {service: ecs, operation: createServers, effect: {type: partial}, count: 1}
  - apply: library:worker-cluster
  - crash: {controllers: [provider], downFor: 5m}
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 3}
      - nodes: {cluster: demo, ready: true, count: 3}
    timeout: 30m
  - expect:
      - servers: {count: 3}
      - persistentDisks: {pool: demo-worker-pool}
`;
const shortTokens = (): TestbedOptions['cloudConfig'] => ({ ...defaultCloudConfig(), jobs: { retentionMs: 60_000 } });

function runRestart(): Promise<ScenarioResult> {
  return runScenario(loadScenario(join(resolve('scenarios'), 'lost-create-restart.yaml'), RESTART), embeddedTestbedFactory({ cloudConfig: shortTokens() }));
}

describe('the client token and the name lookup are each necessary (issue 37)', () => {
  it('with lists lagging behind writes, a provider without the client token fails lost-create; with it, it passes', { timeout: TIMEOUT }, async () => {
    expect((await runFile('lost-create.yaml')).ok).toBe(true);
    const r = await withoutClientToken(() => runFile('lost-create.yaml'));
    expect(r.ok).toBe(false);
    const f = r.steps.find((s) => !s.ok)!;
    expect(f.title).toBe('one server per machine, and the lost answer cost no refused duplicate');
    expect(f.error).toMatch(/events: [1-9]\d* matching events \(expected 0\); first: #\d+ .*IPAddressInUse/);
  });

  it('with the cloud forgetting client tokens while the provider is down, a provider without the name lookup fails; with it, it passes', { timeout: TIMEOUT }, async () => {
    const clean = await runRestart();
    expect(clean.steps.filter((s) => !s.ok).map((s) => `${s.title}: ${s.error}`)).toEqual([]);
    const r = await withoutNameLookup(runRestart);
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)!.error).toMatch(/timed out after 1800s of virtual time: machines: [0-2] machines Running \(expected 3\)/);
  });

  it('HCS-6: a provider that takes a throttled call (429 APIGW.0308) for a refusal fails lost-create while throttled', { timeout: TIMEOUT }, async () => {
    planted.throttleIsTerminal = true;
    try {
      const r = await runFile('lost-create.yaml');
      expect(r.ok).toBe(false);
      expect(r.steps.find((s) => !s.ok)!.error).toMatch(/timed out after 3600s of virtual time: machines: 3 machines Running \(expected 4\)/);
    } finally {
      planted.throttleIsTerminal = false;
    }
  });

  it('HCS-5: with IAM tokens expiring every 10 minutes, a provider on tokens re-authenticates on 401 and passes pause-and-disk-edits; one that keeps its first token fails', { timeout: TIMEOUT }, async () => {
    const cloudConfig = { ...defaultCloudConfig(), tokenTtlMs: 10 * 60_000 };
    const ok = await runFile('pause-and-disk-edits.yaml', { cloudConfig, providerToken: { reauthenticate: true } });
    expect(ok.steps.filter((s) => !s.ok).map((s) => `${s.title}: ${s.error}`)).toEqual([]);
    expect(ok.events.filter((e) => e.source === 'cloud' && e.type === 'auth.rejected').length, 'tokens expired during the run').toBeGreaterThan(0);
    const r = await runFile('pause-and-disk-edits.yaml', { cloudConfig, providerToken: { reauthenticate: false } });
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)!.error).toMatch(/timed out after \d+s of virtual time/);
    expect(r.events.some((e) => e.source === 'provider' && /CloudAuthenticationFailed/.test(e.message))).toBe(true);
  });
});

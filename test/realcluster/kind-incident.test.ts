/**
 * A realistic incident (issue 35, "Must show"): the kind cluster with the upstream Cluster API v1.10.10 managers and
 * the HCS provider as Deployments, against a served mock-hcs, broken mid-rollout the way people break one:
 *
 *   1. a MachineDeployment switched to a new template with maxSurge 1 on a full pool (`kubectl patch`): the surge
 *      Machine waits for a free entry (MD-3, POOL-2);
 *   2. a finalizer removed by hand and the HCSMachine deleted (`kubectl patch … finalizers: null`, `kubectl delete`):
 *      its server lives on, its entry stays bound to a machine that is gone (POOL-4, HCS-1);
 *   3. a persistent volume detached by hand (ECS DetachServerVolume, signed with the project's AK/SK, as the
 *      console does): a Running machine's data disk is `available` (DISK-8).
 *
 * Then, with only what an operator has (the kubeconfig, the cloud endpoint and keys from the provider's own Secret,
 * `kubectl logs` of the provider), through the CLI as a child process:
 *   - `hcs-testbed doctor --kubeconfig … --cloud-url …` (live, read-only) names each problem with its rule, and was
 *     clean on the healthy cluster before;
 *   - `hcs-testbed capture … --provider-log … --scenario …` writes the bundle, and `doctor BUNDLE` agrees;
 *   - the live rollout continues for CONTINUE of virtual time (the upstream managers and the in-cluster provider);
 *     the bundle is replayed embedded (the testbed's Cluster API and provider) for the same time; the outcome —
 *     machines per deployment, template, hostname and phase; servers per hostname; persistent volumes per
 *     (hostname, slot) with where they are attached; the doctor's rules — is the same on both.
 *
 * Only with HCS_TESTBED_KIND=1 where Docker, kind, the node image and the tools/capi managers are there
 * (tools/kind/ci-step.sh runs it on its in-cluster cluster, HCS_TESTBED_KIND_CLUSTER); every wait is bounded.
 * Every child process is spawned asynchronously: the admission webhook and the cloud endpoint the kind cluster
 * calls are served by this process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindManagersSkipReason } from './kind-env.js';
import { kindMain, resolveTool } from '../../src/harness/cli/kind.js';
import { kindGateway } from '../../src/harness/realcluster/kind/install.js';
import { spawnRunner } from '../../src/harness/realcluster/kind/runner.js';
import { openBackend, type OpenBackend } from '../../src/harness/realcluster/backends.js';
import { PROVIDER_CA_CONFIGMAP, PROVIDER_CONFIG_SECRET } from '../../src/harness/realcluster/kind/provider-incluster.js';
import { parseBundle, type Bundle } from '../../src/harness/capture/bundle.js';
import { captureTestbed } from '../../src/harness/capture/testbed-capture.js';
import { createReplayTestbed } from '../../src/harness/capture/replay.js';
import { bundleState } from '../../src/harness/capture/state.js';
import { doctor } from '../../src/harness/capture/doctor.js';
import { HcsClient } from '../../src/product/cloud/index.js';
import { cloudTransport } from '../../src/product/provider/process.js';
import { RealClock } from '../../src/core/clock.js';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import type { Machine } from '../../src/product/api/capi.js';
import { META_HOSTNAME, META_PERSISTENT } from '../../src/product/api/metadata.js';
import type { TestbedHandle } from '../../src/harness/scenario/runner.js';
import { incidentOutcome } from '../capture/outcome.js';
import { runToOn, workersUp } from '../capture/support.js';

const SPEED = Number(process.env.HCS_TESTBED_KIND_SPEED ?? 20);
/** Virtual time the rollout continues after the capture, live and in the replay. */
const CONTINUE_MS = 10 * 60_000;
const NS = 'cpaas-system';

const skip = kindManagersSkipReason();


interface Ran {
  code: number | null;
  out: string;
}

/** A child process, asynchronously (this process serves the webhook and the cloud the cluster calls), bounded. */
function run(cmd: string, args: string[], o: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      done({ code: null, out: `${out}\n${e.message}` });
    });
  });
}

const rulesIn = (json: string): string[] => [...new Set((JSON.parse(json) as { findings: { rule: string }[] }).findings.map((f) => f.rule))].sort();

describe.skipIf(!!skip)(`a real incident on kind (upstream managers, in-cluster provider): doctor, capture, replay${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  const given = process.env.HCS_TESTBED_KIND_CLUSTER;
  const name = given || `hcs-incident-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'hcs-kind-incident-'));
  const kubeconfig = resolve(join(dir, 'kubeconfig'));
  const kubectl = resolveTool('kubectl');
  const k = (args: string[], timeoutMs = 60_000) => run(kubectl, ['--kubeconfig', kubeconfig, ...args], { timeoutMs });
  const cli = (args: string[], env: NodeJS.ProcessEnv, timeoutMs = 300_000) => run(process.execPath, ['bin/hcs-testbed.mjs', ...args], { env: { ...process.env, ...env }, timeoutMs });
  let backend: OpenBackend | undefined;
  let tb: TestbedHandle | undefined;
  const report: string[] = [];
  /** What an operator knows: the endpoint, project and keys (from the provider's Secret), the CA. */
  let cloudEnv: NodeJS.ProcessEnv = {};
  let cloudFlags: string[] = [];

  beforeAll(async () => {
    let out = '';
    const code = await kindMain(['up', '--name', name, '--kubeconfig', kubeconfig, '--managers', 'in-cluster', '--speed', String(SPEED)], (s) => (out += s));
    expect(code, out).toBe(0);
    const gw = kindGateway(spawnRunner);
    if (typeof gw !== 'string') throw new Error(gw.error);
    backend = await openBackend({ backend: 'kubeconfig', kubeconfig, webhookHost: gw, capi: 'external', provider: 'in-cluster', speed: SPEED, providerLog: join(dir, 'provider-mirror.log'), providerWaitMs: 300_000 });
  }, 1_500_000);

  afterAll(async () => {
    await tb?.close();
    await backend?.close();
    process.stdout.write(`kind incident (speed ${SPEED}):\n${report.map((t) => `  ${t}`).join('\n')}\n`);
    if (given) return;
    const down = spawnRunner(resolveTool('kind'), ['delete', 'cluster', '--name', name], { timeoutMs: 240_000 });
    expect(down.status, down.stderr).toBe(0);
  }, 300_000);

  it('the healthy cluster: doctor (live, through the kubeconfig and the cloud API) is clean', async () => {
    const up = await runToOn(workersUp('incident-setup', 11, { markers: true, description: 'three workers with data on their persistent disks (the cluster before the incident)' }), 3, backend!.factory);
    tb = up.tb;
    expect(up.result.ok, up.result.steps.map((s) => `${s.index} ${s.title}: ${s.error ?? 'ok'}`).join('\n')).toBe(true);
    // The operator's view of the cloud: the provider's own configuration.
    const secret = await k(['get', 'secret', PROVIDER_CONFIG_SECRET, '-n', NS, '-o', 'json']);
    expect(secret.code, secret.out).toBe(0);
    const data = (JSON.parse(secret.out) as { data: Record<string, string> }).data;
    const v = (key: string) => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
    const ca = await k(['get', 'configmap', PROVIDER_CA_CONFIGMAP, '-n', NS, '-o', 'jsonpath={.data.ca\\.crt}']);
    writeFileSync(join(dir, 'cloud-ca.pem'), ca.out);
    cloudEnv = { HCS_AK: v('HCS_AK'), HCS_SK: v('HCS_SK') };
    cloudFlags = ['--kubeconfig', kubeconfig, '--cloud-url', v('HCS_CLOUD_URL'), '--project', v('HCS_PROJECT_ID'), '--ca-file', join(dir, 'cloud-ca.pem')];
    const d = await cli(['doctor', ...cloudFlags], cloudEnv);
    report.push(`doctor on the healthy cluster: exit ${d.code}\n${d.out.trimEnd()}`);
    expect(d.code, d.out).toBe(0);
  }, 1_200_000);

  it('broken mid-rollout by hand: doctor (live) names each problem with its rule as it arises; capture; doctor on the bundle agrees', async () => {
    expect(tb, 'the cluster came up').toBeDefined();
    const t = tb!;
    const doctorLive = async (what: string): Promise<string[]> => {
      const out = join(dir, `doctor-${report.length}.json`);
      const r = await cli(['doctor', ...cloudFlags, '--format', 'json', '--out', out], cloudEnv);
      const text = await cli(['doctor', ...cloudFlags], cloudEnv);
      report.push(`doctor (live) ${what}: exit ${r.code}\n${text.out.trimEnd()}`);
      expect(r.code, r.out).toBe(1);
      return rulesIn(readFileSync(out, 'utf8'));
    };
    // 1. The upgrade started with maxSurge 1 on a full pool: a new template, the MachineDeployment patched to it.
    let r = await k(['apply', '-f', 'scenarios/manifests/upgrade/worker-template-v2.yaml']);
    expect(r.code, r.out).toBe(0);
    r = await k(['patch', 'machinedeployment', 'demo-md-0', '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }, template: { spec: { infrastructureRef: { name: 'demo-worker-template-v2' } } } } })]);
    expect(r.code, r.out).toBe(0);
    const workers = async () => (await t.world.mgmt.list<Machine>('Machine', { namespace: NS })).filter((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === 'demo-md-0');
    const surged = await t.sim.runUntil(async () => (await workers()).length === 4, 20 * 60_000);
    expect(surged.ok, `a surge Machine: ${(await workers()).map((m) => m.metadata.name).join(', ')}`).toBe(true);
    await t.sim.advance(2 * 60_000);
    const first = await doctorLive('after the rollout started with maxSurge 1 on the full pool');
    expect(first).toEqual(['MD-3', 'POOL-2']);

    // 2. demo-worker-2's persistent volume detached by hand: ECS DetachServerVolume, signed with the project's keys.
    const hms = await t.world.mgmt.list<HCSMachine>('HCSMachine', { namespace: NS });
    const pd = (host: string) => t.world.cloud.listVolumes().find((x) => x.metadata[META_HOSTNAME] === host && x.metadata[META_PERSISTENT] === 'true')!;
    const volumeStatus = (id: string) => t.world.cloud.listVolumes().find((x) => x.id === id)?.status;
    const hm2 = hms.find((m) => m.status?.hostname === 'demo-worker-2')!;
    const vol2 = pd('demo-worker-2');
    const flags = Object.fromEntries(cloudFlags.flatMap((f, i) => (f.startsWith('--') ? [[f.slice(2), cloudFlags[i + 1]!]] : [])));
    const operator = new HcsClient({ transport: cloudTransport(flags['cloud-url']!, readFileSync(flags['ca-file']!, 'utf8')), ak: cloudEnv.HCS_AK!, sk: cloudEnv.HCS_SK!, projectId: flags.project!, clock: new RealClock() });
    await operator.detachVolume(hm2.spec.serverId!, vol2.id);
    const detached = await t.sim.runUntil(() => volumeStatus(vol2.id) === 'available', 10 * 60_000);
    expect(detached.ok, `volume ${vol2.id} detached`).toBe(true);

    // 3. To free an entry, demo-worker-3's HCSMachine deleted; the cloud's detach job of its disk hangs (HCS-6, a
    //    stuck job), so the deletion waits (DISK-9); the finalizer is removed by hand. Its server lives on.
    const hm3 = hms.find((m) => m.status?.hostname === 'demo-worker-3')!;
    const vol3 = pd('demo-worker-3');
    t.world.faults.add({ service: 'ecs', operation: 'detachVolume', match: { id: vol3.id }, effect: { type: 'stuck' }, description: 'the detach job of demo-worker-3\'s disk hangs' });
    r = await k(['delete', 'hcsmachine', hm3.metadata.name, '-n', NS, '--wait=false']);
    expect(r.code, r.out).toBe(0);
    const stuck = await t.sim.runUntil(() => volumeStatus(vol3.id) === 'detaching', 10 * 60_000);
    expect(stuck.ok, `the provider asked to detach ${vol3.id} (${volumeStatus(vol3.id)})`).toBe(true);
    await t.sim.advance(60_000);
    r = await k(['patch', 'hcsmachine', hm3.metadata.name, '-n', NS, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    expect(r.code, r.out).toBe(0);
    const gone = await t.sim.runUntil(async () => !(await t.world.mgmt.get({ kind: 'HCSMachine', namespace: NS, name: hm3.metadata.name })), 5 * 60_000);
    expect(gone.ok, 'the HCSMachine is gone').toBe(true);
    await t.sim.advance(60_000);
    expect(t.world.cloud.server(hm3.spec.serverId!)?.status, 'its server lives on').toBe('ACTIVE');

    // doctor, live: each problem with its rule.
    const second = await doctorLive('after the disk detached and the finalizer removed by hand');
    expect(second).toEqual(expect.arrayContaining(['DISK-8', 'HCS-1', 'MD-3', 'POOL-4']));
    const text = report[report.length - 1]!;
    expect(text).toMatch(/✗ DISK-8: .*machine \S+ serves hostname demo-worker-2 .* its slot 0 volume \S+ \(\w+\) is available, not attached to it/);
    expect(text).toMatch(new RegExp(`✗ POOL-4: .*was built for HCSMachine ${hm3.metadata.name} .*which is gone while the server still exists`));
    expect(text).toMatch(new RegExp(`✗ HCS-1: .*\\(${hm3.spec.serverId}\\) is not owned by any HCSMachine`));

    // capture, as the incident page says; the provider's log from the Deployment.
    const log = await k(['logs', '-n', NS, 'deployment/hcs-controller-manager', '--since=2h'], 120_000);
    expect(log.code, log.out.slice(0, 2000)).toBe(0);
    writeFileSync(join(dir, 'provider.log'), log.out);
    const bundleFile = join(dir, 'incident.bundle.json');
    const cap = await cli(['capture', ...cloudFlags, '--namespace', NS, '--provider-log', join(dir, 'provider.log'), '--out', bundleFile, '--scenario', join(dir, 'incident.yaml')], cloudEnv);
    report.push(`capture: ${cap.out.trimEnd()}`);
    expect(cap.code, cap.out).toBe(0);
    const bundleText = readFileSync(bundleFile, 'utf8');
    expect(bundleText).not.toContain(cloudEnv.HCS_SK!);
    expect(bundleText).not.toContain(cloudEnv.HCS_AK!);
    const offline = await cli(['doctor', bundleFile, '--format', 'json', '--out', join(dir, 'bundle.json')], {});
    expect(offline.code, offline.out).toBe(1);
    expect(rulesIn(readFileSync(join(dir, 'bundle.json'), 'utf8'))).toEqual(second);
    // The hung job goes through at last (the cloud's side of the incident; a bundle cannot hold a fault, and its
    // replay ends a transition in flight after the cloud's own duration).
    t.world.faults.releaseStuck();
    t.world.faults.clear();
  }, 1_200_000);

  it('the rollout continued live and in the embedded replay of the bundle: the same outcome', async () => {
    const t = tb!;
    const bundle = parseBundle(readFileSync(join(dir, 'incident.bundle.json'), 'utf8'));
    // Live: the upstream managers and the in-cluster provider go on for CONTINUE_MS of virtual time. The replay's
    // controllers start afresh over the bundle, as after a restart; so does the live provider here (`kubectl rollout
    // restart`, what one does after fixing things by hand). Without it the outcomes differ where a running provider
    // has no reason to look again: demo-worker-2's disk, detached by hand from a Ready machine, stays detached until
    // something touches that HCSMachine, while a provider that starts reconciles every object and attaches it again
    // (docs/incident.md, "What the replay is").
    const t0 = Date.now();
    let r = await k(['rollout', 'restart', 'deployment/hcs-controller-manager', '-n', NS]);
    expect(r.code, r.out).toBe(0);
    r = await k(['rollout', 'status', 'deployment/hcs-controller-manager', '-n', NS, '--timeout=240s'], 300_000);
    expect(r.code, r.out).toBe(0);
    report.push(`kubectl rollout restart deployment/hcs-controller-manager: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await t.sim.advance(CONTINUE_MS);
    const afterLive = await cli(['capture', ...cloudFlags, '--namespace', NS, '--out', join(dir, 'after-live.json')], cloudEnv);
    expect(afterLive.code, afterLive.out).toBe(0);
    const liveEnd = parseBundle(readFileSync(join(dir, 'after-live.json'), 'utf8'));
    report.push(`live: restarted and continued ${CONTINUE_MS / 60_000} min virtual in ${((Date.now() - t0) / 1000).toFixed(1)} s wall`);
    // Replay: the bundle on the embedded testbed (its Cluster API and provider), the same time.
    const replay = await createReplayTestbed(bundle, { seed: 11 });
    let replayEnd: Bundle;
    try {
      await replay.sim.advance(CONTINUE_MS);
      replayEnd = parseBundle(JSON.stringify(await captureTestbed(replay)));
    } finally {
      await replay.close();
    }
    const judge = async (b: Bundle) => [...new Set((await doctor(bundleState(b), { source: 'end', capturedAt: b.capturedAt })).findings.map((f) => f.rule))].sort();
    const live = { ...incidentOutcome(liveEnd), doctor: await judge(liveEnd) };
    const replayed = { ...incidentOutcome(replayEnd), doctor: await judge(replayEnd) };
    report.push(`outcome (live): ${JSON.stringify(live, null, 1)}`);
    // The incident is still there at the end (what is compared is not an empty, healed state): the surge machine
    // holds demo-worker-3's entry and waits while the old server, whose HCSMachine is gone, lives on.
    expect(live.machines).toContain('demo-md-0 demo-worker-template-v2 demo-worker-3 Provisioning');
    expect(live.doctor).toEqual(expect.arrayContaining(['HCS-1', 'POOL-4']));
    expect(replayed).toEqual(live);
  }, 1_200_000);
});

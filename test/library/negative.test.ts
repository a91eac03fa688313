/**
 * Companion negative tests of the scenario library: for each scenario, a
 * mutant of the system (through the TestbedOptions hooks) or of its input (a
 * copy of the scenario text or of one manifest with a wrong value) makes the
 * scenario fail, at the step where its checks are meant to catch the defect.
 * A scenario that still passed with the mutant would not be checking what it
 * claims.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory, type TestbedOptions } from '../../src/harness/testbed/index.js';
import { forgetfulClaimer, overriding } from './mutants.js';

const DIR = resolve('scenarios');

/** Run a library scenario (optionally with its text edited) against a (mutated) testbed. */
async function run(file: string, opts: Omit<TestbedOptions, 'seed'> = {}, edit?: (text: string) => string): Promise<ScenarioResult> {
  const path = join(DIR, file);
  const text = readFileSync(path, 'utf8');
  const edited = edit ? edit(text) : text;
  if (edit) expect(edited, 'the input mutation must change the scenario').not.toBe(text);
  return runScenario(loadScenario(path, edited), embeddedTestbedFactory(opts));
}

/** The scenario failed, at the step whose title contains `step`, with an error matching `why`. */
function failsAt(r: ScenarioResult, step: string, why: RegExp): void {
  const failed = r.steps.find((s) => !s.ok);
  expect(r.ok, 'the mutant must make the scenario fail').toBe(false);
  expect(failed, 'a step failed').toBeDefined();
  expect(failed!.inputError ?? false, `not an input error: ${failed!.error}`).toBe(false);
  expect(failed!.title).toContain(step);
  expect(failed!.error).toMatch(why);
}

/** A copy of one manifest with a replacement applied, in a temporary directory; returns its absolute path. */
function mutatedManifest(rel: string, from: string, to: string): string {
  const text = readFileSync(join(DIR, rel), 'utf8');
  expect(text).toContain(from);
  const dir = mkdtempSync(join(tmpdir(), 'hcs-negative-'));
  const out = join(dir, rel.split('/').pop()!);
  writeFileSync(out, text.replace(from, to));
  return out;
}


describe('negative: every library scenario fails against a mutant', () => {
  it('create-cluster: a control plane whose kubeadm configuration does not point the kubelet at the injected certificate never comes up (BOOT-3)', async () => {
    const kcp = mutatedManifest('manifests/cluster/04-kcp.yaml', '    initConfiguration:\n      patches:\n        directory: /etc/kubernetes/patches\n', '    initConfiguration:\n');
    const files = ['01-cluster.yaml', '02-cp-pool.yaml', '03-cp-template.yaml', kcp, '05-worker-pool.yaml', '06-worker-template.yaml', '07-worker-kct.yaml', '08-machinedeployment.yaml'];
    const list = files.map((f) => (f.startsWith('/') ? f : join(DIR, 'manifests/cluster', f)));
    const r = await run('create-cluster.yaml', {}, (t) => t.replace('    apply: manifests/cluster\n', `    apply: ${JSON.stringify(list)}\n`));
    failsAt(r, 'wait machines(cluster=demo phase=Running count=6)', /timed out/);
  });

  it('control-plane-upgrade: a KubeadmControlPlane that surges (maxSurge 1) instead of removing first (KCP-1)', async () => {
    const kcp = mutatedManifest('manifests/cluster/04-kcp.yaml', 'maxSurge: 0', 'maxSurge: 1');
    const list = ['01-cluster.yaml', '02-cp-pool.yaml', '03-cp-template.yaml', kcp, '05-worker-pool.yaml', '06-worker-template.yaml', '07-worker-kct.yaml', '08-machinedeployment.yaml'].map((f) => (f.startsWith('/') ? f : join(DIR, 'manifests/cluster', f)));
    const r = await run('control-plane-upgrade.yaml', {}, (t) => t.replace('  - apply: manifests/cluster\n', `  - apply: ${JSON.stringify(list)}\n`));
    failsAt(r, 'maxSurge 0', /7 machines \(expected 6\)/);
  });

  it('upgrade-order: the target image of the v4.1 row is missing from HCS (UPG-2 prerequisite)', async () => {
    const cfg = defaultCloudConfig();
    cfg.images = cfg.images.filter((i) => i.name !== 'alauda-os-v4.1-k8s-v1.31.6');
    const r = await run('upgrade-order.yaml', { cloudConfig: cfg });
    failsAt(r, 'workers first is the wrong order', /image alauda-os-v4\.1-k8s-v1\.31\.6 is not in HCS/);
  });

  it('worker-k8s-upgrade: a guest that does not compare the image version with the machine version joins anyway (BOOT-4)', async () => {
    const r = await run('worker-k8s-upgrade.yaml', {
      guest: (o) => ({
        ...o,
        hypervisor: overriding(o.hypervisor, {
          server: (id: string) => {
            const s = o.hypervisor.server(id);
            return s && { ...s, metadata: { ...s.metadata, 'hcs.io/image-kubernetes-version': s.metadata['hcs.io/kubernetes-version'] ?? '' } };
          },
        }),
      }),
    });
    failsAt(r, 'node cannot join', /guest\.join-failed|nodes/);
  });

  it('kube-ovn-upgrade: an AppRelease that reports Success without a health-checking period (OVN-4, OVN-6)', async () => {
    const r = await run('kube-ovn-upgrade.yaml', { appReleaseTimings: { healthCheckMs: 0 } });
    failsAt(r, 'HealthChecking', /HealthChecking|timed out|not done/);
  });

  it('kube-ovn-upgrade: a "done" check that trusts installedRevision alone is caught (OVN-6)', async () => {
    // The input mutant: the scenario claims "done" during HealthChecking.
    const r = await run('kube-ovn-upgrade.yaml', {}, (t) => t.replace('target: v4.2.4, done: false, trap: true}', 'target: v4.2.4, done: true}'));
    failsAt(r, 'HealthChecking', /not done/);
  });

  it('rollback: a provider that forgets the (hostname, slot) identity loses node-local state across the upgrade and rollback (RB-4)', async () => {
    const r = await run('rollback.yaml', { diskClaimer: forgetfulClaimer });
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => !s.ok)!;
    expect(failed.error).toMatch(/stranded data|persistentDisks|markers|identity not reused|missing on node/);
  });

  it('rollback: a rollback that does not restore the etcd tag leaves a mismatch (RB-5, KCP-3)', async () => {
    const r = await run('rollback.yaml', {}, (t) => t.replace('        spec.kubeadmConfigSpec.clusterConfiguration.etcd.local.imageTag: 3.5.15-0\n        spec.machineTemplate.infrastructureRef.name: demo-cp-template\n', '        spec.machineTemplate.infrastructureRef.name: demo-cp-template\n'));
    // The control plane invariant (control-plane-nodes.ts) sees it first when the rebuilt node's etcd static pod and the
    // ClusterConfiguration recorded on its Machine disagree; else the step that reads the mismatch does.
    const failed = r.steps.find((s) => !s.ok);
    if (failed?.error?.includes('KCP-3: etcd-demo-cp-')) expect(failed.error).toMatch(/KCP-3: etcd-demo-cp-\d runs image registry\.k8s\.io\/etcd:\S+, but the ClusterConfiguration KubeadmControlPlane recorded on Machine \S+ says etcd\.local\.imageTag 3\.5\.16-0/);
    else failsAt(r, 'new machines were built from the old template', /VersionMismatch.*KCP-3/);
  });

  it('maxsurge-disk-reuse: a provider blind to maxSurge (no MD-3 flagging) fails the scenario', async () => {
    const r = await run('maxsurge-disk-reuse.yaml', { surgeCheck: async () => undefined });
    failsAt(r, 'flagged MD-3', /MD-3|NoFreePoolEntry/);
  });

  it('persistent-disk-edits: a guest that formats every disk loses the data and formats twice too often (DISK-8)', async () => {
    const r = await run('persistent-disk-edits.yaml', {
      guest: (o) => ({
        ...o,
        hypervisor: overriding(o.hypervisor, {
          volume: (id: string) => {
            const v = o.hypervisor.volume(id);
            return v && v.metadata['hcs.io/persistent'] === 'true' ? { ...v, fs: { ...v.fs, fsType: '' } } : v;
          },
        }),
      }),
    });
    failsAt(r, 'after the replacement', /guest\.disk-formatted|markers/);
  });

  it('persistent-disk-edits: an apply that admission lets through is caught by the DISK-4 step (as if immutability were not enforced)', async () => {
    // Observably the same as an admission without the DISK-4 rule: the first "changing an accepted disk" apply is accepted.
    const r = await run('persistent-disk-edits.yaml', {}, (t) => t.replace('    apply: manifests/disk-edits/pool-size-changed.yaml\n', '    apply: manifests/worker-cluster/02-worker-pool.yaml\n'));
    failsAt(r, 'changing an accepted disk', /expected the apply to be rejected/);
  });

  it('network: an entry whose IP is free shows no conflict — the NET-7 check is not vacuous', async () => {
    // The 4th entry's IP (the last 192.168.10.11 of the file; the first is demo-worker-1's own) becomes a free one.
    const free = mutatedManifest('manifests/network/worker-pool-4-ip-in-use.yaml', '', '');
    const text = readFileSync(free, 'utf8');
    const at = text.lastIndexOf('192.168.10.11');
    writeFileSync(free, text.slice(0, at) + '192.168.10.44' + text.slice(at + '192.168.10.11'.length));
    const r = await run('network.yaml', {}, (t) => t.replace('apply: manifests/network/worker-pool-4-ip-in-use.yaml', `apply: ${free}`));
    failsAt(r, 'the cloud refuses the port', /IPAddressInUse|api\.rejected|servers/);
  });

  it('cloud-faults: with the flavor given as its API value nothing is reported — the TPL-2 check is not vacuous', async () => {
    const ok = mutatedManifest('manifests/cloud-faults/template-ui-flavor.yaml', 'flavorName: s6.large.2 General Computing', 'flavorName: s6.large.2');
    const r = await run('cloud-faults.yaml', {}, (t) => t.replace('      - manifests/cloud-faults/template-ui-flavor.yaml\n', `      - ${ok}\n`));
    failsAt(r, 'provisioning fails with the reason', /InvalidFlavor|Failed/);
  });

  it('cloud-faults: wrong credentials from the start (testbed option) — the cluster never comes up (HCS-5)', async () => {
    const r = await run('cloud-faults.yaml', { credentials: { ak: 'TESTBEDAK0000000000001', sk: 'wrong' } });
    failsAt(r, 'wait machines(deployment=demo-md-0 phase=Running count=3)', /timed out/);
    expect(r.events.some((e) => e.type === 'auth.rejected' && (e.rules ?? []).includes('HCS-5'))).toBe(true);
  });

  it('controller-crash: a provider that forgets disk identities creates duplicate volumes across the crashes', async () => {
    const r = await run('controller-crash.yaml', { diskClaimer: forgetfulClaimer });
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => !s.ok)!.error).toMatch(/volume\.created|persistentDisks|markers|identity/);
  });
});

/**
 * The scenario library against kind with the upstream Cluster API v1.10.10
 * managers and the HCS provider running in the cluster as Deployments
 * (issue 23): `hcs-testbed kind up --managers in-cluster` (images built
 * without a registry, manifests as `clusterctl init` lays them out,
 * certificates in cert-manager's place), then `run --backend kubeconfig
 * --capi external --provider in-cluster` (docs/real-clusters.md §4.3).
 *
 * Shows: the node Ready; `kubectl get deployments -A` with the three
 * managers and hcs-controller-manager Available; `kubectl logs -n
 * cpaas-system deployment/hcs-controller-manager` printing the provider's
 * decisions; each scenario with the model's verdict and the same
 * per-hostname replacement sequences (test/upstream/sequences.ts, as
 * test/upstream/scenarios.test.ts compares the managers run as processes).
 *
 * Only with HCS_TESTBED_KIND=1 where Docker, kind, the node image and the
 * tools/capi managers are there (tools/kind/ci-step.sh sets it); every wait
 * is bounded; the cluster is deleted in teardown.
 * HCS_TESTBED_KIND_SCENARIOS (comma-separated) picks the scenarios;
 * HCS_TESTBED_KIND_SPEED the speed (default 20); HCS_TESTBED_KIND_CLUSTER
 * names an existing kind cluster to install into and use (tools/kind/ci-step.sh
 * passes its own, which it deletes itself) instead of a new one.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindManagersSkipReason } from './kind-env.js';
import { kindMain, resolveTool, spawnRunner } from '../../src/harness/cli/kind.js';
import { kindGateway } from '../../src/harness/realcluster/kind/install.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { openBackend, type OpenBackend } from '../../src/harness/realcluster/backends.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import { readProviderLog } from '../../src/product/provider/process.js';
import { logDigest } from '../upstream/provider-child.js';
import { compareShapes, recordingStart, rolloutSequences, runShape } from '../upstream/sequences.js';

const SCENARIOS = (process.env.HCS_TESTBED_KIND_SCENARIOS ?? 'scale-out-workers,worker-infra-upgrade,worker-k8s-upgrade,maxsurge-disk-reuse,control-plane-upgrade,rollback').split(',').map((s) => s.trim()).filter(Boolean);
const SPEED = Number(process.env.HCS_TESTBED_KIND_SPEED ?? 20);

const skip = kindManagersSkipReason();

function verdict(r: ScenarioResult): { ok: boolean; steps: string[]; rules: string[] } {
  return { ok: r.ok, steps: r.steps.map((s) => `${s.index} ${s.title}: ${s.ok ? 'pass' : 'FAIL'}`), rules: r.rulesExercised };
}
function failures(r: ScenarioResult): string {
  return r.steps.filter((s) => !s.ok).map((s) => `step ${s.index} (${s.title}): ${s.error ?? ''}\n${s.detail.join('\n')}`).join('\n');
}

describe.skipIf(!!skip)(`the scenario library on kind with the Cluster API managers and hcs-controller-manager as Deployments${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  const given = process.env.HCS_TESTBED_KIND_CLUSTER;
  const name = given || `hcs-incluster-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'hcs-kind-incluster-'));
  const kubeconfig = resolve(join(dir, 'kubeconfig'));
  const providerLog = join(dir, 'provider.log');
  const kubectl = resolveTool('kubectl');
  const k = (args: string[], timeoutMs = 60_000) => spawnRunner(kubectl, ['--kubeconfig', kubeconfig, ...args], { timeoutMs });
  let backend: OpenBackend | undefined;
  const times: string[] = [];

  beforeAll(async () => {
    const t0 = Date.now();
    let out = '';
    const code = await kindMain(['up', '--name', name, '--kubeconfig', kubeconfig, '--managers', 'in-cluster', '--speed', String(SPEED)], (s) => (out += s));
    expect(code, out).toBe(0);
    times.push(`kind up --managers in-cluster: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const gw = kindGateway(spawnRunner);
    if (typeof gw !== 'string') throw new Error(gw.error);
    const t1 = Date.now();
    backend = await openBackend({ backend: 'kubeconfig', kubeconfig, webhookHost: gw, capi: 'external', provider: 'in-cluster', speed: SPEED, providerLog, providerWaitMs: 300_000 });
    times.push(`backend (CRDs, admission webhook, mock-hcs at the provider's endpoint): ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  }, 1_500_000);

  afterAll(async () => {
    await backend?.close();
    process.stdout.write(`kind, in-cluster managers and provider vs model (speed ${SPEED}):\n${times.map((t) => `  ${t}`).join('\n')}\n`);
    if (given) return; // the caller's cluster: the caller deletes it
    const down = spawnRunner(resolveTool('kind'), ['delete', 'cluster', '--name', name], { timeoutMs: 240_000 });
    expect(down.status, down.stderr).toBe(0);
  }, 300_000);

  it('the node is Ready; kubectl get deployments -A: the three Cluster API managers and hcs-controller-manager Available', () => {
    const ready = k(['wait', '--for=condition=Ready', 'node', '--all', '--timeout=120s'], 150_000);
    expect(ready.status, ready.stderr).toBe(0);
    const deps = k(['get', 'deployments', '-A', '-o', 'json']);
    expect(deps.status, deps.stderr).toBe(0);
    const items = (JSON.parse(deps.stdout) as { items: { metadata: { namespace: string; name: string }; status?: { conditions?: { type: string; status: string }[] } }[] }).items;
    const available = items.filter((d) => d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')).map((d) => `${d.metadata.namespace}/${d.metadata.name}`);
    expect(available).toEqual(expect.arrayContaining([
      'capi-system/capi-controller-manager',
      'capi-kubeadm-bootstrap-system/capi-kubeadm-bootstrap-controller-manager',
      'capi-kubeadm-control-plane-system/capi-kubeadm-control-plane-controller-manager',
      'cpaas-system/hcs-controller-manager',
    ]));
    // Upstream's webhooks are served by the pods with the generated certificates: a MachineDeployment's defaulting
    // (upstream's mutating webhook, through its Service) answers a dry run.
    const wh = k(['get', 'validatingwebhookconfigurations', 'capi-validating-webhook-configuration', '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}']);
    expect(wh.stdout.length, 'caBundle filled').toBeGreaterThan(100);
    times.push(`kubectl get deployments -A:\n${k(['get', 'deployments', '-A']).stdout.trimEnd()}`);
  }, 200_000);

  it.each(SCENARIOS)('%s: same verdict and the same per-hostname replacement sequences as the model', async (scenarioName) => {
    const scenario = loadScenario(join('scenarios', `${scenarioName}.yaml`));
    const model = recordingStart(embeddedTestbedFactory());
    const m = await runScenario(scenario, model.factory);
    const log = readProviderLog(providerLog);
    const kind = recordingStart(backend!.factory);
    const u = await runScenario(scenario, kind.factory);
    times.push(`${scenarioName}: kind ${(u.wallMs / 1000).toFixed(1)} s wall (${u.ok ? 'pass' : 'FAIL'}), model ${(m.wallMs / 1000).toFixed(2)} s (${m.ok ? 'pass' : 'FAIL'})`);
    const providerText = log();
    expect(verdict(u), `kind:\n${failures(u)}\n${logDigest(providerText)}\nmodel:\n${failures(m)}`).toEqual(verdict(m));
    expect(m.ok, failures(m)).toBe(true);
    const seqU = rolloutSequences(u, kind.starts[0]!);
    const seqM = rolloutSequences(m, model.starts[0]!);
    expect(seqM.some((s) => s.pattern.length > 0), 'the scenario replaces or adds Machines').toBe(true);
    const shape = { randomDeletion: true, groups: false };
    expect(compareShapes(runShape(m, model.starts[0]!, shape), runShape(u, kind.starts[0]!, shape), shape), `the runs' shapes\n${logDigest(providerText)}`).toEqual([]);
    expect(seqU, `per rollout: sorted per-hostname sequences and the order of operations\n${logDigest(providerText)}`).toEqual(seqM);
    // The provider's decisions, from the Deployment's own log (what the documents' troubleshooting command reads).
    const logs = k(['logs', '-n', 'cpaas-system', 'deployment/hcs-controller-manager', '--since=30m']);
    expect(logs.status, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(/"event":"hcsmachine\.entry-bound"/);
    times.push(`  rollouts: ${seqM.map((s) => s.pattern || '·').join(', ')}`);
  }, 1_200_000);
});

/**
 * Capture and doctor through the official Python SDK (issue 35): the cloud listed with huaweicloudsdk* 3.1.219
 * (test/capture/sdk_list.py: ListServersDetails, ListVolumes, ListPorts, ListSubnets, ListImages paged by marker,
 * 2 items a page, so every list runs past its first page), the management and workload clusters dumped with the real
 * kubectl (`get ... -o yaml`), then `hcs-testbed capture --offline` and `doctor`: the same finding as a live capture;
 * the bundle replays. Needs the SDK suite's venv (test/sdk-python/setup.sh) and kubectl: skipped, saying why, without.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockHcs } from '../../mock-hcs/src/index.js';
import { RealClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import { dispatchTransport, HcsClient } from '../../src/product/cloud/index.js';
import { captureMain } from '../../src/harness/cli/capture.js';
import { readBundleFile } from '../../src/harness/capture/bundle-file.js';
import { bundleState } from '../../src/harness/capture/state.js';
import { doctor } from '../../src/harness/capture/doctor.js';
import { createReplayTestbed } from '../../src/harness/capture/replay.js';
import { captureText, runTo, workersUp } from './support.js';

function venv(): string | undefined {
  try {
    const dir = execFileSync('test/sdk-python/setup.sh', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 900_000 }).trim();
    return existsSync(join(dir, 'bin', 'python')) ? dir : undefined;
  } catch {
    return undefined;
  }
}
const VENV = venv();
const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';
const why = !VENV ? 'no venv of the official Python SDKs (test/sdk-python/setup.sh needs python3 with venv and PyPI)' : !existsSync(KUBECTL) ? `no kubectl at ${KUBECTL}` : '';


describe.skipIf(!!why)(`capture --offline from the official Python SDK's list calls and kubectl dumps${why ? ` (skipped: ${why})` : ''}`, () => {
  it('pages past one page by marker; the doctor finds what it finds on a live capture; the bundle replays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-capture-'));
    const sc = workersUp('sdk-fixture', 9);
    const { tb } = await runTo(sc, sc.steps.length);
    const project = tb.cloud.config.projects[0]!;
    // The incident: a persistent disk detached by hand.
    const hm = (await tb.env.mgmt.list<HCSMachine>('HCSMachine')).find((m) => m.status?.hostname === 'demo-worker-1')!;
    const vol = tb.cloud.hypervisor.listVolumes().find((v) => v.metadata['hcs.io/hostname'] === 'demo-worker-1' && v.metadata['hcs.io/persistent'] === 'true')!;
    const cloud = new HcsClient({ transport: dispatchTransport(tb.cloud), ak: project.ak, sk: project.sk, projectId: project.id, clock: tb.clock });
    await cloud.detachVolume(hm.spec.serverId!, vol.id);
    await tb.sim.runUntil(() => tb.cloud.hypervisor.volume(vol.id)?.status === 'available', 60_000);
    const live = await captureText(tb);
    // The same cloud on the wall clock (the SDK signs with the wall time), listening over HTTP: fixture setup only.
    const wallCloud = await createMockHcs({ clock: new RealClock(), rng: new SeededRng(1), config: tb.cloud.config });
    try {
      await wallCloud.restoreState(tb.cloud.dumpState());
      const endpoint = await wallCloud.app.listen({ port: 0, host: '127.0.0.1' });
      const cloudDir = join(dir, 'cloud');
      execFileSync('mkdir', ['-p', cloudDir]);
      // Asynchronously: the cloud answering the SDK runs in this process.
      const { stdout: listed } = await promisify(execFile)(join(VENV!, 'bin', 'python'), ['test/capture/sdk_list.py'], {
        encoding: 'utf8',
        env: { ...process.env, MOCK_HCS_ENDPOINT: endpoint, HCS_AK: project.ak, HCS_SK: project.sk, HCS_PROJECT_ID: project.id, OUT: cloudDir, PAGE_SIZE: '2' },
        timeout: 120_000,
      });
      const pagesOf = (name: string): number => Number(new RegExp(`^${name} (\\d+) pages`, 'm').exec(listed)?.[1] ?? 0);
      expect(pagesOf('servers')).toBeGreaterThan(1);
      expect(pagesOf('volumes')).toBeGreaterThan(1);
      expect(pagesOf('ports')).toBeGreaterThan(1);
      // kubectl dumps through the testbed's API.
      const kubeconfig = await tb.world.kubeconfig!();
      const kubectl = async (args: string[]): Promise<string> => (await promisify(execFile)(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20 })).stdout;
      writeFileSync(join(dir, 'mgmt.yaml'), await kubectl(['get', 'clusters,hcsclusters,kubeadmcontrolplanes,hcsmachineconfigpools,hcsmachinetemplates,kubeadmconfigtemplates,machinedeployments,machinesets,machines,kubeadmconfigs,hcsmachines,secrets,configmaps,events', '-n', 'cpaas-system', '-o', 'yaml']));
      writeFileSync(join(dir, 'workload.yaml'), await kubectl(['--context', 'demo', 'get', 'nodes', '-o', 'yaml']));
      const files = readdirSync(cloudDir).map((f) => join(cloudDir, f));
      let out = '';
      const code = await captureMain(
        ['--offline', '--kube-dump', join(dir, 'mgmt.yaml'), '--workload-dump', `cpaas-system/demo=${join(dir, 'workload.yaml')}`, ...files.flatMap((f) => ['--cloud-json', f]), '--project', project.id, '--out', join(dir, 'offline.json')],
        (s) => (out += s),
        { HCS_AK: project.ak, HCS_SK: project.sk },
      );
      expect(code, out).toBe(0);
      const bundle = readBundleFile(join(dir, 'offline.json'));
      expect(bundle.cloud.servers.length).toBe(3);
      expect(bundle.cloud.volumes.length).toBe(live.bundle.cloud.volumes.length);
      const off = await doctor(bundleState(bundle), { source: 'offline', capturedAt: bundle.capturedAt });
      const on = await doctor(bundleState(live.bundle), { source: 'live', capturedAt: live.bundle.capturedAt });
      expect(off.findings.map((f) => f.key)).toEqual(on.findings.map((f) => f.key));
      expect(off.findings.map((f) => f.rule)).toEqual(['DISK-8']);
      // The offline bundle replays: the nodes are taken over, the cluster runs on.
      const replay = await createReplayTestbed(bundle, { seed: 1 });
      try {
        await replay.sim.advance(60_000);
        expect((await replay.env.workloads.client('cpaas-system', 'demo').list('Node')).length).toBe(3);
        expect(replay.guests.mounts('demo-worker-2').length).toBeGreaterThan(0);
      } finally {
        await replay.close();
      }
    } finally {
      await wallCloud.close();
      await tb.close();
    }
  }, 600_000);
});

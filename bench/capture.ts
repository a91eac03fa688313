/**
 * Capture and doctor a project with 1,000 volumes (issue 35; target < 30 s): a testbed brought up with the
 * worker cluster, its project filled with EVS volumes up to BENCH_CAPTURE_VOLUMES (default 1000, made through
 * CreateVolume with count), then — over real sockets — the cloud listening on loopback and the testbed's
 * kubeconfig API: `captureBundle` (the Kubernetes client over HTTPS, the signed list calls paged by marker at
 * the APIs' largest page), the bundle serialised and read back, `doctor` on it. Wall times, printed, never asserted.
 *
 *   npm run bench -- capture
 */
import { loadavg } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { createTestbed } from '../src/harness/testbed/index.js';
import { ClientNodeKube, loadKubeconfig } from '../src/core/kube/client-node.js';
import { dispatchTransport, HcsClient } from '../src/product/cloud/index.js';
import { cloudTransport } from '../src/product/provider/process.js';
import { applyObject, loadManifestPath } from '../src/harness/manifests/index.js';
import { captureBundle } from '../src/harness/capture/capture.js';
import { parseBundle, serializeBundle } from '../src/harness/capture/bundle.js';
import { bundleState } from '../src/harness/capture/state.js';
import { doctor } from '../src/harness/capture/doctor.js';

interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

export async function benchCapture(volumes = Number(process.env.BENCH_CAPTURE_VOLUMES ?? 1000)): Promise<BenchResult[]> {
  const tb = await createTestbed({ seed: 1 });
  try {
    for (const m of loadManifestPath('scenarios/manifests/worker-cluster')) await applyObject(tb.env.mgmt, m.obj);
    await tb.sim.runUntil(async () => (await tb.env.mgmt.list<{ status?: { phase?: string } } & import('../src/core/kube/types.js').KubeObject>('Machine')).filter((m) => m.status?.phase === 'Running').length === 3, 3_600_000);
    const p = tb.cloud.config.projects[0]!;
    const inProcess = new HcsClient({ transport: dispatchTransport(tb.cloud), ak: p.ak, sk: p.sk, projectId: p.id, clock: tb.clock });
    const have = tb.cloud.hypervisor.listVolumes().length;
    for (let left = volumes - have; left > 0; left -= 100) {
      await inProcess.createVolume({ volume: { name: 'bench-vol', size: 10, volume_type: 'SSD', availability_zone: 'az1', count: Math.min(100, left), metadata: { purpose: 'bench' } } });
    }
    await tb.sim.advance(60_000);
    const total = tb.cloud.hypervisor.listVolumes().length;
    const kubeconfig = await tb.world.kubeconfig!();
    await tb.sim.settle();
    const endpoint = await tb.cloud.app.listen({ port: 0, host: '127.0.0.1' });
    const cloud = new HcsClient({ transport: cloudTransport(endpoint), ak: p.ak, sk: p.sk, projectId: p.id, clock: tb.clock });
    const load = loadavg()[0]!.toFixed(1);
    const t0 = performance.now();
    const bundle = await captureBundle({
      mgmt: new ClientNodeKube(loadKubeconfig(kubeconfig)),
      workloadClient: (text) => {
        const kc = new KubeConfig();
        kc.loadFromString(text);
        return new ClientNodeKube(kc);
      },
      cloud,
      secrets: [p.ak, p.sk],
      now: tb.clock.now(),
    });
    const t1 = performance.now();
    const text = serializeBundle(bundle);
    const back = parseBundle(text);
    const t2 = performance.now();
    const report = await doctor(bundleState(back), { source: 'bench', capturedAt: back.capturedAt });
    const t3 = performance.now();
    const note = `${total} volumes, ${bundle.cloud.servers.length} servers, ${bundle.management.objects.length} objects; load ${load}`;
    return [
      { name: `capture (${total} volumes, over HTTP)`, value: (t1 - t0) / 1000, unit: 's', note },
      { name: 'bundle write + read back', value: (t2 - t1) / 1000, unit: 's', note: `${(text.length / 1e6).toFixed(1)} MB` },
      { name: 'doctor', value: (t3 - t2) / 1000, unit: 's', note: `${report.findings.length} findings (the bench volumes are orphans: TPL-3)` },
      { name: 'capture + doctor', value: (t3 - t0) / 1000, unit: 's', note: 'target < 30 s' },
    ];
  } finally {
    await tb.close();
  }
}

/**
 * Capture a running embedded testbed the way a user captures their cluster
 * (issue 35, the round trip): the management cluster through the testbed's
 * kubeconfig (its HTTP API, the real Kubernetes client), the workload
 * clusters through the `<cluster>-kubeconfig` Secrets, the cloud through the
 * signed HCS APIs with the project's AK/SK (HcsClient over mock-hcs's request
 * handler: the same routes, signature checks and paging as over a socket).
 *
 * What a user learns on the nodes rather than from an API comes from the
 * testbed's guests: the data files its `write` steps wrote (World.markers)
 * and the file system each disk carries (what `lsblk -f` shows on a node).
 * No private key or other file leaves a disk. With `history`, the testbed's
 * event log goes along, so a replay continues the same run.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { ClientNodeKube, loadKubeconfig } from '../../core/kube/client-node.js';
import { dispatchTransport, HcsClient } from '../../product/cloud/index.js';
import type { Testbed } from '../testbed/testbed.js';
import { captureBundle } from './capture.js';
import type { Bundle, BundleDisk } from './bundle.js';

export interface TestbedCaptureOptions {
  /** Carry the event log (the round trip: the replay continues the run); default true. */
  history?: boolean;
  pageSize?: number;
}

export async function captureTestbed(tb: Testbed, o: TestbedCaptureOptions = {}): Promise<Bundle> {
  const world = tb.world;
  if (!world.kubeconfig) throw new Error('this testbed serves no kubeconfig');
  const file = await world.kubeconfig();
  // The Cluster controller points the `<cluster>-kubeconfig` Secrets at the API the testbed now serves (an instant's work).
  await tb.sim.settle();
  const mgmt = new ClientNodeKube(loadKubeconfig(file));
  const project = tb.cloud.config.projects[0]!;
  const cloud = new HcsClient({ transport: dispatchTransport(tb.cloud), ak: project.ak, sk: project.sk, projectId: project.id, clock: tb.clock });
  const hv = tb.cloud.hypervisor;
  const markerPaths = new Map<string, Set<string>>();
  for (const m of world.markers) {
    const rel = m.path.slice(m.mountPath === '/' ? 0 : m.mountPath.length).replace(/^\/+/, '');
    markerPaths.set(m.volumeId, (markerPaths.get(m.volumeId) ?? new Set()).add(rel));
  }
  const disks: BundleDisk[] = [];
  for (const v of hv.listVolumes()) {
    const fs = hv.volume(v.id)?.fs;
    if (!fs?.fsType) continue;
    const files: Record<string, string> = {};
    for (const p of markerPaths.get(v.id) ?? []) if (fs.files[p] !== undefined) files[p] = fs.files[p]!;
    disks.push({ volumeId: v.id, fsType: fs.fsType, ...(fs.label ? { label: fs.label } : {}), files });
  }
  return captureBundle({
    mgmt,
    workloadClient: (kubeconfig) => {
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfig);
      return new ClientNodeKube(kc);
    },
    cloud,
    secrets: [project.ak, project.sk],
    disks,
    dataMarkers: [...world.markers],
    ...(o.history === false ? {} : { history: tb.events.all() }),
    providerLog: tb.env.logs.text('hcs-controller-manager'),
    now: tb.clock.now(),
    ...(o.pageSize ? { pageSize: o.pageSize } : {}),
    detail: 'a running hcs-testbed (its kubeconfig and cloud API)',
  });
}

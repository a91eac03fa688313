/**
 * A captured bundle as a StateSource (src/harness/scenario/world.ts): what
 * the invariants and the one-state rules read, answered from the bundle
 * alone — management and workload objects in read-only embedded stores, the
 * cloud as its list calls showed it. No guest: a bundle holds no node's
 * files or mounts (the certificate checks, which need them, find none).
 */
import { SeededRng } from '../../core/rng.js';
import { VirtualClock } from '../../core/clock.js';
import { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { CloudView, StateSource } from '../scenario/world.js';
import type { Bundle, BundleServer } from './bundle.js';
import { parseInstant } from './time.js';

const CLOUD_METADATA = new Set(['image_name', 'os_type', 'vpc_id', 'charging_mode', 'metering.image_id', 'metering.imagetype']);

/** IPs of a server as ECS lists them (every NIC's fixed address). */
export function serverIps(s: BundleServer): string[] {
  return Object.values((s.addresses ?? {}) as Record<string, { addr?: string }[]>)
    .flat()
    .map((a) => a.addr)
    .filter((x): x is string => !!x);
}

export function bundleState(b: Bundle): StateSource {
  const now = parseInstant(b.capturedAt);
  // A clock that stays at the capture's instant (nothing runs on a bundle).
  const clock = new VirtualClock(now);
  const rng = new SeededRng(1);
  const mgmt = new EmbeddedStore({ clock, rng, clusterName: 'management (bundle)' });
  mgmt.restore([...b.management.objects, ...b.events]);
  const workloads = new Map<string, EmbeddedStore>();
  for (const w of b.workloads) {
    const s = new EmbeddedStore({ clock, rng, clusterName: `workload:${w.cluster} (bundle)` });
    s.restore(w.objects);
    workloads.set(`${w.namespace}/${w.cluster}`, s);
  }
  const empty = new EmbeddedStore({ clock, rng, clusterName: 'workload (not captured)' });
  const servers = new Map(b.cloud.servers.map((s) => [s.id, s]));
  const files = new Map(b.disks.map((d) => [d.volumeId, d]));
  const cloud: CloudView = {
    listServers: () => b.cloud.servers.map((s) => ({ id: s.id, name: s.name, status: s.status })),
    server: (id) => {
      const s = servers.get(id);
      if (!s) return undefined;
      const meta = Object.fromEntries(Object.entries((s.metadata ?? {}) as Record<string, unknown>).filter(([k, v]) => typeof v === 'string' && !CLOUD_METADATA.has(k))) as Record<string, string>;
      const attached = ((s['os-extended-volumes:volumes_attached'] ?? s.volumes_attached ?? []) as { id: string; bootIndex?: string | number }[]).map((a) => ({
        volumeId: a.id,
        ...(a.bootIndex !== undefined && a.bootIndex !== null && a.bootIndex !== '' ? { bootIndex: Number(a.bootIndex) } : {}),
      }));
      const flavorId = (s.flavor as { id?: string } | undefined)?.id;
      const imageId = (s.image as { id?: string } | undefined)?.id;
      return { id: s.id, name: s.name, status: s.status, metadata: meta, volumes: attached, ips: serverIps(s), ...(flavorId ? { flavorId } : {}), ...(imageId ? { imageId } : {}) };
    },
    listVolumes: () =>
      b.cloud.volumes.map((v) => ({
        id: v.id,
        name: v.name,
        status: v.status,
        metadata: { ...v.metadata },
        ...(v.attachments[0]?.server_id ? { attachedTo: v.attachments[0].server_id } : {}),
        ...(typeof v.size === 'number' ? { size: v.size } : {}),
        ...(typeof v.volume_type === 'string' ? { volumeType: v.volume_type } : {}),
      })),
    readFile: (volumeId, path) => files.get(volumeId)?.files[path.replace(/^\/+/, '')],
    images: () => b.cloud.images.map((i) => ({ ...(typeof i.id === 'string' ? { id: i.id } : {}), name: String(i.name ?? ''), ...(typeof i.__support_kubernetes_version === 'string' ? { kubernetesVersion: i.__support_kubernetes_version } : {}), status: String(i.status ?? 'active') })),
  };
  return {
    clock,
    mgmt,
    workloads: { client: (ns: string, cluster: string): KubeClient => workloads.get(`${ns}/${cluster}`) ?? empty, names: () => [...workloads.keys()] },
    cloud,
    guests: { readFile: () => undefined, mounts: () => [] },
  };
}

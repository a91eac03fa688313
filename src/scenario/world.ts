import type { Clock } from '../core/clock.js';
import type { KubeClient } from '../kube/client.js';
import type { WorkloadClusters } from '../runtime/context.js';

/**
 * What scenario steps and checks can see and touch. The testbed assembly
 * (src/testbed) provides it; checks read the cloud through the hypervisor view
 * (independently of what the provider reports about itself).
 */
export interface CloudView {
  listServers(): { id: string; name: string; status: string }[];
  server(id: string): { id: string; name: string; status: string; metadata: Record<string, string>; volumes: { volumeId: string }[] } | undefined;
  listVolumes(): { id: string; name: string; status: string; metadata: Record<string, string>; attachedTo?: string }[];
  readFile(volumeId: string, path: string): string | undefined;
}

export interface GuestView {
  writeFile(hostname: string, path: string, content: string): void;
  readFile(hostname: string, path: string): string | undefined;
  mounts(hostname: string): { mountPath: string; volumeId: string; persistent: boolean }[];
}

export interface Marker {
  hostname: string;
  path: string;
  content: string;
  /** The volume the write landed on (persistent disk or not). */
  volumeId: string;
  persistent: boolean;
  /** Mount path of that volume, to find the file on a detached disk. */
  mountPath: string;
}

export interface World {
  clock: Clock;
  mgmt: KubeClient;
  workloads: WorkloadClusters;
  cloud: CloudView;
  guests: GuestView;
  /** Data markers written by `write` steps, checked by the `markers` check (DISK-8). */
  markers: Marker[];
  /** Provider controller log (OPS-3). */
  controllerLog(deployment: string): string;
}

import type { Clock } from '../../core/clock.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { WorkloadClusters } from '../../core/runtime/context.js';
import type { LogEvent } from '../../core/events.js';

/**
 * What scenario steps and checks can see and touch. The testbed assembly
 * (src/testbed) provides it; checks read the cloud through the hypervisor view
 * (independently of what the provider reports about itself).
 */
export interface CloudView {
  listServers(): { id: string; name: string; status: string }[];
  /** `ips`: the addresses of the server's NICs (BOOT-2 checks the kubelet certificate's SANs against them). */
  /**
   * `volumes[].bootIndex` 0: the root volume. `flavorId`/`imageId`: the flavor and IMS image the server was built
   * with (TPL-1/TPL-2, judged against its HCSMachine by invariant:server-spec), where the source shows them.
   */
  server(id: string): { id: string; name: string; status: string; metadata: Record<string, string>; volumes: { volumeId: string; bootIndex?: number }[]; ips?: string[]; availabilityZone?: string; flavorId?: string; imageId?: string } | undefined;
  /** `size` (GiB) and `volumeType` where the source shows them. */
  listVolumes(): { id: string; name: string; status: string; metadata: Record<string, string>; attachedTo?: string; size?: number; volumeType?: string }[];
  readFile(volumeId: string, path: string): string | undefined;
  /** The availability zones the cloud lists (NovaListAvailabilityZones; KCP-2's failure domains are judged against them). */
  availabilityZones?(): string[];
  /** IMS images with the Kubernetes version they carry (HCS-4), as the cloud's catalog lists them. */
  images(): { id?: string; name: string; kubernetesVersion?: string; status: string }[];
}

export interface GuestView {
  writeFile(hostname: string, path: string, content: string): void;
  readFile(hostname: string, path: string): string | undefined;
  /** Mounts of the running node; `options` as its cloud-init gave them (DISK-5). */
  mounts(hostname: string): { mountPath: string; volumeId: string; persistent: boolean; options?: string[] }[];
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

/**
 * What the continuous invariants read (issue 35): one state of the system, from wherever it comes. A running
 * testbed's World is one; so is a captured bundle (src/harness/capture/state.ts) and a live cluster read
 * through its kubeconfig and cloud API (read-only). The invariants (invariants.ts and the trackers beside it) take
 * a StateSource, so the scenario runner, `hcs-testbed doctor` and conformance share one library.
 */
export interface StateSource {
  clock: Pick<Clock, 'now'>;
  mgmt: KubeClient;
  workloads: Pick<WorkloadClusters, 'client' | 'names'>;
  cloud: CloudView;
  /** The nodes' files and mounts, where the source shows them (a bundle does not: no mounts, no files). */
  guests: Pick<GuestView, 'readFile' | 'mounts'>;
  /** See World.revision. */
  revision?(): string;
}

export interface World {
  clock: Clock;
  mgmt: KubeClient;
  workloads: WorkloadClusters;
  cloud: CloudView;
  guests: GuestView;
  /** Data markers written by `write` steps, checked by the `markers` check (DISK-8). */
  markers: Marker[];
  /** The run's event log so far. */
  eventLog(): readonly LogEvent[];
  /**
   * A value that changes whenever anything the invariants read may have
   * changed: management and workload objects, the cloud's servers and
   * volumes. Equal values: nothing changed in between. Absent where the
   * backend cannot tell (a remote management cluster): then every check runs.
   */
  revision?(): string;
  /** Provider controller log (OPS-3). */
  controllerLog(deployment: string): string;
  /** Cloud fault injection (HCS-6). Throws with a message naming the bad field. */
  faults: {
    add(rule: Record<string, unknown>): string;
    clear(): void;
    releaseStuck(target?: string): number;
  };
  /**
   * A kubeconfig for the real kubectl: the testbed starts its HTTP facade on
   * first use (steps with `real: true`). Absent on backends without one.
   */
  kubeconfig?(): Promise<string>;
  /**
   * Remote management clusters: wait until the testbed's watches have seen
   * every change made outside its own client (the real kubectl's writes).
   */
  sync?(): Promise<void>;
  /**
   * The cloud operator's ECS action on a server (`server` step): os-stop (HARD) or os-start, as the cloud carries
   * it out (a job; the guest stops, its Node goes NotReady). Throws naming the server when the cloud refuses.
   */
  serverAction?(serverId: string, action: 'stop' | 'start'): string;
  /**
   * An operator's calls on the cloud's API (`cloud` step, issue 37), with the project's own credentials: create,
   * attach, detach and delete volumes by hand. Each returns the cloud's job id (createVolume: the volume id).
   * Absent on backends without one.
   */
  cloudOps?: {
    createVolume(v: { name: string; size: number; type: string; availabilityZone: string; metadata?: Record<string, string> }): Promise<string>;
    attachVolume(serverId: string, volumeId: string): Promise<string>;
    detachVolume(serverId: string, volumeId: string): Promise<string>;
    deleteVolume(volumeId: string): Promise<void>;
  };
  /** Simulate a controller process crash; `restart` brings the controllers back with a full resync. */
  crash(controllers: string[]): string[];
  restart(controllers: string[]): void | Promise<void>;
}

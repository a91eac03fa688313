/**
 * Metadata keys the provider writes on HCS servers and EVS volumes. They make
 * every provider decision re-derivable from cloud state (a restarted provider
 * finds its servers and disks again) and tell the simulated guest which
 * cluster it belongs to. Documented in docs/provider.md.
 */
export const META_CLUSTER = 'hcs.io/cluster';
export const META_NAMESPACE = 'hcs.io/namespace';
export const META_MACHINE = 'hcs.io/machine';
export const META_MACHINE_UID = 'hcs.io/machine-uid';
export const META_HOSTNAME = 'hcs.io/hostname';
export const META_POOL = 'hcs.io/pool';
export const META_SLOT = 'hcs.io/slot';
/** "true" on persistent (pool-managed) volumes. */
export const META_PERSISTENT = 'hcs.io/persistent';
/** Machine.spec.version the server was built for (BOOT-4). */
export const META_K8S_VERSION = 'hcs.io/kubernetes-version';
/** Comma-separated ids of the persistent volumes written into this server's cloud-init (attached right after ACTIVE). */
export const META_PERSISTENT_VOLUMES = 'hcs.io/persistent-volumes';

/** Annotation on HCSMachine: job id of the server delete request. */
export const ANNOTATION_DELETE_JOB = 'hcs.io/delete-job';

/** Device path under which a guest sees an attached EVS volume (virtio serial = first 20 characters of the volume id). */
export function volumeDevicePath(volumeId: string): string {
  return `/dev/disk/by-id/virtio-${volumeId.slice(0, 20)}`;
}

/** Device path of the n-th ephemeral data volume (root is /dev/vda, data volumes follow in request order). */
export function dataVolumeDevicePath(index: number): string {
  return `/dev/vd${String.fromCharCode('b'.charCodeAt(0) + index)}`;
}

/** Filesystem label of a persistent disk ("pd0", "pd1", ...). */
export function persistentDiskLabel(slot: number): string {
  return `pd${slot}`;
}

/** Filesystem label of an ephemeral data volume ("dv0", ...). */
export function dataVolumeLabel(index: number): string {
  return `dv${index}`;
}

/** EVS volume name of a persistent disk: `<cluster>-<hostname>-pd<slot>` (DISK-3). */
export function persistentVolumeName(cluster: string, hostname: string, slot: number): string {
  return `${cluster}-${hostname}-pd${slot}`;
}

/** providerID of a machine (TPL-4). */
export function providerIDFor(cluster: string, machine: string): string {
  return `hcs://${cluster}/${machine}`;
}

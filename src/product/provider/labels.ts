/**
 * Names the provider derives: device paths, filesystem labels, volume names,
 * providerIDs. The metadata keys it writes on servers and volumes are in
 * src/product/api/metadata.ts.
 */
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

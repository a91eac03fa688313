/**
 * The metadata keys on HCS servers and EVS volumes: the contract between the
 * provider (which writes them), the cloud (which keeps them) and the guest and
 * the checks (which read them). They make every provider decision
 * re-derivable from cloud state (a restarted provider finds its servers and
 * disks again; DISK-3: a persistent disk is found by (hostname, slot)) and
 * tell the simulated guest which cluster it belongs to. Defined here once;
 * documented in docs/provider.md.
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
/** The image name a server was built from (BOOT-4: the guest looks up the Kubernetes version it carries). */
export const META_IMAGE_NAME = 'hcs.io/image';
/** The Kubernetes version of that image. */
export const META_IMAGE_K8S_VERSION = 'hcs.io/image-kubernetes-version';

/** The (hostname, slot) identity of a persistent disk from its volume's metadata (DISK-3), or undefined. */
export function persistentDiskIdentity(metadata: Record<string, string> | undefined): { cluster?: string; hostname: string; slot: number } | undefined {
  const hostname = metadata?.[META_HOSTNAME];
  const slot = metadata?.[META_SLOT];
  if (!hostname || slot === undefined) return undefined;
  return { hostname, slot: Number(slot), ...(metadata?.[META_CLUSTER] ? { cluster: metadata[META_CLUSTER] } : {}) };
}

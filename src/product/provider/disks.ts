/**
 * Persistent disk claiming (DISK-3, DISK-9).
 *
 * A persistent disk's identity is (cluster, hostname, slot). The claimer finds
 * the EVS volume carrying that identity in its metadata (or, for volumes an
 * administrator created by hand, by its name `<cluster>-<hostname>-pd<slot>`)
 * and creates it only when none exists. It never deletes a volume.
 *
 * The interface is injectable so tests can swap in a broken claimer (e.g. one
 * that forgets identities) and prove that the scenarios detect it.
 */
import type { CloudApi, CloudVolume } from './cloud-api.js';
import { attachedServers } from './cloud-api.js';
import { persistentVolumeName } from './labels.js';
import { META_CLUSTER, META_HOSTNAME, META_NAMESPACE, META_PERSISTENT, META_POOL, META_SLOT } from '../api/metadata.js';
import { KeyedMutex } from './util.js';

export interface DiskIdentity {
  namespace: string;
  cluster: string;
  hostname: string;
  slot: number;
}

export interface DiskRequest extends DiskIdentity {
  pool: string;
  size: number;
  type: string;
  availabilityZone: string;
  /** Volume id already recorded in the pool status for this identity, if any. */
  knownVolumeId?: string;
}

export interface ClaimedDisk {
  volumeId: string;
  name: string;
  status: string;
  attachedServerIds: string[];
  /** True when this call created the volume. */
  created: boolean;
  /** Notes worth reporting (duplicates, spec drift). */
  warnings: string[];
  /**
   * The volume as this claim read it from EVS, when it did (not for a volume
   * it just created): the caller may use it instead of reading the same
   * volume again in the same reconcile.
   */
  volume?: CloudVolume;
}

export interface DiskClaimer {
  /** Find the volume of this identity, creating it once when missing (DISK-3). */
  claim(req: DiskRequest): Promise<ClaimedDisk>;
  /** Find the volume of this identity without creating anything. */
  find(id: DiskIdentity & { knownVolumeId?: string }): Promise<ClaimedDisk | undefined>;
}

function toClaimed(v: CloudVolume, created: boolean, warnings: string[] = []): ClaimedDisk {
  return { volumeId: v.id, name: v.name, status: v.status, attachedServerIds: attachedServers(v), created, warnings, volume: v };
}

function matchesIdentity(v: CloudVolume, id: DiskIdentity): boolean {
  const m = v.metadata ?? {};
  if (m[META_CLUSTER] === id.cluster && m[META_HOSTNAME] === id.hostname && m[META_SLOT] === String(id.slot)) {
    return m[META_NAMESPACE] === undefined || m[META_NAMESPACE] === id.namespace;
  }
  return v.name === persistentVolumeName(id.cluster, id.hostname, id.slot) && m[META_CLUSTER] === undefined;
}

function oldestFirst(a: CloudVolume, b: CloudVolume): number {
  const ta = a.created_at ?? '';
  const tb = b.created_at ?? '';
  return ta < tb ? -1 : ta > tb ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The real claimer, on EVS. */
export class EvsDiskClaimer implements DiskClaimer {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly cloud: CloudApi) {}

  async find(id: DiskIdentity & { knownVolumeId?: string }): Promise<ClaimedDisk | undefined> {
    if (id.knownVolumeId) {
      const v = await this.cloud.showVolume(id.knownVolumeId);
      if (v && v.status !== 'deleting' && matchesIdentity(v, id)) return toClaimed(v, false);
    }
    const byMeta = await this.cloud.listVolumes({
      metadata: { [META_CLUSTER]: id.cluster, [META_HOSTNAME]: id.hostname, [META_SLOT]: String(id.slot) },
    });
    let candidates = byMeta.filter((v) => matchesIdentity(v, id) && v.status !== 'deleting' && v.status !== 'error_deleting');
    if (candidates.length === 0) {
      const byName = await this.cloud.listVolumes({ name: persistentVolumeName(id.cluster, id.hostname, id.slot) });
      candidates = byName.filter((v) => matchesIdentity(v, id) && v.status !== 'deleting');
    }
    if (candidates.length === 0) return undefined;
    candidates.sort(oldestFirst);
    const warnings =
      candidates.length > 1
        ? [`DISK-3: ${candidates.length} EVS volumes carry identity ${id.cluster}/${id.hostname}/pd${id.slot} (${candidates.map((v) => v.id).join(', ')}); using the oldest, ${candidates[0]!.id}`]
        : [];
    return toClaimed(candidates[0]!, false, warnings);
  }

  async claim(req: DiskRequest): Promise<ClaimedDisk> {
    // Serialise claims of one identity inside this process; across restarts the
    // metadata lookup below is the guard (the volume is visible as soon as it is requested).
    return this.mutex.run(`${req.namespace}/${req.cluster}/${req.hostname}/${req.slot}`, async () => {
      const found = await this.find(req);
      if (found) {
        // find() has just read the volume (ShowVolume or ListVolumes, both with its size): no second read.
        const v = found.volume ?? (await this.cloud.showVolume(found.volumeId));
        if (v && (v.size !== undefined && v.size !== req.size)) {
          found.warnings.push(`DISK-4: volume ${v.id} has size ${v.size} GiB but the pool entry asks for ${req.size} GiB; the accepted volume is kept`);
        }
        return found;
      }
      const name = persistentVolumeName(req.cluster, req.hostname, req.slot);
      const res = await this.cloud.createVolume({
        volume: {
          name,
          size: req.size,
          volume_type: req.type,
          availability_zone: req.availabilityZone,
          metadata: {
            [META_CLUSTER]: req.cluster,
            [META_NAMESPACE]: req.namespace,
            [META_POOL]: req.pool,
            [META_HOSTNAME]: req.hostname,
            [META_SLOT]: String(req.slot),
            [META_PERSISTENT]: 'true',
          },
        },
      });
      const id = res.volume_ids[0];
      if (!id) throw new Error(`EVS create for ${name} returned no volume id (job ${res.job_id})`);
      return { volumeId: id, name, status: 'creating', attachedServerIds: [], created: true, warnings: [] };
    });
  }
}

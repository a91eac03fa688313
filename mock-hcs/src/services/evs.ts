/**
 * EVS: volumes (create, update, delete) and their timed transitions. The
 * volumes created with a server (system disk, data volumes) are made here
 * too, through makeVolume.
 */
import { CloudError, Codes } from '../errors.js';
import type { TaskKind, TaskRec, VolumeRec } from '../state.js';
import { setOwn, Validator } from '../validate.js';
import type { CloudCore, VolumeOps } from './core.js';

const evsV: Validator = new Validator(Codes.evsBadRequest);

export class EvsService implements VolumeOps {
  static readonly TASKS: readonly TaskKind[] = ['volume.create', 'volume.delete', 'volume.extend'];

  constructor(private readonly c: CloudCore) {
    c.tasks.register(EvsService.TASKS, {
      finish: (target, kind) => (kind === 'volume.create' ? this.finishVolumeCreate(target) : kind === 'volume.extend' ? this.finishVolumeExtend(target) : this.finishVolumeDelete(target)),
      fail: (t, code, reason) => (t.kind === 'volume.extend' ? this.failVolumeExtend(t.target, code, reason) : this.failTask(t, code, reason)),
    });
  }

  createVolume(projectId: string, body: unknown): { job_id: string; volume_ids: string[] } {
    const root = evsV.obj(body, 'body');
    const vol = evsV.obj(root.volume, 'volume');
    const az = evsV.str(vol.availability_zone, 'volume.availability_zone');
    if (!this.c.catalog.azs.has(az)) evsV.fail('volume.availability_zone', `"${az}" is not an availability zone (valid: ${[...this.c.catalog.azs].join(', ')})`);
    const size = evsV.int(vol.size, 'volume.size', 10, 32768);
    const type = this.c.catalog.volumeType(evsV, vol.volume_type, 'volume.volume_type');
    const name = evsV.optStr(vol.name, 'volume.name', { max: 255 }) ?? `volume-${this.c.ids.hex(4)}`;
    const metadata = evsV.stringMap(vol.metadata, 'volume.metadata');
    if (evsV.bool(vol.multiattach, 'volume.multiattach', false)) evsV.fail('volume.multiattach', 'shared (multi-attach) volumes are not supported', ['DISK-9']);
    const count = evsV.optInt(vol.count, 'volume.count', 1, 100) ?? 1;
    if (root.bss_param !== undefined) evsV.optObj(root.bss_param, 'bss_param');
    this.c.catalog.checkQuota(projectId, 'evs', { volumes: count, gigabytes: count * size });
    const vols: VolumeRec[] = [];
    for (let i = 0; i < count; i++) {
      vols.push(
        this.makeVolume(projectId, {
          name: count > 1 ? `${name}-${String(i + 1).padStart(4, '0')}` : name,
          size,
          volumeType: type,
          az,
          metadata,
          bootable: false,
          status: 'creating',
        }),
      );
    }
    const job = this.c.jobs.newJob(projectId, 'batchCreateVolumes', count > 1 ? { volume_ids: vols.map((v) => v.id) } : { volume_type: type, size, volume_id: vols[0]!.id, name });
    if (count === 1) job.job_type = 'createVolume';
    for (const v of vols) {
      v.jobs.push(job.job_id);
      this.c.tasks.schedule('volume.create', v.id, this.c.duration(this.c.config.timings.volumeCreateMs));
      this.c.record('volume.created', `volume ${v.name} (${v.id}) creating: ${size} GB ${type} in ${az}`, { volumeId: v.id, name: v.name, size, type, az, metadata, jobId: job.job_id });
      this.c.volumeChanged(v);
    }
    this.c.store.markDirty();
    return { job_id: job.job_id, volume_ids: vols.map((v) => v.id) };
  }

  private finishVolumeCreate(volumeId: string): void {
    const v = this.c.data.volumes[volumeId];
    if (!v || v.status !== 'creating') return;
    v.status = 'available';
    v.updatedAt = this.c.clock.now();
    const jobs = v.jobs.splice(0);
    this.c.record('volume.available', `volume ${v.name} (${v.id}) available`, { volumeId: v.id });
    this.c.volumeChanged(v);
    for (const j of jobs) {
      // A batch job ends when none of its volumes is still creating.
      const job = this.c.data.jobs[j];
      const ids = (job?.entities.volume_ids as string[] | undefined) ?? [v.id];
      if (ids.every((id) => this.c.data.volumes[id]?.status !== 'creating')) this.c.jobs.endJob(j, true);
    }
  }

  /**
   * EVS UpdateVolume (PUT /v2/{project_id}/cloudvolumes/{volume_id}): name,
   * description and metadata keys (merged; null values remove a key).
   */
  updateVolume(projectId: string, volumeId: string, body: unknown): VolumeRec {
    const v = this.c.volumeRec(projectId, volumeId);
    if (!v) throw new CloudError(404, Codes.evsNotFound, `Volume ${volumeId} could not be found.`);
    const vol = (body as { volume?: unknown } | null)?.volume;
    if (typeof vol !== 'object' || vol === null || Array.isArray(vol)) throw new CloudError(400, Codes.evsBadRequest, 'Invalid request body: volume is required and must be an object');
    const { name, description, metadata, ...rest } = vol as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length) throw new CloudError(400, Codes.evsBadRequest, `Invalid request body: volume.${unknown[0]} cannot be updated (name, description, metadata)`);
    if (name === undefined && description === undefined && metadata === undefined) throw new CloudError(400, Codes.evsBadRequest, 'Invalid request body: nothing to update (name, description, metadata)');
    if (name !== undefined && (typeof name !== 'string' || name.length > 64)) throw new CloudError(400, Codes.evsBadRequest, 'Invalid request body: volume.name must be a string of at most 64 characters');
    if (description !== undefined && (typeof description !== 'string' || description.length > 255)) throw new CloudError(400, Codes.evsBadRequest, 'Invalid request body: volume.description must be a string of at most 255 characters');
    if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || Object.values(metadata).some((x) => x !== null && typeof x !== 'string'))) {
      throw new CloudError(400, Codes.evsBadRequest, 'Invalid request body: volume.metadata must map keys to strings (null removes a key)');
    }
    if (v.status === 'deleting') throw new CloudError(400, Codes.evsBadRequest, `Volume ${volumeId} is being deleted`);
    if (typeof name === 'string') v.name = name;
    if (typeof description === 'string') v.description = description;
    for (const [k, val] of Object.entries((metadata ?? {}) as Record<string, string | null>)) {
      if (val === null) delete v.metadata[k];
      else {
        setOwn(v.metadata, k, val);
        this.c.store.noteVolumeMetadata(v, k, val);
      }
    }
    v.updatedAt = this.c.clock.now();
    this.c.record('volume.updated', `volume ${v.name} (${v.id}) updated`, { volumeId: v.id });
    this.c.volumeChanged(v);
    this.c.store.markDirty();
    return v;
  }

  deleteVolume(projectId: string, volumeId: string): { job_id: string } {
    const v = this.c.volumeRec(projectId, volumeId);
    if (!v) throw new CloudError(404, Codes.evsNotFound, `Volume ${volumeId} could not be found.`);
    if (v.attachment || v.pendingServerId || v.status === 'in-use' || v.status === 'attaching' || v.status === 'detaching') {
      throw new CloudError(400, Codes.evsInUse, `Volume ${volumeId} is ${v.status}${v.attachment ? ` on server ${v.attachment.serverId}` : ''}; detach it before deleting it`, ['DISK-9']);
    }
    if (v.status === 'creating' || v.status === 'extending') throw new CloudError(400, Codes.evsBadRequest, `Volume ${volumeId} cannot be deleted while ${v.status}`);
    const job = this.c.jobs.newJob(projectId, 'deleteVolume', { volume_id: volumeId });
    v.jobs.push(job.job_id);
    if (v.status !== 'deleting') {
      v.status = 'deleting';
      v.updatedAt = this.c.clock.now();
      this.c.tasks.schedule('volume.delete', v.id, this.c.duration(this.c.config.timings.volumeDeleteMs));
      this.c.volumeChanged(v);
    }
    this.c.record('volume.delete-requested', `delete volume ${v.name} (${v.id})`, { volumeId: v.id, jobId: job.job_id });
    this.c.store.markDirty();
    return { job_id: job.job_id };
  }

  /**
   * EVS ResizeVolume (POST /v2.1/{project_id}/cloudvolumes/{volume_id}/action {"os-extend":{"new_size"}};
   * "Expanding Capacity of an EVS Disk", evs_04_2004): an available disk, or an in-use one whose server is
   * ACTIVE or SHUTOFF (the page's constraints; shared disks do not exist here, DISK-9), grows to new_size GB,
   * at most 32768 (data disk) or 1024 (system disk), through an extendVolume job ("Querying Task Status",
   * evs_04_0054): status `extending`, then back to available / in-use with the new size. The new gigabytes
   * count against the quota (EVS.1042). EVS documents no code for a bad size or state: EVS.5400, naming the field.
   */
  resizeVolume(projectId: string, volumeId: string, body: unknown): { job_id: string } {
    const v = this.c.volumeRec(projectId, volumeId);
    if (!v) throw new CloudError(404, Codes.evsNotFound, `Volume ${volumeId} could not be found.`);
    const root = evsV.obj(body, 'body');
    const ext = evsV.obj(root['os-extend'], 'os-extend');
    const newSize = evsV.int(ext.new_size, 'os-extend.new_size', 1, v.bootable ? 1024 : 32768);
    if (root.bssParam !== undefined) evsV.optObj(root.bssParam, 'bssParam');
    if (v.status !== 'available' && v.status !== 'in-use') throw new CloudError(400, Codes.evsBadRequest, `Volume ${volumeId} is ${v.status}: only an available or in-use disk can be expanded`);
    if (newSize <= v.size) evsV.fail('os-extend.new_size', `must be greater than the disk's size (${v.size} GB)`);
    const server = v.attachment ? this.c.data.servers[v.attachment.serverId] : undefined;
    if (server && server.status !== 'ACTIVE' && server.status !== 'SHUTOFF') {
      throw new CloudError(400, Codes.evsBadRequest, `Volume ${volumeId} is attached to server ${server.id}, which is ${server.status}: an in-use disk can be expanded while its server is ACTIVE or SHUTOFF`);
    }
    this.c.catalog.checkQuota(projectId, 'evs', { gigabytes: newSize - v.size });
    const job = this.c.jobs.newJob(projectId, 'extendVolume', { volume_id: v.id, size: newSize });
    v.jobs.push(job.job_id);
    v.status = 'extending';
    v.updatedAt = this.c.clock.now();
    // EVS documents no duration: as long as creating a disk.
    this.c.tasks.schedule('volume.extend', v.id, this.c.duration(this.c.config.timings.volumeCreateMs));
    this.c.record('volume.extend-requested', `extend volume ${v.name} (${v.id}) from ${v.size} to ${newSize} GB`, { volumeId: v.id, size: v.size, newSize, jobId: job.job_id });
    this.c.volumeChanged(v);
    this.c.store.markDirty();
    return { job_id: job.job_id };
  }

  /** The extendVolume jobs a volume waits for, and the size the last one asks for. */
  private extendJobs(v: VolumeRec): { ids: string[]; size: number | undefined } {
    const ids = v.jobs.filter((j) => this.c.data.jobs[j]?.job_type === 'extendVolume');
    const sizes = ids.map((j) => this.c.data.jobs[j]!.entities.size).filter((x): x is number => typeof x === 'number');
    return { ids, size: sizes[sizes.length - 1] };
  }

  private finishVolumeExtend(volumeId: string): void {
    const v = this.c.data.volumes[volumeId];
    if (!v) return;
    const { ids, size } = this.extendJobs(v);
    v.jobs = v.jobs.filter((j) => !ids.includes(j));
    if (size !== undefined) v.size = size;
    if (v.status === 'extending') v.status = v.attachment ? 'in-use' : 'available';
    v.updatedAt = this.c.clock.now();
    this.c.record('volume.extended', `volume ${v.name} (${v.id}) extended to ${v.size} GB`, { volumeId: v.id, size: v.size });
    this.c.volumeChanged(v);
    for (const j of ids) this.c.jobs.endJob(j, true);
  }

  /** A failed extension (fault `jobFail`, `timeout`): the disk keeps its size and is back where it was; the job ends FAIL. */
  private failVolumeExtend(volumeId: string, code: string, reason: string): void {
    const v = this.c.data.volumes[volumeId];
    if (!v) return;
    const { ids } = this.extendJobs(v);
    v.jobs = v.jobs.filter((j) => !ids.includes(j));
    if (v.status === 'extending') v.status = v.attachment ? 'in-use' : 'available';
    v.updatedAt = this.c.clock.now();
    this.c.record('volume.extend-failed', `extending volume ${v.name} (${v.id}) failed: ${code} ${reason}; still ${v.size} GB`, { volumeId: v.id, code, reason }, ['HCS-6']);
    this.c.volumeChanged(v);
    for (const j of ids) this.c.jobs.endJob(j, false, code, reason);
  }

  private finishVolumeDelete(volumeId: string): void {
    const v = this.c.data.volumes[volumeId];
    if (!v || v.status !== 'deleting') return;
    this.removeVolume(v, 'deleted');
  }

  makeVolume(
    projectId: string,
    o: { name: string; size: number; volumeType: string; az: string; metadata: Record<string, string>; bootable: boolean; imageId?: string; status: VolumeRec['status'] },
  ): VolumeRec {
    const now = this.c.clock.now();
    const v: VolumeRec = {
      id: this.c.ids.newVolumeId(),
      projectId,
      name: o.name,
      size: o.size,
      volumeType: o.volumeType,
      az: o.az,
      status: o.status,
      metadata: { ...o.metadata },
      bootable: o.bootable,
      ...(o.imageId ? { imageId: o.imageId } : {}),
      createdAt: now,
      updatedAt: now,
      fs: { files: {} },
      jobs: [],
    };
    this.c.data.volumes[v.id] = v;
    this.c.store.indexVolume(v);
    return v;
  }

  removeVolume(v: VolumeRec, why: string, rules: string[] = []): void {
    this.c.tasks.cancel('volume', v.id);
    this.c.store.unindexVolume(v);
    delete this.c.data.volumes[v.id];
    for (const j of v.jobs.splice(0)) this.c.jobs.endJob(j, true);
    this.c.record('volume.deleted', `volume ${v.name} (${v.id}) ${why}`, { volumeId: v.id, name: v.name }, rules);
    this.c.volumeChanged(v, 'deleted');
  }

  /** A volume transition that ends in failure (fault `jobFail`): the volume lands in `error` (create, delete); its jobs end FAIL. */
  private failTask(t: TaskRec, code: string, reason: string): void {
    const v = this.c.data.volumes[t.target];
    const creating = t.kind === 'volume.create';
    if (!v || v.status !== (creating ? 'creating' : 'deleting')) return;
    v.status = 'error';
    v.updatedAt = this.c.clock.now();
    if (creating) this.c.record('volume.error', `volume ${v.name} (${v.id}) error: ${code} ${reason}`, { volumeId: v.id, code, reason }, ['HCS-6']);
    else this.c.record('volume.delete-failed', `deleting volume ${v.name} (${v.id}) failed: ${code} ${reason}; status error`, { volumeId: v.id, code, reason }, ['HCS-6']);
    this.c.volumeChanged(v);
    for (const j of v.jobs.splice(0)) this.c.jobs.endJob(j, false, code, reason);
  }
}

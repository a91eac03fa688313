/**
 * ECS attach / detach of EVS volumes (POST /attachvolume, DELETE
 * /detachvolume/{volume_id}) and their timed transitions.
 */
import { CloudError, Codes } from '../errors.js';
import type { TaskKind, TaskRec } from '../state.js';
import { Validator } from '../validate.js';
import type { CloudCore } from './core.js';

const ecsV: Validator = new Validator(Codes.ecsBadRequest);
const DEVICE = /^\/dev\/(vd|sd|xvd)[a-z]$/;

export class EcsVolumeService {
  static readonly TASKS: readonly TaskKind[] = ['volume.attach', 'volume.detach'];

  constructor(private readonly c: CloudCore) {
    c.tasks.register(EcsVolumeService.TASKS, {
      finish: (target, kind) => (kind === 'volume.attach' ? this.finishAttach(target) : this.finishDetach(target)),
      fail: (t, code, reason) => this.failTask(t, code, reason),
    });
  }

  attachVolume(projectId: string, serverId: string, body: unknown): { job_id: string } {
    const root = ecsV.obj(body, 'body');
    const va = ecsV.obj(root.volumeAttachment, 'volumeAttachment');
    const volumeId = ecsV.str(va.volumeId, 'volumeAttachment.volumeId');
    const deviceIn = ecsV.optStr(va.device, 'volumeAttachment.device', { pattern: DEVICE, patternText: '/dev/vdX, /dev/sdX or /dev/xvdX' });
    const s = this.c.serverRec(projectId, serverId);
    if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${serverId}] could not be found.`);
    if (s.taskState === 'deleting' || (s.status !== 'ACTIVE' && s.status !== 'SHUTOFF')) {
      throw new CloudError(400, Codes.ecsServerState, `Cannot attach a volume to server ${serverId} while it is ${s.taskState === 'deleting' ? 'being deleted' : s.status}`);
    }
    const v = this.c.volumeRec(projectId, volumeId);
    // ecs_07_0002: Ecs.0103 "The disk is unavailable" (Ecs.0104 is the attach-slot limit).
    if (!v) throw new CloudError(400, Codes.ecsVolumeNotAvailable, `Volume ${volumeId} could not be found (volumeAttachment.volumeId)`);
    const holder = v.attachment?.serverId ?? v.pendingServerId;
    if (holder !== undefined) {
      throw new CloudError(
        400,
        Codes.ecsVolumeInUse,
        holder === serverId
          ? `Volume ${volumeId} is already attached to server ${serverId}`
          : `Volume ${volumeId} is ${v.status} on server ${holder}; a volume cannot be attached to two servers (multi-attach is not supported)`,
        ['DISK-9'],
      );
    }
    if (v.status !== 'available') {
      throw new CloudError(400, Codes.ecsVolumeNotAvailable, `Volume ${volumeId} is not available (status ${v.status})`);
    }
    if (v.az !== s.az) {
      throw new CloudError(400, Codes.ecsBadRequest, `Invalid volumeAttachment.volumeId: volume ${volumeId} is in availability zone ${v.az} but server ${serverId} is in ${s.az}`, ['DISK-3']);
    }
    const used = new Set([...s.volumes.map((x) => x.device), ...s.attaching.map((x) => x.device)]);
    let device = deviceIn;
    if (device !== undefined && used.has(device)) throw new CloudError(400, Codes.ecsBadRequest, `Invalid volumeAttachment.device: ${device} is already in use on server ${serverId}`);
    if (device === undefined) {
      for (let c = 'b'.charCodeAt(0); c <= 'z'.charCodeAt(0); c++) {
        const d = `/dev/vd${String.fromCharCode(c)}`;
        if (!used.has(d)) {
          device = d;
          break;
        }
      }
      if (device === undefined) throw new CloudError(400, Codes.ecsNoDeviceSlot, `The number of disks attached to server ${serverId} has exceeded the upper limit`);
    }
    const job = this.c.jobs.newJob(projectId, 'attachVolume', { server_id: serverId, volume_id: volumeId });
    v.status = 'attaching';
    v.pendingServerId = serverId;
    this.c.store.noteVolumeServer(v, serverId);
    v.pendingDevice = device;
    v.updatedAt = this.c.clock.now();
    v.jobs.push(job.job_id);
    s.attaching.push({ volumeId, device });
    this.c.tasks.schedule('volume.attach', v.id, this.c.duration(this.c.config.timings.volumeAttachMs));
    this.c.record('volume.attach-requested', `attach volume ${v.name} (${v.id}) to server ${s.name} (${s.id}) as ${device}`, {
      volumeId: v.id,
      serverId: s.id,
      device,
      jobId: job.job_id,
    });
    this.c.volumeChanged(v);
    this.c.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishAttach(volumeId: string): void {
    const v = this.c.data.volumes[volumeId];
    if (!v || v.status !== 'attaching' || !v.pendingServerId) return;
    const s = this.c.data.servers[v.pendingServerId];
    const device = v.pendingDevice ?? '/dev/vdb';
    delete v.pendingServerId;
    delete v.pendingDevice;
    const now = this.c.clock.now();
    v.updatedAt = now;
    if (!s) {
      v.status = 'available';
      for (const j of v.jobs.splice(0)) this.c.jobs.endJob(j, false, Codes.ecsServerNotFound, 'server disappeared during the attach');
      this.c.volumeChanged(v);
      return;
    }
    s.attaching = s.attaching.filter((a) => a.volumeId !== v.id);
    s.volumes.push({ volumeId: v.id, device, deleteOnTermination: false });
    s.updated = now;
    v.status = 'in-use';
    v.attachment = { serverId: s.id, device, attachmentId: this.c.ids.uuid(), attachedAt: now };
    this.c.store.noteVolumeServer(v, s.id);
    for (const j of v.jobs.splice(0)) this.c.jobs.endJob(j, true);
    this.c.record('volume.attached', `volume ${v.name} (${v.id}) in-use on server ${s.name} (${s.id}) as ${device}`, { volumeId: v.id, serverId: s.id, device });
    this.c.volumeChanged(v);
  }

  detachVolume(projectId: string, serverId: string, volumeId: string): { job_id: string } {
    const s = this.c.serverRec(projectId, serverId);
    if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${serverId}] could not be found.`);
    const sv = s.volumes.find((x) => x.volumeId === volumeId);
    const v = this.c.volumeRec(projectId, volumeId);
    if (!sv || !v) throw new CloudError(400, Codes.ecsVolumeNotAttached, `Volume ${volumeId} is not attached to server ${serverId}`);
    if (sv.bootIndex === 0 && s.status !== 'SHUTOFF') {
      throw new CloudError(400, Codes.ecsBadRequest, `Volume ${volumeId} is the system disk of server ${serverId}; stop the server before detaching it`);
    }
    if (s.taskState === 'deleting') throw new CloudError(400, Codes.ecsServerState, `Server ${serverId} is being deleted`);
    if (v.status !== 'detaching' && v.status !== 'in-use') {
      throw new CloudError(400, Codes.ecsVolumeNotAvailable, `Volume ${volumeId} cannot be detached while ${v.status}`);
    }
    const job = this.c.jobs.newJob(projectId, 'detachVolume', { server_id: serverId, volume_id: volumeId });
    v.jobs.push(job.job_id);
    if (v.status !== 'detaching') {
      v.status = 'detaching';
      v.updatedAt = this.c.clock.now();
      this.c.tasks.schedule('volume.detach', v.id, this.c.duration(this.c.config.timings.volumeDetachMs));
      this.c.volumeChanged(v);
    }
    this.c.record('volume.detach-requested', `detach volume ${v.name} (${v.id}) from server ${s.name} (${s.id})`, { volumeId: v.id, serverId: s.id, jobId: job.job_id });
    this.c.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishDetach(volumeId: string): void {
    const v = this.c.data.volumes[volumeId];
    if (!v || v.status !== 'detaching') return;
    const now = this.c.clock.now();
    const serverId = v.attachment?.serverId;
    const s = serverId ? this.c.data.servers[serverId] : undefined;
    if (s) {
      s.volumes = s.volumes.filter((x) => x.volumeId !== v.id);
      s.updated = now;
    }
    delete v.attachment;
    v.status = 'available';
    v.updatedAt = now;
    for (const j of v.jobs.splice(0)) this.c.jobs.endJob(j, true);
    this.c.record('volume.detached', `volume ${v.name} (${v.id}) detached from server ${s?.name ?? serverId}; available`, { volumeId: v.id, serverId });
    this.c.volumeChanged(v);
  }

  /** An attach or detach that ends in failure (fault `jobFail`): the volume is back where it was, its jobs end FAIL. */
  private failTask(t: TaskRec, code: string, reason: string): void {
    const now = this.c.clock.now();
    const failJobs = (jobs: string[]) => {
      for (const j of jobs) this.c.jobs.endJob(j, false, code, reason);
    };
    switch (t.kind) {
      case 'volume.attach': {
        const v = this.c.data.volumes[t.target];
        if (!v || v.status !== 'attaching') return;
        const s = v.pendingServerId ? this.c.data.servers[v.pendingServerId] : undefined;
        if (s) s.attaching = s.attaching.filter((a) => a.volumeId !== v.id);
        delete v.pendingServerId;
        delete v.pendingDevice;
        v.status = 'available';
        v.updatedAt = now;
        this.c.record('volume.attach-failed', `attaching volume ${v.name} (${v.id}) failed: ${code} ${reason}; available again`, { volumeId: v.id, code, reason }, ['HCS-6']);
        this.c.volumeChanged(v);
        failJobs(v.jobs.splice(0));
        return;
      }
      case 'volume.detach': {
        const v = this.c.data.volumes[t.target];
        if (!v || v.status !== 'detaching') return;
        v.status = 'in-use';
        v.updatedAt = now;
        this.c.record('volume.detach-failed', `detaching volume ${v.name} (${v.id}) failed: ${code} ${reason}; still in-use`, { volumeId: v.id, code, reason }, ['HCS-6']);
        this.c.volumeChanged(v);
        failJobs(v.jobs.splice(0));
        return;
      }
    }
  }
}

/**
 * ECS: servers (create, delete, stop / start / reboot) and their timed
 * transitions. Attaching and detaching volumes is in ecs-volumes.ts.
 */
import { CloudError, Codes } from '../errors.js';
import { intToIp } from '../ip.js';
import type { NicRec, ServerRec, SubJobRec, TaskKind, TaskRec } from '../state.js';
import { own, Validator } from '../validate.js';
import type { CloudCore } from './core.js';
import type { SubnetInfo } from './ipam.js';

const ecsV: Validator = new Validator(Codes.ecsBadRequest);

const SERVER_NAME = /^[A-Za-z0-9_.\-\u4e00-\u9fa5]{1,64}$/;
const MAX_USER_DATA = 32 * 1024;

/** Default durations of os-stop / os-start / reboot when the config has none. */
export const DEFAULT_ACTION_MS = { stop: 10_000, start: 10_000, reboot: 15_000 } as const;

export type ServerAction = 'os-stop' | 'os-start' | 'reboot';

/** Job and sub-job types of the batch actions (ECS names). */
const ACTION_JOB: Record<ServerAction, { job: string; sub: string; kind: TaskKind; verb: string }> = {
  'os-stop': { job: 'batchStopServer', sub: 'stopServer', kind: 'server.stop', verb: 'stop' },
  'os-start': { job: 'batchStartServer', sub: 'startServer', kind: 'server.start', verb: 'start' },
  reboot: { job: 'batchRebootServer', sub: 'rebootServer', kind: 'server.reboot', verb: 'reboot' },
};

export interface CreateServersResult {
  job_id: string;
  serverIds: string[];
}

export class EcsService {
  static readonly TASKS: readonly TaskKind[] = ['server.build', 'server.delete', 'server.stop', 'server.start', 'server.reboot'];

  constructor(private readonly c: CloudCore) {
    c.tasks.register(EcsService.TASKS, {
      finish: (target, kind) => {
        if (kind === 'server.build') this.finishBuild(target);
        else if (kind === 'server.delete') this.finishServerDelete(target);
        else this.finishAction(kind, target);
      },
      fail: (t, code, reason) => this.failTask(t, code, reason),
    });
  }

  createServers(projectId: string, body: unknown, clientToken?: string): CreateServersResult {
    const tokenKey = clientToken ? `${projectId}|${clientToken}` : undefined;
    if (tokenKey) {
      const prev = own(this.c.data.clientTokens, tokenKey);
      if (prev) {
        this.c.record('server.create-replayed', `X-Client-Token ${clientToken}: returning job ${prev.response.job_id} again, no new server`, {
          clientToken,
          jobId: prev.response.job_id,
          serverIds: prev.response.serverIds,
        });
        return { job_id: prev.response.job_id, serverIds: [...prev.response.serverIds] };
      }
    }
    const root = ecsV.obj(body, 'body');
    const srv = ecsV.obj(root.server, 'server');
    const name = ecsV.str(srv.name, 'server.name', { pattern: SERVER_NAME, patternText: '1-64 letters, digits, "_", "-" or "."' });
    const imageRef = ecsV.str(srv.imageRef, 'server.imageRef');
    const image = this.c.catalog.images.get(imageRef);
    if (!image) throw new CloudError(400, Codes.ecsImageNotFound, `Image ${imageRef} could not be found (server.imageRef)`, ['TPL-6']);
    if ((image.status ?? 'active') !== 'active') {
      throw new CloudError(400, Codes.ecsImageNotActive, `Image ${imageRef} is not active (status ${image.status}) (server.imageRef)`, ['TPL-6']);
    }
    const flavorRef = ecsV.str(srv.flavorRef, 'server.flavorRef');
    const flavor = this.c.catalog.flavors.get(flavorRef);
    const azIn = ecsV.optStr(srv.availability_zone, 'server.availability_zone');
    if (azIn !== undefined && !this.c.catalog.azs.has(azIn)) {
      throw new CloudError(400, Codes.ecsBadRequest, `Invalid request parameter server.availability_zone: "${azIn}" is not an availability zone (valid: ${[...this.c.catalog.azs].join(', ')})`, ['TPL-2']);
    }
    if (!flavor) {
      throw new CloudError(400, Codes.ecsFlavorUnavailable, `Flavor ${flavorRef} could not be found (server.flavorRef; valid: ${[...this.c.catalog.flavors.keys()].join(', ')})`, ['TPL-2']);
    }
    const az = azIn ?? this.c.config.availabilityZones.find((a) => this.c.catalog.flavorOffered(flavor, a)) ?? '';
    if (!this.c.catalog.flavorOffered(flavor, az)) {
      const offered = this.c.config.availabilityZones.filter((a) => this.c.catalog.flavorOffered(flavor, a));
      throw new CloudError(400, Codes.ecsFlavorUnavailable, `Flavor ${flavorRef} is not available in availability zone ${az} (offered in: ${offered.join(', ') || 'none'})`, ['TPL-2']);
    }
    if (flavor.azStatus?.[az] === 'sellout') {
      throw new CloudError(400, Codes.ecsCapacity, `Insufficient capacity: flavor ${flavor.id} is sold out in availability zone ${az}. Try another flavor or availability zone.`, ['HCS-6', 'TPL-2', 'OPS-2']);
    }
    const vpcId = ecsV.str(srv.vpcid, 'server.vpcid');
    if (!this.c.catalog.vpcs.has(vpcId)) throw new CloudError(400, Codes.ecsVpcInvalid, `VPC ${vpcId} could not be found (server.vpcid)`);
    const count = ecsV.optInt(srv.count, 'server.count', 1, 500) ?? 1;
    const nicsIn = ecsV.arr(srv.nics, 'server.nics', 1, 12);
    const nicSpecs: { subnet: SubnetInfo; ip?: number; path: string }[] = [];
    const seenIps = new Set<string>();
    nicsIn.forEach((n, i) => {
      const path = `server.nics[${i}]`;
      const nic = ecsV.obj(n, path);
      const subnetId = ecsV.str(nic.subnet_id, `${path}.subnet_id`);
      const subnet = this.c.ipam.subnets.get(subnetId);
      if (!subnet) throw new CloudError(400, Codes.ecsSubnetNotFound, `Subnet ${subnetId} could not be found (${path}.subnet_id)`, ['NET-4']);
      if (subnet.cfg.vpc_id !== vpcId) {
        throw new CloudError(400, Codes.ecsVpcInvalid, `Subnet ${subnetId} does not belong to VPC ${vpcId} (${path}.subnet_id)`, ['NET-4']);
      }
      const ipText = ecsV.optStr(nic.ip_address, `${path}.ip_address`);
      let ip: number | undefined;
      if (ipText !== undefined) {
        if (count > 1) ecsV.fail(`${path}.ip_address`, 'a fixed IP address cannot be used with count > 1');
        ip = this.c.ipam.checkRequestedIp(subnet, ipText, `${path}.ip_address`, ecsV, projectId, seenIps);
        seenIps.add(`${subnet.cfg.id}|${ipText}`);
      }
      nicSpecs.push({ subnet, ...(ip !== undefined ? { ip } : {}), path });
    });
    const rv = ecsV.obj(srv.root_volume, 'server.root_volume');
    const rootType = this.c.catalog.volumeType(ecsV, rv.volumetype, 'server.root_volume.volumetype');
    const minDisk = 40;
    const rootSize = ecsV.optInt(rv.size, 'server.root_volume.size', minDisk, 1024) ?? minDisk;
    const dataIn = ecsV.optArr(srv.data_volumes, 'server.data_volumes', 0, 23) ?? [];
    const dataSpecs = dataIn.map((d, i) => {
      const path = `server.data_volumes[${i}]`;
      const o = ecsV.obj(d, path);
      if (o.multiattach === true || o.shareable === true) ecsV.fail(`${path}.multiattach`, 'shared (multi-attach) volumes are not supported', ['DISK-9']);
      return {
        type: this.c.catalog.volumeType(ecsV, o.volumetype, `${path}.volumetype`),
        size: ecsV.int(o.size, `${path}.size`, 10, 32768),
        // As ECS documents it: a data disk is kept when its server is deleted unless delete_on_termination is true
        // or DeleteServers asks delete_volume=true (ecs_02_0103: "false: only detaches the disks and reserves them",
        // the default). The system disk always goes with the server.
        deleteOnTermination: ecsV.bool(o.delete_on_termination, `${path}.delete_on_termination`, false),
        metadata: ecsV.stringMap(o.metadata, `${path}.metadata`),
      };
    });
    let userData: string | undefined;
    if (srv.user_data !== undefined && srv.user_data !== null) {
      const ud = ecsV.str(srv.user_data, 'server.user_data');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(ud) || ud.length % 4 !== 0) ecsV.fail('server.user_data', 'must be base64 encoded');
      if (Buffer.from(ud, 'base64').length > MAX_USER_DATA) ecsV.fail('server.user_data', `decoded size must be at most ${MAX_USER_DATA} bytes`);
      userData = ud;
    }
    const metadata = ecsV.stringMap(srv.metadata, 'server.metadata');
    const tagsIn = ecsV.optArr(srv.server_tags, 'server.server_tags', 0, 20) ?? [];
    const tags = tagsIn.map((t, i) => {
      const o = ecsV.obj(t, `server.server_tags[${i}]`);
      return { key: ecsV.str(o.key, `server.server_tags[${i}].key`, { max: 36 }), value: typeof o.value === 'string' ? o.value : '' };
    });
    if (new Set(tags.map((t) => t.key)).size !== tags.length) ecsV.fail('server.server_tags', 'tag keys must be unique');
    this.c.catalog.checkQuota(projectId, 'ecs', {
      instances: count,
      cores: count * flavor.vcpus,
      ram: count * flavor.ramMiB,
      volumes: count * (1 + dataSpecs.length),
      gigabytes: count * (rootSize + dataSpecs.reduce((a, d) => a + d.size, 0)),
    });
    this.c.catalog.checkCapacity(flavor.id, az, count);

    // Allocate addresses for every server of the batch before creating anything (all or nothing).
    const plannedIps: string[][] = [];
    const batchTaken = new Set<string>();
    for (let c = 0; c < count; c++) {
      const ips: string[] = [];
      for (const spec of nicSpecs) {
        const ip = spec.ip !== undefined ? intToIp(spec.ip) : this.c.ipam.allocateIp(spec.subnet, batchTaken, spec.path);
        batchTaken.add(`${spec.subnet.cfg.id}|${ip}`);
        ips.push(ip);
      }
      plannedIps.push(ips);
    }

    const now = this.c.clock.now();
    const subJobs: SubJobRec[] = [];
    const serverIds: string[] = [];
    const job = this.c.jobs.newJob(projectId, 'createServer', {}, subJobs);
    for (let c = 0; c < count; c++) {
      const id = this.c.ids.newServerId();
      const sName = count > 1 ? `${name}-${String(c + 1).padStart(4, '0')}` : name;
      const nics: NicRec[] = nicSpecs.map((spec, i) => ({
        subnetId: spec.subnet.cfg.id,
        ip: plannedIps[c]![i]!,
        portId: this.c.ids.uuid(),
        mac: this.c.ids.mac(),
      }));
      const s: ServerRec = {
        id,
        projectId,
        name: sName,
        status: 'BUILD',
        taskState: 'spawning',
        flavorId: flavor.id,
        imageId: image.id,
        az,
        vpcId,
        nics,
        volumes: [],
        ...(userData !== undefined ? { userData } : {}),
        metadata: { ...metadata },
        tags: tags.map((t) => ({ ...t })),
        instanceName: `instance-${(++this.c.data.instanceSeq).toString(16).padStart(8, '0')}`,
        hostId: this.c.ids.hex(56),
        created: now,
        updated: now,
        deleteJobs: [],
        createJob: job.job_id,
        attaching: [],
      };
      const rootVol = this.c.evs.makeVolume(projectId, {
        name: `${sName}-volume-0000`,
        size: rootSize,
        volumeType: rootType,
        az,
        metadata: {},
        bootable: true,
        imageId: image.id,
        status: 'creating',
      });
      rootVol.attachment = { serverId: id, device: '/dev/vda', attachmentId: this.c.ids.uuid(), attachedAt: now };
      this.c.store.noteVolumeServer(rootVol, id);
      s.volumes.push({ volumeId: rootVol.id, device: '/dev/vda', bootIndex: 0, deleteOnTermination: true });
      dataSpecs.forEach((d, i) => {
        const dev = `/dev/vd${String.fromCharCode('b'.charCodeAt(0) + i)}`;
        const vol = this.c.evs.makeVolume(projectId, {
          name: `${sName}-volume-${String(i + 1).padStart(4, '0')}`,
          size: d.size,
          volumeType: d.type,
          az,
          metadata: d.metadata,
          bootable: false,
          status: 'creating',
        });
        vol.attachment = { serverId: id, device: dev, attachmentId: this.c.ids.uuid(), attachedAt: now };
        this.c.store.noteVolumeServer(vol, id);
        s.volumes.push({ volumeId: vol.id, device: dev, deleteOnTermination: d.deleteOnTermination });
      });
      this.c.data.servers[id] = s;
      this.c.store.indexServer(s);
      subJobs.push(this.c.jobs.newSubJob('createSingleServer', { server_id: id }));
      serverIds.push(id);
      this.c.tasks.schedule('server.build', id, this.c.duration(image.buildMs ?? flavor.buildMs ?? this.c.config.timings.serverBuildMs));
      this.c.record('server.created', `server ${sName} (${id}) BUILD in ${az}: flavor ${flavor.id}, image ${image.name}, ips ${nics.map((n) => n.ip).join(',')}`, {
        serverId: id,
        name: sName,
        projectId,
        az,
        flavor: flavor.id,
        image: image.name,
        ips: nics.map((n) => n.ip),
        volumes: s.volumes.map((v) => v.volumeId),
        jobId: job.job_id,
      });
      this.c.serverChanged(s);
      for (const v of s.volumes) this.c.volumeChanged(this.c.data.volumes[v.volumeId]!);
    }
    job.entities = { sub_jobs_total: subJobs.length };
    const response = { job_id: job.job_id, serverIds };
    if (tokenKey) {
      this.c.data.clientTokens[tokenKey] = { projectId, response, at: now };
      this.c.jobs.noteClientToken(job.job_id, tokenKey);
    }
    this.c.store.markDirty();
    return { job_id: job.job_id, serverIds: [...serverIds] };
  }


  private finishBuild(serverId: string): void {
    const s = this.c.data.servers[serverId];
    if (!s || s.status !== 'BUILD') return;
    const now = this.c.clock.now();
    s.status = 'ACTIVE';
    s.taskState = null;
    s.updated = now;
    s.launchedAt = now;
    for (const sv of s.volumes) {
      const v = this.c.data.volumes[sv.volumeId];
      if (v && v.status === 'creating') {
        v.status = 'in-use';
        v.updatedAt = now;
        this.c.volumeChanged(v);
      }
    }
    this.c.record('server.active', `server ${s.name} (${s.id}) ACTIVE`, { serverId: s.id, name: s.name });
    this.c.jobs.endSubJob(s.createJob, s.id, true);
    this.c.serverChanged(s);
  }

  deleteServers(projectId: string, body: unknown): { job_id: string } {
    const root = ecsV.obj(body, 'body');
    const list = ecsV.arr(root.servers, 'servers', 1, 1000);
    const ids = list.map((e, i) => ecsV.str(ecsV.obj(e, `servers[${i}]`).id, `servers[${i}].id`));
    const deleteVolume = ecsV.bool(root.delete_volume, 'delete_volume', false);
    ecsV.bool(root.delete_publicip, 'delete_publicip', false);
    const servers = ids.map((id) => {
      const s = this.c.serverRec(projectId, id);
      if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${id}] could not be found.`);
      return s;
    });
    const subJobs = servers.map((s) => this.c.jobs.newSubJob('deleteSingleServer', { server_id: s.id }));
    const job = this.c.jobs.newJob(projectId, 'deleteServer', { sub_jobs_total: subJobs.length }, subJobs);
    for (const s of servers) {
      s.deleteJobs.push(job.job_id);
      if (deleteVolume) s.deleteVolume = true;
      if (s.taskState === 'deleting') continue;
      if (s.status === 'BUILD') {
        this.c.tasks.cancel('server', s.id);
        this.c.jobs.endSubJob(s.createJob, s.id, false, Codes.internal, `server ${s.id} was deleted before it became ACTIVE`);
      }
      if (s.actionJob) {
        // A stop/start/reboot in progress is abandoned: its sub-job fails.
        this.c.tasks.cancel('server', s.id);
        this.c.jobs.endSubJob(s.actionJob, s.id, false, Codes.ecsServerState, `server ${s.id} was deleted during the operation`);
        delete s.actionJob;
      }
      s.taskState = 'deleting';
      s.updated = this.c.clock.now();
      this.c.tasks.schedule('server.delete', s.id, this.c.duration(this.c.config.timings.serverDeleteMs));
      this.c.record(
        'server.delete-requested',
        `delete server ${s.name} (${s.id})${deleteVolume ? ' with delete_volume=true (all attached data volumes will be deleted)' : ''}`,
        { serverId: s.id, name: s.name, deleteVolume, jobId: job.job_id },
      );
    }
    this.c.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishServerDelete(serverId: string): void {
    const s = this.c.data.servers[serverId];
    if (!s) return;
    const now = this.c.clock.now();
    // Volumes being attached to this server fall back to available; their attach jobs fail.
    for (const a of s.attaching) {
      const v = this.c.data.volumes[a.volumeId];
      if (!v) continue;
      this.c.tasks.cancel('volume', v.id);
      v.status = 'available';
      delete v.pendingServerId;
      delete v.pendingDevice;
      v.updatedAt = now;
      for (const j of v.jobs.splice(0)) this.c.jobs.endJob(j, false, Codes.ecsServerNotFound, `server ${s.id} was deleted during the attach`);
      this.c.volumeChanged(v);
    }
    for (const sv of s.volumes) {
      const v = this.c.data.volumes[sv.volumeId];
      if (!v) continue;
      const goes = v.status !== 'detaching' && (sv.bootIndex === 0 || sv.deleteOnTermination || s.deleteVolume === true);
      this.c.tasks.cancel('volume', v.id);
      if (goes) {
        const why = sv.bootIndex === 0 ? 'system disk' : sv.deleteOnTermination ? 'delete_on_termination' : 'delete_volume=true';
        this.c.evs.removeVolume(v, `deleted with server ${s.name} (${why})`, sv.deleteOnTermination || sv.bootIndex === 0 ? [] : ['DISK-9']);
      } else {
        const wasDetaching = v.status === 'detaching';
        v.status = 'available';
        delete v.attachment;
        v.updatedAt = now;
        for (const j of v.jobs.splice(0)) this.c.jobs.endJob(j, true);
        this.c.record('volume.detached', `volume ${v.name} (${v.id}) detached from deleted server ${s.name}; it survives and is available`, { volumeId: v.id, serverId: s.id, wasDetaching }, ['DISK-9']);
        this.c.volumeChanged(v);
      }
    }
    this.c.store.unindexServer(s);
    delete this.c.data.servers[s.id];
    this.c.record('server.deleted', `server ${s.name} (${s.id}) deleted; released ${s.nics.map((n) => n.ip).join(',')}`, { serverId: s.id, name: s.name, ips: s.nics.map((n) => n.ip) });
    for (const j of s.deleteJobs) this.c.jobs.endSubJob(j, s.id, true);
    this.c.serverChanged(s, 'DELETED');
  }

  serverAction(projectId: string, body: unknown): { job_id: string } {
    const root = ecsV.obj(body, 'body');
    const present = (Object.keys(ACTION_JOB) as ServerAction[]).filter((k) => root[k] !== undefined);
    const extra = Object.keys(root).filter((k) => !Object.hasOwn(ACTION_JOB, k));
    if (present.length !== 1 || extra.length > 0) {
      ecsV.fail('body', `must contain exactly one of os-stop, os-start, reboot${extra.length ? ` (unknown: ${extra.join(', ')})` : ''}`);
    }
    const action = present[0]!;
    const opt = ecsV.obj(root[action], action);
    const list = ecsV.arr(opt.servers, `${action}.servers`, 1, 1000);
    const ids = list.map((e, i) => ecsV.str(ecsV.obj(e, `${action}.servers[${i}]`).id, `${action}.servers[${i}].id`));
    if (new Set(ids).size !== ids.length) ecsV.fail(`${action}.servers`, 'server ids must be unique');
    if (action === 'os-start' && opt.type !== undefined) ecsV.fail('os-start.type', 'is not a field of os-start');
    let type: 'SOFT' | 'HARD' = 'SOFT';
    if (action === 'reboot' || opt.type !== undefined) {
      const t = ecsV.str(opt.type, `${action}.type`);
      if (t !== 'SOFT' && t !== 'HARD') ecsV.fail(`${action}.type`, 'must be SOFT or HARD');
      type = t;
    }
    const servers = ids.map((id) => {
      const s = this.c.serverRec(projectId, id);
      if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${id}] could not be found.`);
      return s;
    });
    const need: Record<ServerAction, ServerRec['status']> = { 'os-stop': 'ACTIVE', 'os-start': 'SHUTOFF', reboot: 'ACTIVE' };
    for (const s of servers) {
      const busy = s.taskState === 'deleting' ? 'being deleted' : s.actionJob ? `busy (${s.taskState ?? 'operation in progress'})` : undefined;
      if (busy || s.status !== need[action]) {
        throw new CloudError(400, Codes.ecsServerState, `Cannot ${ACTION_JOB[action].verb} server ${s.id} while it is ${busy ?? s.status} (needs ${need[action]})`, ['HCS-1']);
      }
    }
    const spec = ACTION_JOB[action];
    const subJobs = servers.map((s) => this.c.jobs.newSubJob(spec.sub, { server_id: s.id }));
    const job = this.c.jobs.newJob(projectId, spec.job, { sub_jobs_total: subJobs.length }, subJobs);
    const t = this.c.config.timings;
    const base = action === 'os-stop' ? (t.serverStopMs ?? DEFAULT_ACTION_MS.stop) : action === 'os-start' ? (t.serverStartMs ?? DEFAULT_ACTION_MS.start) : (t.serverRebootMs ?? DEFAULT_ACTION_MS.reboot);
    for (const s of servers) {
      s.actionJob = job.job_id;
      s.updated = this.c.clock.now();
      if (action === 'os-stop') s.taskState = 'powering-off';
      else if (action === 'os-start') s.taskState = 'powering-on';
      else {
        s.status = type === 'HARD' ? 'HARD_REBOOT' : 'REBOOT';
        s.taskState = type === 'HARD' ? 'rebooting_hard' : 'rebooting';
      }
      this.c.tasks.schedule(spec.kind, s.id, this.c.duration(base));
      this.c.record(`server.${spec.verb}-requested`, `${spec.verb}${action === 'os-start' ? '' : ` (${type})`} server ${s.name} (${s.id})`, { serverId: s.id, name: s.name, type, jobId: job.job_id }, ['HCS-1']);
      if (action === 'reboot') this.c.serverChanged(s);
    }
    this.c.store.markDirty();
    return { job_id: job.job_id };
  }

  /**
   * DeleteServerMetadata ("Deleting Specified ECS Metadata", ecs_02_0702): DELETE
   * /v1/{project_id}/cloudservers/{server_id}/metadata/{key}, synchronous (no job), 204 with no body.
   * Checked in this order, and a refusal changes nothing:
   * - an unknown server (or one of another project): 404 Ecs.0114 "Instance[id] could not be found.",
   *   ShowServer's answer and lookup (serverRec);
   * - the key as UpdateServerMetadata checks a metadata key (1-255 characters, ecs_02_0701): an empty
   *   one is 400 Ecs.0005 naming `key`. (One over fastify's maxParamLength, 100, is refused before
   *   routing, also 400 Ecs.0005, by http.ts frameworkErrors; that limit is index.ts's, not this call's.)
   * - no key is refused by name, as UpdateServerMetadata here refuses none: neither page lists keys
   *   that cannot be changed (the reserved keys admin_pass, op_svc_userid, agency_name and BYOL are
   *   CreateServers' metadata fields). The keys ECS sets itself (image_name, os_type, vpc_id,
   *   charging_mode, metering.*) are not in the record but rendered by render.ts: deleting one is the
   *   next case, and ShowServer keeps showing the cloud's value, as after an UpdateServerMetadata of one;
   * - a key the server does not have: ecs_02_0702 documents no answer for it and ecs_07_0002 no code
   *   that names it. mock-hcs follows the closest documented behaviour of UpdateServerMetadata (adding
   *   or changing a key never depends on whether the key exists; keys not named stay as they are) and
   *   of BatchDeleteServerTags here (keys not present are ignored): 204, nothing changes. (The native
   *   Nova call, DELETE /v2.1/.../servers/{id}/metadata/{key}, answers 404 itemNotFound; a client
   *   should take either as "the key is gone".)
   * The page's constraint (vm_state active, stopped, paused or suspended) is not enforced, as it is
   * not for UpdateServerMetadata, which documents the same one.
   */
  deleteServerMetadata(projectId: string, serverId: string, key: string): void {
    const s = this.c.serverRec(projectId, serverId);
    if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${serverId}] could not be found.`);
    if (key.length === 0 || key.length > 255) ecsV.fail('key', `a metadata key must be 1-255 characters (got ${key.length})`);
    if (!Object.hasOwn(s.metadata, key)) return;
    // Own-property delete: a key such as "__proto__" is an ordinary entry (setOwn), never the prototype.
    Reflect.deleteProperty(s.metadata, key);
    s.updated = this.c.clock.now();
    this.c.store.markDirty();
    this.c.record('server.metadata-deleted', `server ${s.name} (${s.id}) metadata: deleted ${key}`, { serverId: s.id, keys: [key] });
  }

  private finishAction(kind: TaskKind, serverId: string): void {
    const s = this.c.data.servers[serverId];
    if (!s || !s.actionJob) return;
    const job = s.actionJob;
    delete s.actionJob;
    s.status = kind === 'server.stop' ? 'SHUTOFF' : 'ACTIVE';
    s.taskState = null;
    s.updated = this.c.clock.now();
    const type = kind === 'server.stop' ? 'server.stopped' : kind === 'server.start' ? 'server.started' : 'server.rebooted';
    this.c.record(type, `server ${s.name} (${s.id}) ${s.status}`, { serverId: s.id, name: s.name, status: s.status }, ['HCS-1']);
    this.c.jobs.endSubJob(job, s.id, true);
    this.c.serverChanged(s);
  }

  /** A server transition that ends in failure (fault `jobFail`): the server lands in a failed state, its job ends FAIL. */
  private failTask(t: TaskRec, code: string, reason: string): void {
    const now = this.c.clock.now();
    switch (t.kind) {
      case 'server.build': {
        const s = this.c.data.servers[t.target];
        if (!s || s.status !== 'BUILD') return;
        s.status = 'ERROR';
        s.taskState = null;
        s.updated = now;
        s.fault = { code: 500, message: reason, details: code, created: now };
        for (const sv of s.volumes) {
          const v = this.c.data.volumes[sv.volumeId];
          if (v && v.status === 'creating') {
            v.status = 'error';
            v.updatedAt = now;
            this.c.volumeChanged(v);
          }
        }
        // Like a real failed build, the server stays (ERROR) and keeps its IPs until deleted.
        this.c.record('server.error', `server ${s.name} (${s.id}) ERROR: ${code} ${reason}`, { serverId: s.id, name: s.name, code, reason }, ['HCS-6', 'OPS-2']);
        this.c.jobs.endSubJob(s.createJob, s.id, false, code, reason);
        this.c.serverChanged(s);
        return;
      }
      case 'server.delete': {
        const s = this.c.data.servers[t.target];
        if (!s) return;
        s.taskState = null;
        s.status = 'ERROR';
        s.updated = now;
        s.fault = { code: 500, message: reason, details: code, created: now };
        this.c.record('server.delete-failed', `deleting server ${s.name} (${s.id}) failed: ${code} ${reason}; it is ERROR`, { serverId: s.id, code, reason }, ['HCS-6']);
        for (const j of s.deleteJobs.splice(0)) this.c.jobs.endSubJob(j, s.id, false, code, reason);
        this.c.serverChanged(s);
        return;
      }
      case 'server.stop':
      case 'server.start':
      case 'server.reboot': {
        const s = this.c.data.servers[t.target];
        if (!s || !s.actionJob) return;
        const job = s.actionJob;
        delete s.actionJob;
        s.taskState = null;
        s.updated = now;
        if (t.kind === 'server.reboot') {
          // A failed reboot leaves the server broken, as on Nova.
          s.status = 'ERROR';
          s.fault = { code: 500, message: reason, details: code, created: now };
        }
        this.c.record('server.action-failed', `${t.kind} of server ${s.name} (${s.id}) failed: ${code} ${reason}; status ${s.status}`, { serverId: s.id, kind: t.kind, code, reason }, ['HCS-6']);
        this.c.jobs.endSubJob(job, s.id, false, code, reason);
        this.c.serverChanged(s);
        return;
      }
    }
  }
}

/** ECS calls of the HCS client: servers, jobs, flavors, actions, block devices, availability zones. */
import {
  ECS,
  queryString,
  type AvailabilityZone,
  type BlockDevice,
  type BlockDeviceList,
  type CreateServersBody,
  type CreateServersResponse,
  type DeleteServerMetadataRequest,
  type DeleteServerMetadataResponse,
  type Flavor,
  type Job,
  type JobResponse,
  type ServerDetail,
} from '../../core/hcs/index.js';
import type { HcsCaller } from './caller.js';

export interface ListServersQuery {
  name?: string;
  status?: string;
  tags?: string;
  limit?: number;
  /** ECS page number (from 1), not an item offset. */
  offset?: number;
}

const ECS_MAX_PAGE = 1000;

export const ecsCalls = {
  createServers(this: HcsCaller, body: CreateServersBody, clientToken?: string): Promise<CreateServersResponse> {
    return this.call(ECS.createServers, {}, { body, headers: clientToken ? { 'x-client-token': clientToken } : {} });
  },

  showJob(this: HcsCaller, jobId: string): Promise<Job> {
    return this.call(ECS.showJob, { job_id: jobId });
  },

  async showServer(this: HcsCaller, id: string): Promise<ServerDetail | undefined> {
    return (await this.find<{ server: ServerDetail }>(ECS.showServer, { server_id: id }))?.server;
  },

  /**
   * List servers. Without limit/offset every page is fetched. Note: ECS `name`
   * is a fuzzy match ("." matches any character, substrings match): compare
   * names exactly on the result when you need one server.
   */
  async listServers(this: HcsCaller, q: ListServersQuery = {}): Promise<ServerDetail[]> {
    const base = { name: q.name, status: q.status, tags: q.tags };
    if (q.limit !== undefined || q.offset !== undefined) {
      return (await this.call<{ count: number; servers: ServerDetail[] }>(ECS.listServers, {}, { query: queryString({ ...base, limit: q.limit, offset: q.offset }) })).servers;
    }
    const out: ServerDetail[] = [];
    const limit = this.pageSize(ECS_MAX_PAGE);
    for (let page = 1; ; page++) {
      const r = await this.call<{ count: number; servers: ServerDetail[] }>(ECS.listServers, {}, { query: queryString({ ...base, limit, offset: page }) });
      out.push(...r.servers);
      if (r.servers.length < limit || out.length >= r.count) return out;
    }
  },

  deleteServers(this: HcsCaller, ids: string[], opts: { deleteVolume?: boolean; deletePublicIp?: boolean } = {}): Promise<JobResponse> {
    return this.call(ECS.deleteServers, {}, { body: { servers: ids.map((id) => ({ id })), delete_volume: opts.deleteVolume ?? false, delete_publicip: opts.deletePublicIp ?? false } });
  },

  attachVolume(this: HcsCaller, serverId: string, volumeId: string, device?: string): Promise<JobResponse> {
    return this.call(ECS.attachVolume, { server_id: serverId }, { body: { volumeAttachment: { volumeId, ...(device ? { device } : {}) } } });
  },

  detachVolume(this: HcsCaller, serverId: string, volumeId: string): Promise<JobResponse> {
    return this.call(ECS.detachVolume, { server_id: serverId, volume_id: volumeId });
  },

  /**
   * Flavors (sold in `az` when given). `os_extra_specs["cond:operation:az"]` holds the sell
   * status per AZ ("az1(normal),az2(sellout)"); `cond:operation:status` the status in `az`.
   */
  async listFlavors(this: HcsCaller, az?: string): Promise<Flavor[]> {
    return (await this.call<{ flavors: Flavor[] }>(ECS.listFlavors, {}, { query: queryString({ availability_zone: az }) })).flavors;
  },

  /** NovaListAvailabilityZones: the zones and whether each is available (https://support.huaweicloud.com/api-ecs/ecs_03_1801.html). */
  async listAvailabilityZones(this: HcsCaller): Promise<AvailabilityZone[]> {
    return (await this.call<{ availabilityZoneInfo: AvailabilityZone[] }>(ECS.listAvailabilityZones, {})).availabilityZoneInfo;
  },

  /** os-stop (SOFT by default): ACTIVE -> SHUTOFF through a job. */
  stopServers(this: HcsCaller, ids: string[], type: 'SOFT' | 'HARD' = 'SOFT'): Promise<JobResponse> {
    return this.call(ECS.batchStopServers, {}, { body: { 'os-stop': { servers: ids.map((id) => ({ id })), type } } });
  },

  /** os-start: SHUTOFF -> ACTIVE through a job. */
  startServers(this: HcsCaller, ids: string[]): Promise<JobResponse> {
    return this.call(ECS.batchStartServers, {}, { body: { 'os-start': { servers: ids.map((id) => ({ id })) } } });
  },

  /** reboot: REBOOT / HARD_REBOOT -> ACTIVE through a job. */
  rebootServers(this: HcsCaller, ids: string[], type: 'SOFT' | 'HARD' = 'SOFT'): Promise<JobResponse> {
    return this.call(ECS.batchRebootServers, {}, { body: { reboot: { servers: ids.map((id) => ({ id })), type } } });
  },

  /**
   * DeleteServerMetadata (ecs_02_0702): remove one metadata key of a server; synchronous, 204 with no
   * body. An unknown server is HcsApiError 404 Ecs.0114, as ShowServer. What a key the server does not
   * have answers is not documented: mock-hcs answers 204 and changes nothing (the native Nova call
   * answers 404), so a caller that only wants the key gone should take both as success.
   */
  async deleteServerMetadata(this: HcsCaller, serverId: string, key: string): Promise<DeleteServerMetadataResponse> {
    const params: DeleteServerMetadataRequest = { server_id: serverId, key };
    await this.call(ECS.deleteServerMetadata, params);
  },

  /** Disks attached to a server (system disk included); undefined when the server does not exist. */
  async listServerBlockDevices(this: HcsCaller, serverId: string): Promise<BlockDevice[] | undefined> {
    return (await this.find<BlockDeviceList>(ECS.listServerBlockDevices, { server_id: serverId }))?.volumeAttachments;
  },

  /** One attached disk; undefined when the server does not exist or the volume is not attached to it. */
  async showServerBlockDevice(this: HcsCaller, serverId: string, volumeId: string): Promise<BlockDevice | undefined> {
    return (await this.find<{ volumeAttachment: BlockDevice }>(ECS.showServerBlockDevice, { server_id: serverId, volume_id: volumeId }))?.volumeAttachment;
  },
};

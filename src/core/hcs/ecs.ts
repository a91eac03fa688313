/**
 * ECS (Elastic Cloud Server): servers, their actions, disks and NICs, flavors,
 * availability zones and the job API (ECS and EVS jobs alike). Paths as in the
 * ECS API reference and @huaweicloud/huaweicloud-sdk-ecs EcsClient; field names
 * exactly as on the wire (snake_case, the OS-EXT-* extension keys). Only the
 * fields a client reads are required; the cloud sends more.
 */
import { defineOperations } from './operation.js';

export const ECS = defineOperations('ecs', {
  createServers: { sdk: 'CreateServers', method: 'POST', path: '/v1.1/{project_id}/cloudservers', aliases: ['/v1/{project_id}/cloudservers'], job: true },
  showServer: { sdk: 'ShowServer', method: 'GET', path: '/v1/{project_id}/cloudservers/{server_id}' },
  listServers: { sdk: 'ListServersDetails', method: 'GET', path: '/v1/{project_id}/cloudservers/detail' },
  listCloudServers: { sdk: 'ListCloudServers', method: 'GET', path: '/v1.1/{project_id}/cloudservers/detail' },
  deleteServers: { sdk: 'DeleteServers', method: 'POST', path: '/v1/{project_id}/cloudservers/delete', job: true },
  attachVolume: { sdk: 'AttachServerVolume', method: 'POST', path: '/v1/{project_id}/cloudservers/{server_id}/attachvolume', job: true },
  detachVolume: { sdk: 'DetachServerVolume', method: 'DELETE', path: '/v1/{project_id}/cloudservers/{server_id}/detachvolume/{volume_id}', job: true },
  showJob: { sdk: 'ShowJob', method: 'GET', path: '/v1/{project_id}/jobs/{job_id}' },
  listFlavors: { sdk: 'ListFlavors', method: 'GET', path: '/v1/{project_id}/cloudservers/flavors' },
  batchStopServers: { sdk: 'BatchStopServers', method: 'POST', path: '/v1/{project_id}/cloudservers/action', bodyKey: 'os-stop', job: true },
  batchStartServers: { sdk: 'BatchStartServers', method: 'POST', path: '/v1/{project_id}/cloudservers/action', bodyKey: 'os-start', job: true },
  batchRebootServers: { sdk: 'BatchRebootServers', method: 'POST', path: '/v1/{project_id}/cloudservers/action', bodyKey: 'reboot', job: true },
  listServerBlockDevices: { sdk: 'ListServerBlockDevices', method: 'GET', path: '/v1/{project_id}/cloudservers/{server_id}/block_device' },
  showServerBlockDevice: { sdk: 'ShowServerBlockDevice', method: 'GET', path: '/v1/{project_id}/cloudservers/{server_id}/block_device/{volume_id}' },
  showServerTags: { sdk: 'ShowServerTags', method: 'GET', path: '/v1/{project_id}/cloudservers/{server_id}/tags' },
  serverTagsAction: { sdk: 'BatchCreateServerTags/BatchDeleteServerTags', method: 'POST', path: '/v1/{project_id}/cloudservers/{server_id}/tags/action' },
  updateServerMetadata: { sdk: 'UpdateServerMetadata', method: 'POST', path: '/v1/{project_id}/cloudservers/{server_id}/metadata' },
  /**
   * "Deleting Specified ECS Metadata" (ecs_02_0702, https://support.huaweicloud.com/intl/en-us/api-ecs/ecs_02_0702.html);
   * huaweicloud-sdk-go-v3 ecs/v2 DeleteServerMetadata (GenReqDefForDeleteServerMetadata: DELETE, path params
   * key and server_id), huaweicloudsdkecs DeleteServerMetadataRequest(key, server_id). Synchronous, no body
   * either way: 204 (see DeleteServerMetadataResponse).
   */
  deleteServerMetadata: { sdk: 'DeleteServerMetadata', method: 'DELETE', path: '/v1/{project_id}/cloudservers/{server_id}/metadata/{key}' },
  updateServerBlockDevice: { sdk: 'UpdateServerBlockDevice', method: 'PUT', path: '/v1/{project_id}/cloudservers/{server_id}/block_device/{volume_id}' },
  listServerInterfaces: { sdk: 'ListServerInterfaces', method: 'GET', path: '/v1/{project_id}/cloudservers/{server_id}/os-interface' },
  listAvailabilityZones: { sdk: 'NovaListAvailabilityZones', method: 'GET', path: '/v2.1/{project_id}/os-availability-zone' },
});

// ---------------------------------------------------------------- jobs (ECS and EVS)

export type JobStatus = 'INIT' | 'RUNNING' | 'SUCCESS' | 'FAIL';

/** Fields every ECS/EVS job and sub-job carries. */
interface JobFields {
  status: JobStatus;
  job_id: string;
  job_type: string;
  begin_time?: string;
  end_time?: string;
  error_code?: string | null;
  fail_reason?: string | null;
}

export interface SubJob extends JobFields {
  entities: { server_id?: string; volume_id?: string; nic_id?: string; errorcode_message?: string };
}

/** ShowJob (GET /v1/{project_id}/jobs/{job_id}). */
export interface Job extends JobFields {
  entities: {
    sub_jobs_total?: number;
    sub_jobs?: SubJob[];
    server_id?: string;
    volume_id?: string;
    volume_ids?: string[];
    [k: string]: unknown;
  };
}

/** What a call that starts a job answers. */
export interface JobResponse {
  job_id: string;
}

// ---------------------------------------------------------------- servers

export interface ServerAddress {
  version: string;
  addr: string;
  'OS-EXT-IPS:type'?: string;
  'OS-EXT-IPS-MAC:mac_addr'?: string;
  'OS-EXT-IPS:port_id'?: string;
  primary?: boolean;
}

export interface ServerVolumeAttachment {
  id: string;
  device?: string;
  bootIndex?: string;
  delete_on_termination?: string;
}

export type ServerStatus = 'BUILD' | 'ACTIVE' | 'SHUTOFF' | 'ERROR' | 'DELETED' | 'REBOOT' | 'HARD_REBOOT' | 'REBUILD' | 'MIGRATING' | 'RESIZE' | 'VERIFY_RESIZE' | 'REVERT_RESIZE';

/** ShowServer's `server`, ListServersDetails' `servers[]`. */
export interface ServerDetail {
  id: string;
  name: string;
  status: ServerStatus | string;
  addresses: Record<string, ServerAddress[]>;
  flavor: { id: string; name: string; vcpus: string; ram: string; disk?: string; gpus?: unknown[]; asic_accelerators?: unknown[] };
  image: { id: string };
  'os-extended-volumes:volumes_attached': ServerVolumeAttachment[];
  'OS-EXT-AZ:availability_zone': string;
  'OS-EXT-STS:vm_state': string;
  'OS-EXT-STS:task_state': string | null;
  'OS-EXT-STS:power_state'?: number;
  metadata: Record<string, string>;
  tags?: string[];
  created: string;
  updated: string;
  tenant_id?: string;
  fault?: { code?: number; message?: string; details?: string; created?: string };
  [k: string]: unknown;
}

export interface ServerNic {
  subnet_id: string;
  ip_address?: string;
}

/** CreateServers request body. */
export interface CreateServersBody {
  server: {
    name: string;
    imageRef: string;
    flavorRef: string;
    availability_zone?: string;
    vpcid: string;
    nics: ServerNic[];
    root_volume: { volumetype: string; size?: number };
    data_volumes?: { volumetype: string; size: number; delete_on_termination?: boolean; metadata?: Record<string, string> }[];
    /** base64-encoded cloud-init data. */
    user_data?: string;
    metadata?: Record<string, string>;
    server_tags?: { key: string; value: string }[];
    count?: number;
    [k: string]: unknown;
  };
  dry_run?: boolean;
}

export interface CreateServersResponse {
  job_id: string;
  serverIds: string[];
}

/** DeleteServers request body. */
export interface DeleteServersBody {
  servers: { id: string }[];
  delete_volume?: boolean;
  delete_publicip?: boolean;
}

/** AttachServerVolume request body. */
export interface AttachServerVolumeBody {
  volumeAttachment: { volumeId: string; device?: string };
}

/** The three actions of POST .../cloudservers/action: one key each (ECS.batchStopServers' bodyKey, ...). */
export type ServerActionBody =
  | { 'os-stop': { servers: { id: string }[]; type?: 'SOFT' | 'HARD' } }
  | { 'os-start': { servers: { id: string }[] } }
  | { reboot: { servers: { id: string }[]; type: 'SOFT' | 'HARD' } };

/** ECS block device (ListServerBlockDevices' `volumeAttachments[]`, ShowServerBlockDevice's `volumeAttachment`). */
export interface BlockDevice {
  id: string;
  volumeId: string;
  serverId: string;
  device: string;
  size?: number;
  bootIndex?: number;
  bus?: string;
  pciAddress?: string;
}

export interface BlockDeviceList {
  attachableQuantity?: { free_scsi?: number; free_blk?: number; free_disk?: number };
  volumeAttachments: BlockDevice[];
}

/**
 * DeleteServerMetadata's request: the server and the metadata key, both in the path (the key
 * URI-encoded); no body. The SDKs' DeleteServerMetadataRequest has exactly these two fields.
 */
export interface DeleteServerMetadataRequest {
  server_id: string;
  key: string;
}

/**
 * DeleteServerMetadata's answer: none. ecs_02_0702 gives no response body and points to the general
 * returned values (ecs_07_0001: 204 "The task is successfully delivered"); the SDKs'
 * DeleteServerMetadataResponse has no field (Go: only HttpStatusCode), and the same operation on the
 * native Nova path answers 204 No Content. mock-hcs answers 204 with an empty body.
 */
export type DeleteServerMetadataResponse = void;

/** ShowServerTags' `tags[]` and the body of BatchCreateServerTags / BatchDeleteServerTags. */
export interface ServerTag {
  key: string;
  value: string;
}

// ---------------------------------------------------------------- flavors, availability zones

export interface Flavor {
  id: string;
  name: string;
  vcpus: string;
  ram: number;
  disk?: string;
  os_extra_specs?: Record<string, string>;
  [k: string]: unknown;
}

/** One entry of NovaListAvailabilityZones' `availabilityZoneInfo` (https://support.huaweicloud.com/api-ecs/ecs_03_1801.html). */
export interface AvailabilityZone {
  zoneName: string;
  zoneState: { available: boolean };
  hosts?: null;
}

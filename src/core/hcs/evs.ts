/**
 * EVS (Elastic Volume Service): cloud volumes. Paths as in the EVS API
 * reference (v2 / v2.1 "cloudvolumes") and the SDKs' evs/v2 clients; a
 * volume's jobs are read with ECS.showJob (the same /v1/{project_id}/jobs/{job_id}).
 */
import { defineOperations } from './operation.js';

export const EVS = defineOperations('evs', {
  createVolume: { sdk: 'CreateVolume', method: 'POST', path: '/v2.1/{project_id}/cloudvolumes', aliases: ['/v2/{project_id}/cloudvolumes'], job: true },
  showVolume: { sdk: 'ShowVolume', method: 'GET', path: '/v2/{project_id}/cloudvolumes/{volume_id}' },
  listVolumes: { sdk: 'ListVolumes', method: 'GET', path: '/v2/{project_id}/cloudvolumes/detail' },
  updateVolume: { sdk: 'UpdateVolume', method: 'PUT', path: '/v2/{project_id}/cloudvolumes/{volume_id}' },
  deleteVolume: { sdk: 'DeleteVolume', method: 'DELETE', path: '/v2/{project_id}/cloudvolumes/{volume_id}', job: true },
  /** "Expanding Capacity of an EVS Disk" (evs_04_2004); huaweicloud-sdk-go-v3 evs/v2 ResizeVolume. */
  resizeVolume: { sdk: 'ResizeVolume', method: 'POST', path: '/v2.1/{project_id}/cloudvolumes/{volume_id}/action', job: true },
});

/**
 * The statuses a disk can have, as the EVS API reference lists them ("EVS Disk
 * Status", https://support.huaweicloud.com/intl/en-us/api-evs/evs_04_0040.html);
 * mock-hcs's data file accepts exactly these.
 */
export const VOLUME_STATUSES = [
  'creating',
  'available',
  'in-use',
  'error',
  'attaching',
  'detaching',
  'restoring-backup',
  'backing-up',
  'error_restoring',
  'uploading',
  'downloading',
  'extending',
  'error_extending',
  'deleting',
  'error_deleting',
  'rollbacking',
  'error_rollbacking',
  'awaiting-transfer',
] as const;

export type VolumeStatus = (typeof VOLUME_STATUSES)[number];

export interface VolumeAttachment {
  server_id: string;
  attachment_id: string;
  attached_at: string;
  device: string;
  volume_id: string;
  id?: string;
  host_name?: string | null;
}

/** ShowVolume's `volume`, ListVolumes' `volumes[]`, UpdateVolume's whole answer. */
export interface Volume {
  id: string;
  name: string;
  size: number;
  /** One of VOLUME_STATUSES; a client keeps any other text too. */
  status: VolumeStatus | (string & {});
  volume_type: string;
  availability_zone: string;
  attachments: VolumeAttachment[];
  metadata: Record<string, string>;
  created_at: string;
  updated_at?: string;
  multiattach: boolean;
  /** "true" / "false" as a string, as EVS returns it. */
  bootable: string;
  [k: string]: unknown;
}

/** CreateVolume request body. */
export interface CreateVolumeBody {
  volume: {
    name?: string;
    size: number;
    volume_type: string;
    availability_zone: string;
    metadata?: Record<string, string>;
    count?: number;
    multiattach?: boolean;
    description?: string;
  };
  bss_param?: Record<string, unknown>;
}

export interface CreateVolumeResponse {
  job_id: string;
  volume_ids: string[];
}

/** UpdateVolume request body: name, description, metadata keys (null removes a key). */
export interface UpdateVolumeBody {
  volume: { name?: string; description?: string; metadata?: Record<string, string | null> };
}

/**
 * ResizeVolume request body: the new size in GB, larger than the disk's and at
 * most 32768 (a data disk) or 1024 (a system disk); `bssParam` only matters for
 * yearly/monthly disks (evs_04_2004; the SDKs' ResizeVolumeRequestBody, OsExtend).
 */
export interface ResizeVolumeBody {
  'os-extend': { new_size: number };
  bssParam?: { isAutoPay?: 'true' | 'false' };
}

/** ResizeVolume's answer: the extendVolume job of a pay-per-use disk (a yearly/monthly one answers order_id instead). */
export interface ResizeVolumeResponse {
  job_id: string;
  order_id?: string;
}

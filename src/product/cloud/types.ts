/**
 * Wire types of the HCS APIs the provider uses, with the field names exactly
 * as they appear on the wire (snake_case and the OS-EXT-* extension keys).
 * Only the fields the provider reads are required; the clouds send more.
 */

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

export interface ServerDetail {
  id: string;
  name: string;
  status: ServerStatus | string;
  addresses: Record<string, ServerAddress[]>;
  flavor: { id: string; name: string; vcpus: string; ram: string; disk?: string };
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

export type VolumeStatus = 'creating' | 'available' | 'attaching' | 'in-use' | 'detaching' | 'deleting' | 'error' | 'error_deleting' | string;

export interface VolumeAttachment {
  server_id: string;
  attachment_id: string;
  attached_at: string;
  device: string;
  volume_id: string;
  id?: string;
  host_name?: string | null;
}

export interface Volume {
  id: string;
  name: string;
  size: number;
  status: VolumeStatus;
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

export interface Subnet {
  id: string;
  name: string;
  cidr: string;
  gateway_ip: string;
  vpc_id: string;
  neutron_subnet_id: string;
  neutron_network_id: string;
  availability_zone?: string;
  status: string;
  [k: string]: unknown;
}

export interface Image {
  id: string;
  name: string;
  status: string;
  min_disk: number;
  __os_version?: string;
  /** Kubernetes version carried by the image (mock-hcs extension, see mock-hcs/README.md). */
  __support_kubernetes_version?: string;
  [k: string]: unknown;
}

export interface Flavor {
  id: string;
  name: string;
  vcpus: string;
  ram: number;
  disk?: string;
  os_extra_specs?: Record<string, string>;
  [k: string]: unknown;
}

export interface ErrorBody {
  error?: { code?: string; message?: string };
  error_code?: string;
  error_msg?: string;
  code?: string;
  message?: string;
}

/** ECS block device (GET .../cloudservers/{id}/block_device). */
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

/** VPC port (Neutron shape). */
export interface Port {
  id: string;
  name: string;
  network_id: string;
  admin_state_up: boolean;
  mac_address: string;
  fixed_ips: { subnet_id: string; ip_address: string }[];
  device_id: string;
  /** "compute:<az>" for a server NIC, "" for an unbound port / private IP. */
  device_owner: string;
  tenant_id?: string;
  status: 'ACTIVE' | 'BUILD' | 'DOWN' | string;
  security_groups?: string[];
  [k: string]: unknown;
}

export interface CreatePortBody {
  port: {
    network_id: string;
    name?: string;
    fixed_ips?: { subnet_id?: string; ip_address?: string }[];
    device_owner?: string;
    security_groups?: string[];
    admin_state_up?: boolean;
  };
}

export interface ListPortsQuery {
  name?: string;
  networkId?: string;
  deviceId?: string;
  deviceOwner?: string;
  status?: string;
  /** Exact IP address of the port's fixed IP. */
  ipAddress?: string;
}

/** VPC private IP (its id is a port id). */
export interface PrivateIp {
  id: string;
  status: 'ACTIVE' | 'DOWN' | string;
  subnet_id: string;
  tenant_id?: string;
  device_owner: string;
  ip_address: string;
}

/** IAM project (Keystone ProjectResult). */
export interface Project {
  id: string;
  name: string;
  domain_id: string;
  parent_id?: string;
  enabled: boolean;
  is_domain?: boolean;
  description?: string;
  [k: string]: unknown;
}

/** A Keystone token (POST /v3/auth/tokens): the X-Subject-Token header and the body. */
export interface IssuedToken {
  token: string;
  expiresAt: string;
  projectId?: string;
  body: {
    token: {
      expires_at: string;
      issued_at: string;
      methods: string[];
      user: { id: string; name: string; domain: { id: string; name: string } };
      project?: { id: string; name: string; domain: { id: string; name: string } };
      domain?: { id: string; name: string };
      catalog?: unknown[];
      [k: string]: unknown;
    };
  };
}

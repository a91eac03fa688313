/** Wire renderings of the fake cloud's records (snake_case, as the real APIs return them). */
import { rfc3339 } from '../../src/core/index.js';
import type { BlockDevice, Flavor, Image, Job, Port, PrivateIp, ServerAddress, ServerDetail, SubJob, Subnet, Volume } from '../../src/core/hcs/index.js';
import type { CloudEngine } from './cloud.js';
import type { FlavorAzStatus, ImageConfig, SubnetConfig, FlavorConfig } from './config.js';
import type { PortView } from './network.js';
import type { JobRec, ServerRec, SubJobRec, VolumeRec } from './state.js';

/** Job times as ECS returns them: RFC 3339 with milliseconds. */
function jobTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

const VM_STATE: Record<string, string> = { BUILD: 'building', ACTIVE: 'active', SHUTOFF: 'stopped', REBOOT: 'active', HARD_REBOOT: 'active', ERROR: 'error' };
const POWER_STATE: Record<string, number> = { BUILD: 0, ACTIVE: 1, SHUTOFF: 4, REBOOT: 1, HARD_REBOOT: 1, ERROR: 0 };

export function renderServer(e: CloudEngine, s: ServerRec): ServerDetail {
  const flavor = e.flavors.get(s.flavorId);
  const image = e.images.get(s.imageId);
  const addresses: Record<string, ServerAddress[]> = {};
  s.nics.forEach((n, i) => {
    (addresses[s.vpcId] ??= []).push({
      version: '4',
      addr: n.ip,
      'OS-EXT-IPS:type': 'fixed',
      'OS-EXT-IPS-MAC:mac_addr': n.mac,
      'OS-EXT-IPS:port_id': n.portId,
      primary: i === 0,
    });
  });
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    addresses,
    flavor: {
      id: s.flavorId,
      name: flavor?.name ?? s.flavorId,
      vcpus: String(flavor?.vcpus ?? 0),
      ram: String(flavor?.ramMiB ?? 0),
      disk: '0',
      gpus: [],
      asic_accelerators: [],
    },
    image: { id: s.imageId },
    'os-extended-volumes:volumes_attached': s.volumes.map((v) => ({
      id: v.volumeId,
      device: v.device,
      delete_on_termination: String(v.deleteOnTermination || v.bootIndex === 0),
      // ECS: "0" is the system disk, any other value a data disk (ECS API "bootIndex"); data disks
      // carry Nova's non-bootable -1, as GET .../block_device does (renderBlockDevice).
      bootIndex: String(v.bootIndex ?? -1),
    })),
    'OS-EXT-AZ:availability_zone': s.az,
    'OS-EXT-STS:vm_state': VM_STATE[s.status] ?? 'error',
    'OS-EXT-STS:task_state': s.taskState,
    'OS-EXT-STS:power_state': POWER_STATE[s.status] ?? 0,
    'OS-EXT-SRV-ATTR:hostname': s.name,
    'OS-EXT-SRV-ATTR:instance_name': s.instanceName,
    'OS-EXT-SRV-ATTR:host': `hcs-host-${s.hostId.slice(0, 6)}`,
    'OS-EXT-SRV-ATTR:hypervisor_hostname': `hcs-host-${s.hostId.slice(0, 6)}`,
    'OS-EXT-SRV-ATTR:root_device_name': '/dev/vda',
    'OS-EXT-SRV-ATTR:reservation_id': `r-${s.createJob.slice(0, 8)}`,
    'OS-EXT-SRV-ATTR:launch_index': launchIndex(s),
    'OS-EXT-SRV-ATTR:kernel_id': '',
    'OS-EXT-SRV-ATTR:ramdisk_id': '',
    // user_data as the client sent it (base64); ECS shows it to the owner (huaweicloud-sdk-go-v3 ServerDetail.OSEXTSRVATTRuserData).
    'OS-EXT-SRV-ATTR:user_data': s.userData ?? '',
    'OS-SRV-USG:launched_at': s.launchedAt !== undefined ? new Date(s.launchedAt).toISOString().replace('Z', '') : '',
    'OS-SRV-USG:terminated_at': '',
    'OS-DCF:diskConfig': 'MANUAL',
    metadata: {
      ...s.metadata,
      image_name: image?.name ?? '',
      os_type: 'Linux',
      vpc_id: s.vpcId,
      charging_mode: '0',
      'metering.image_id': s.imageId,
      'metering.imagetype': 'private',
    },
    tags: s.tags.map((t) => `${t.key}=${t.value}`),
    sys_tags: [],
    created: rfc3339(s.created),
    updated: rfc3339(s.updated),
    tenant_id: s.projectId,
    user_id: '',
    hostId: s.hostId,
    host_status: 'UP',
    key_name: null,
    security_groups: [{ name: 'default', id: '' }],
    accessIPv4: '',
    accessIPv6: '',
    progress: s.status === 'BUILD' ? 0 : 100,
    locked: false,
    config_drive: '',
    description: '',
    enterprise_project_id: '0',
    'os:scheduler_hints': {},
    // Nova `fault`: why the server is ERROR (a failed build, delete or reboot).
    ...(s.fault && s.status === 'ERROR' ? { fault: { code: s.fault.code, message: s.fault.message, ...(s.fault.details ? { details: s.fault.details } : {}), created: rfc3339(s.fault.created) } } : {}),
  };
}

/** Position of a server among those its create call made (names name-0001, name-0002, ...: 0-based), else 0. */
function launchIndex(s: ServerRec): number {
  const m = /-(\d{4})$/.exec(s.name);
  return m ? Math.max(0, Number(m[1]) - 1) : 0;
}

/**
 * A server as ECS ListCloudServers (GET /v1.1/{project_id}/cloudservers/detail)
 * returns it: the huaweicloud-sdk-go-v3 ecs/v2 CloudServer model (plain
 * vm_state / task_state / power_state keys, integer flavor sizes, boolean
 * delete_on_termination), built from the same record as renderServer.
 */
export function renderCloudServer(e: CloudEngine, s: ServerRec): Record<string, unknown> {
  const flavor = e.flavors.get(s.flavorId);
  const addresses: Record<string, unknown[]> = {};
  s.nics.forEach((n, i) => {
    (addresses[s.vpcId] ??= []).push({ version: '4', addr: n.ip, 'OS-EXT-IPS:type': 'fixed', 'OS-EXT-IPS-MAC:mac_addr': n.mac, 'OS-EXT-IPS:port_id': n.portId, primary: i === 0 });
  });
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    tenant_id: s.projectId,
    user_id: '',
    availability_zone: s.az,
    vm_state: VM_STATE[s.status] ?? 'error',
    task_state: s.taskState ?? '',
    power_state: POWER_STATE[s.status] ?? 0,
    created: rfc3339(s.created),
    updated: rfc3339(s.updated),
    ...(s.launchedAt !== undefined ? { launched_at: rfc3339(s.launchedAt) } : {}),
    in_recycle_bin: false,
    spod_id: '',
    description: '',
    key_name: '',
    locked: false,
    root_device_name: '/dev/vda',
    tenancy: 'default',
    enterprise_project_id: '0',
    metadata: { ...s.metadata, vpc_id: s.vpcId, charging_mode: '0', 'metering.image_id': s.imageId },
    tags: s.tags.map((t) => `${t.key}=${t.value}`),
    addresses,
    security_groups: [{ name: 'default', id: '' }],
    volumes_attached: s.volumes.map((v) => ({
      id: v.volumeId,
      delete_on_termination: v.deleteOnTermination || v.bootIndex === 0,
      device: v.device,
      bootIndex: String(v.bootIndex ?? -1),
      size: e.volumeRec(s.projectId, v.volumeId)?.size ?? 0,
    })),
    image: { id: s.imageId },
    flavor: { id: s.flavorId, name: flavor?.name ?? s.flavorId, vcpus: flavor?.vcpus ?? 0, ram: flavor?.ramMiB ?? 0, disk: 0, gpus: [], asic_accelerators: [] },
    fault: s.fault && s.status === 'ERROR' ? { code: s.fault.code, message: s.fault.message, ...(s.fault.details ? { details: s.fault.details } : {}), created: rfc3339(s.fault.created) } : null,
  };
}

/** One entry of GET .../cloudservers/{id}/block_device (os-volume_attachments plus the ECS extras). */
export function renderBlockDevice(e: CloudEngine, s: ServerRec, v: ServerRec['volumes'][number], index: number): BlockDevice {
  return {
    id: v.volumeId,
    volumeId: v.volumeId,
    serverId: s.id,
    device: v.device,
    size: e.volumeRec(s.projectId, v.volumeId)?.size ?? 0,
    bootIndex: v.bootIndex ?? -1,
    bus: 'virtio',
    pciAddress: `0000:02:${(index + 1).toString(16).padStart(2, '0')}.0`,
  };
}

export function renderSubJob(j: SubJobRec): SubJob {
  return {
    status: j.status,
    entities: { ...j.entities },
    job_id: j.job_id,
    job_type: j.job_type,
    begin_time: jobTime(j.begin_time),
    end_time: jobTime(j.end_time) ?? '',
    ...(j.error_code ? { error_code: j.error_code, fail_reason: j.fail_reason } : {}),
  };
}

export function renderJob(j: JobRec, now: number): Job {
  // A job is INIT only until the cloud picked it up (any later instant): then RUNNING.
  const status = j.status === 'INIT' && now > j.begin_time ? 'RUNNING' : j.status;
  const entities: Record<string, unknown> = { ...j.entities };
  if (j.sub_jobs) entities.sub_jobs = j.sub_jobs.map(renderSubJob);
  return {
    status,
    entities,
    job_id: j.job_id,
    job_type: j.job_type,
    begin_time: jobTime(j.begin_time),
    end_time: jobTime(j.end_time) ?? '',
    error_code: j.error_code ?? null,
    fail_reason: j.fail_reason ?? null,
  };
}

export function renderVolume(v: VolumeRec, endpoint = ''): Volume {
  const attachments = v.attachment
    ? [
        {
          server_id: v.attachment.serverId,
          attachment_id: v.attachment.attachmentId,
          attached_at: new Date(v.attachment.attachedAt).toISOString().replace('Z', '000'),
          host_name: null,
          volume_id: v.id,
          device: v.attachment.device,
          id: v.id,
        },
      ]
    : [];
  return {
    id: v.id,
    name: v.name,
    size: v.size,
    status: v.status,
    volume_type: v.volumeType,
    availability_zone: v.az,
    attachments,
    metadata: { ...v.metadata },
    created_at: new Date(v.createdAt).toISOString().replace('Z', '000'),
    updated_at: new Date(v.updatedAt).toISOString().replace('Z', '000'),
    multiattach: false,
    shareable: 'false',
    bootable: String(v.bootable),
    encrypted: false,
    description: v.description ?? '',
    'os-vol-tenant-attr:tenant_id': v.projectId,
    'os-vol-host-attr:host': '',
    replication_status: 'disabled',
    consistencygroup_id: null,
    source_volid: null,
    snapshot_id: null,
    user_id: '',
    links: [{ href: `${endpoint}/v2/${v.projectId}/os-vendor-volumes/${v.id}`, rel: 'self' }],
    ...(v.imageId ? { volume_image_metadata: { image_id: v.imageId } } : {}),
  };
}

/**
 * A volume record as it was when its JSON text was made: its own fields,
 * and copies of the two plain objects in it that are changed in place and
 * that renderVolume reads (the attachment, the metadata). Records are changed
 * in place (status, attachment, metadata, times, ...), so a remembered text
 * is used only while the record still equals its snapshot (one level into
 * `attachment` and `metadata`, the metadata's key order included, as it is
 * JSON's). Fields renderVolume does not read (`fs`, `jobs`) are compared by
 * reference, so writing a file never re-renders.
 */
interface VolumeJsonEntry {
  json: string;
  snapshot: Fields;
  attachment: Fields | undefined;
  meta: Fields;
}

/** An object's own keys in order, and their values. */
interface Fields {
  keys: string[];
  values: Record<string, unknown>;
}

function fieldsOf(o: object): Fields {
  return { keys: Object.keys(o), values: { ...o } };
}

/** `o` has exactly the keys of `f`, in the same order, with identical (===) values. */
function sameFields(f: Fields, o: object): boolean {
  const rec = o as Record<string, unknown>;
  let i = 0;
  for (const k in rec) {
    if (f.keys[i] !== k || f.values[k] !== rec[k]) return false;
    i++;
  }
  return i === f.keys.length;
}

const volumeJsonCache = new WeakMap<VolumeRec, VolumeJsonEntry>();

function sameVolumeInputs(c: VolumeJsonEntry, v: VolumeRec): boolean {
  if (!sameFields(c.snapshot, v) || !sameFields(c.meta, v.metadata)) return false;
  return v.attachment === undefined ? c.attachment === undefined : c.attachment !== undefined && sameFields(c.attachment, v.attachment);
}

/**
 * `JSON.stringify(renderVolume(v))`, remembered per record and made again
 * whenever anything renderVolume reads of the record changed (a list of N
 * volumes otherwise renders and serialises all N on every call).
 */
export function volumeJson(v: VolumeRec): string {
  const cached = volumeJsonCache.get(v);
  if (cached && sameVolumeInputs(cached, v)) return cached.json;
  const json = JSON.stringify(renderVolume(v));
  volumeJsonCache.set(v, {
    json,
    snapshot: fieldsOf(v),
    attachment: v.attachment && fieldsOf(v.attachment),
    meta: fieldsOf(v.metadata),
  });
  return json;
}

/**
 * A deep record of plain data as it was: an object's own keys in order with
 * their values, an array's elements; primitives and strings as themselves
 * (a long string such as user_data compares by reference first).
 */
type Snap = { keys: string[]; vals: Snap[] } | { items: Snap[] } | { prim: unknown };

function snap(v: unknown): Snap {
  if (typeof v !== 'object' || v === null) return { prim: v };
  if (Array.isArray(v)) return { items: v.map(snap) };
  const keys: string[] = [];
  const vals: Snap[] = [];
  for (const k in v as Record<string, unknown>) {
    keys.push(k);
    vals.push(snap((v as Record<string, unknown>)[k]));
  }
  return { keys, vals };
}

/** `v` is still what `s` recorded: same keys in the same order, same values, all the way down. */
function unchanged(s: Snap, v: unknown): boolean {
  if ('prim' in s) return s.prim === v;
  if (typeof v !== 'object' || v === null) return false;
  if ('items' in s) {
    if (!Array.isArray(v) || v.length !== s.items.length) return false;
    for (let i = 0; i < v.length; i++) if (!unchanged(s.items[i]!, v[i])) return false;
    return true;
  }
  if (Array.isArray(v)) return false;
  let i = 0;
  for (const k in v as Record<string, unknown>) {
    if (s.keys[i] !== k || !unchanged(s.vals[i]!, (v as Record<string, unknown>)[k])) return false;
    i++;
  }
  return i === s.keys.length;
}

/** What renderServer reads: the record (nested parts included), its flavor and its image. */
function serverInputs(e: CloudEngine, s: ServerRec): unknown[] {
  return [s, e.flavors.get(s.flavorId), e.images.get(s.imageId)];
}

const serverJsonCache = new WeakMap<ServerRec, { json: string; inputs: Snap }>();

/**
 * `JSON.stringify(renderServer(e, s))`, remembered per record while nothing
 * renderServer reads has changed (checked all the way down, so an edit in
 * place of a NIC, a volume, the metadata or the tags is seen). A provider
 * reads each of its servers on most reconciles: 7.7 KB of JSON each, most
 * of it the user data, which changes once in a server's life.
 */
export function serverJson(e: CloudEngine, s: ServerRec): string {
  const inputs = serverInputs(e, s);
  const cached = serverJsonCache.get(s);
  if (cached && unchanged(cached.inputs, inputs)) return cached.json;
  const json = JSON.stringify(renderServer(e, s));
  serverJsonCache.set(s, { json, inputs: snap(inputs) });
  return json;
}

/**
 * A flavor with its sell status: `cond:operation:az` lists every AZ as
 * `az(status)`; `cond:operation:status` is the status in the AZ asked for,
 * else the best one over all AZs (normal > obt > sellout > abandon).
 */
export function renderFlavor(f: FlavorConfig, statuses: { az: string; status: FlavorAzStatus }[], az?: string): Flavor {
  const rank: FlavorAzStatus[] = ['normal', 'obt', 'sellout', 'abandon'];
  const overall = az !== undefined ? (statuses.find((x) => x.az === az)?.status ?? 'abandon') : (rank.find((r) => statuses.some((x) => x.status === r)) ?? 'abandon');
  return {
    id: f.id,
    name: f.name,
    vcpus: String(f.vcpus),
    ram: f.ramMiB,
    disk: '0',
    swap: '',
    links: [],
    'OS-FLV-EXT-DATA:ephemeral': 0,
    'OS-FLV-DISABLED:disabled': false,
    rxtx_factor: 1,
    rxtx_quota: null,
    rxtx_cap: null,
    'os-flavor-access:is_public': true,
    os_extra_specs: {
      'ecs:performancetype': 'normal',
      'ecs:virtualization_env_types': 'CloudCompute',
      'cond:operation:status': overall,
      'cond:operation:az': statuses.map((x) => `${x.az}(${x.status})`).join(','),
    },
  };
}

export function renderImage(i: ImageConfig, createdMs: number): Image {
  return {
    id: i.id,
    name: i.name,
    status: i.status ?? 'active',
    visibility: 'private',
    protected: false,
    container_format: 'bare',
    disk_format: 'zvhd2',
    min_disk: 40,
    min_ram: 0,
    size: 0,
    __os_version: `Alauda OS (Kubernetes ${i.kubernetesVersion}) 64bit`,
    __os_type: 'Linux',
    __os_bit: '64',
    __platform: 'Other',
    __imagetype: 'private',
    __image_source_type: 'uds',
    __isregistered: 'true',
    __support_kvm: 'true',
    virtual_env_type: 'FusionCompute',
    // Extension of this fake cloud: the Kubernetes version baked into the image (HCS-4, BOOT-4).
    __support_kubernetes_version: i.kubernetesVersion,
    tags: [],
    created_at: rfc3339(createdMs),
    updated_at: rfc3339(createdMs),
    self: `/v2/images/${i.id}`,
    file: `/v2/images/${i.id}/file`,
    schema: '/v2/schemas/image',
  };
}

export function renderSubnet(s: SubnetConfig, projectId: string, createdMs: number): Subnet {
  return {
    id: s.id,
    name: s.name,
    description: '',
    cidr: s.cidr,
    gateway_ip: s.gateway_ip,
    ipv6_enable: false,
    dhcp_enable: true,
    primary_dns: '100.125.1.250',
    secondary_dns: '100.125.21.250',
    dnsList: ['100.125.1.250', '100.125.21.250'],
    availability_zone: s.availability_zone ?? '',
    vpc_id: s.vpc_id,
    status: 'ACTIVE',
    neutron_network_id: s.neutron_network_id,
    neutron_subnet_id: s.neutron_subnet_id,
    extra_dhcp_opts: [],
    scope: 'center',
    tenant_id: projectId,
    created_at: rfc3339(createdMs),
    updated_at: rfc3339(createdMs),
  };
}

/** A VPC port (Neutron shape, as the VPC SDK's Port model). */
export function renderPort(p: PortView): Port {
  const server = p.kind === 'server';
  return {
    id: p.id,
    name: p.name,
    network_id: p.subnet.neutron_network_id,
    admin_state_up: p.adminStateUp,
    mac_address: p.mac,
    fixed_ips: [{ subnet_id: p.subnet.neutron_subnet_id, ip_address: p.ip }],
    device_id: p.deviceId,
    device_owner: p.deviceOwner,
    tenant_id: p.projectId,
    status: p.status,
    security_groups: [...p.securityGroups],
    allowed_address_pairs: [],
    extra_dhcp_opts: [],
    'binding:vnic_type': 'normal',
    dns_assignment: [{ hostname: p.hostname ?? `host-${p.ip.replace(/\./g, '-')}`, ip_address: p.ip, fqdn: `${p.hostname ?? `host-${p.ip.replace(/\./g, '-')}`}.${p.subnet.name}.internal.` }],
    dns_name: p.hostname ?? '',
    'binding:vif_details': server ? { primary_interface: true, port_filter: true, ovs_hybrid_plug: false } : {},
    'binding:profile': {},
    instance_id: server ? p.deviceId : '',
    instance_type: server ? 'ecs' : '',
    port_security_enabled: true,
    zone_id: p.az ?? '',
    enable_efi: false,
  };
}

/**
 * A port as VPC v3 returns it (GET /v3/{project_id}/ports[/{id}]; the
 * huaweicloud-sdk-go-v3 vpc/v3 Port model): `virsubnet_id` (the VPC subnet
 * id) and `private_ips` instead of Neutron's network_id / fixed_ips.
 */
export function renderPortV3(p: PortView): Record<string, unknown> {
  const server = p.kind === 'server';
  return {
    id: p.id,
    name: p.name,
    description: '',
    admin_state_up: p.adminStateUp,
    status: p.status,
    device_id: p.deviceId,
    device_owner: p.deviceOwner,
    mac_address: p.mac,
    virsubnet_id: p.subnet.id,
    vpc_id: p.subnet.vpc_id,
    private_ips: [{ subnet_cidr_id: p.subnet.neutron_subnet_id, ip_address: p.ip }],
    project_id: p.projectId,
    tenant_id: p.projectId,
    vpc_tenant_id: p.projectId,
    security_groups: [...p.securityGroups],
    allowed_address_pairs: [],
    extra_dhcp_opts: [],
    tags: [],
    'binding:host_id': '',
    'binding:profile': {},
    'binding:vif_details': server ? { primary_interface: true, port_filter: true, ovs_hybrid_plug: false } : {},
    'binding:vif_type': server ? 'ovs' : 'unbound',
    'binding:vnic_type': 'normal',
    'binding:migration_info': {},
    instance_id: server ? p.deviceId : '',
    instance_type: server ? 'ecs' : '',
    instance_info: {},
    ecs_flavor: '',
    port_security_enabled: true,
    vtep_ip: '',
    enable_efi: false,
    scope: 'center',
    zone_id: p.az ?? '',
    position_type: '',
    created_at: rfc3339(p.created),
    updated_at: rfc3339(p.created),
  };
}

/** A VPC private IP (the VPC SDK's Privateip model); its id is the port id. */
export function renderPrivateIp(p: PortView): PrivateIp {
  return {
    id: p.id,
    status: p.deviceOwner ? 'ACTIVE' : 'DOWN',
    subnet_id: p.subnet.id,
    tenant_id: p.projectId,
    device_owner: p.deviceOwner,
    ip_address: p.ip,
  };
}

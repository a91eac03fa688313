/**
 * Loading a cloud's state as the documented list calls show it (issue 35:
 * `hcs-testbed run`/`serve` from a captured bundle): ECS ListServersDetails
 * servers, EVS ListVolumes volumes, VPC ListPorts ports and ListSubnets
 * subnets, IMS ListImages images, ECS ListFlavors flavors and the AZs — the
 * records exactly as a real HCS (or this mock) returned them — become a
 * cloud configuration and a state document (state-data.ts DbData), which
 * MockHcs.restoreState checks and loads whole, or refuses changing nothing.
 *
 * What the lists cannot tell is made as this mock would have:
 * - transitions in flight (a server in BUILD or being deleted, a volume
 *   creating, detaching or deleting) get a task due when the cloud's
 *   configured duration, counted from the record's own created/updated time,
 *   is over (no earlier than now);
 * - a volume `attaching` shows no server in either API (EVS lists attachments
 *   once made): it is loaded `available`, and its attach is the caller's to
 *   make again (the provider does);
 * - jobs are not listable (ShowJob only): none are loaded;
 * - disk contents are not in any API: `disks` gives them (file system type,
 *   label, files), where the caller knows them.
 */
import type { CloudConfig, FlavorConfig, ImageConfig, SubnetConfig, VpcConfig } from './config.js';
import { emptyData, type DbData, type NicRec, type PortRec, type ServerRec, type ServerStatus, type ServerVolumeRec, type TaskKind, type VolumeRec, type VolumeStatus } from './state-data.js';
import { SERVER_STATUSES, VOLUME_STATUSES } from './state-data.js';
import { DEFAULT_ACTION_MS } from './services/ecs.js';

type Rec = Record<string, unknown>;

/** A cloud as its list calls return it (field names as on the wire). */
export interface CloudListing {
  projectId: string;
  region?: string;
  servers: Rec[];
  volumes: Rec[];
  ports: Rec[];
  subnets: Rec[];
  images: Rec[];
  flavors: Rec[];
  availabilityZones: string[];
}

export interface ListedDisk {
  volumeId: string;
  fsType?: string;
  label?: string;
  files: Record<string, string>;
}

export class ListingError extends Error {
  override name = 'ListingError';
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const time = (v: unknown): number | undefined => {
  if (typeof v !== 'string' || v === '') return undefined;
  // EVS writes "2024-01-01T00:00:00.000000" (no zone: UTC); ECS launched_at likewise.
  const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`);
  return Number.isNaN(t) ? undefined : t;
};

/**
 * The cloud configuration a listing implies: `base` (credentials, timings, quotas of the replaying cloud) with the
 * listed project id and region, AZs, flavors (sold where ListFlavors does not say `abandon`), images (their
 * `__support_kubernetes_version`) and subnets (with their VPCs) in place of the base's where the listing has them.
 */
export function configFromListing(base: CloudConfig, l: CloudListing): CloudConfig {
  const project = base.projects[0];
  if (!project) throw new ListingError('the base cloud configuration has no project');
  const cfg: CloudConfig = structuredClone(base);
  cfg.projects = [{ ...project, id: l.projectId, ...(l.region ? { region: l.region } : {}) }, ...base.projects.slice(1).filter((p) => p.id !== l.projectId)];
  if (l.availabilityZones.length) cfg.availabilityZones = [...l.availabilityZones];
  if (l.flavors.length) {
    cfg.flavors = l.flavors.map((f, i): FlavorConfig => {
      const id = str(f.id);
      if (!id) throw new ListingError(`flavors[${i}]: no id`);
      const spec = (f.os_extra_specs ?? {}) as Rec;
      const sold = str(spec['cond:operation:az'])
        ?.split(',')
        .map((x) => /^(.+)\((\w+)\)$/.exec(x.trim()))
        .filter((m): m is RegExpExecArray => !!m && m[2] !== 'abandon')
        .map((m) => m[1]!);
      const baseF = base.flavors.find((b) => b.id === id);
      return {
        id,
        name: str(f.name) ?? id,
        vcpus: Number(f.vcpus) || 0,
        ramMiB: Number(f.ram) || 0,
        ...(sold && sold.length < cfg.availabilityZones.length ? { availabilityZones: sold } : {}),
        ...(baseF?.buildMs !== undefined ? { buildMs: baseF.buildMs } : {}),
      };
    });
  }
  if (l.images.length) {
    cfg.images = l.images.map((im, i): ImageConfig => {
      const id = str(im.id);
      if (!id) throw new ListingError(`images[${i}]: no id`);
      const baseI = base.images.find((b) => b.id === id);
      return {
        id,
        name: str(im.name) ?? id,
        kubernetesVersion: str(im.__support_kubernetes_version) ?? baseI?.kubernetesVersion ?? '',
        ...(str(im.status) === 'queued' ? { status: 'queued' as const } : {}),
        ...(baseI?.buildMs !== undefined ? { buildMs: baseI.buildMs } : {}),
      };
    });
  }
  if (l.subnets.length) {
    cfg.subnets = l.subnets.map((s, i): SubnetConfig => {
      const need = (k: string): string => {
        const v = str(s[k]);
        if (!v) throw new ListingError(`subnets[${i}]: no ${k}`);
        return v;
      };
      const az = str(s.availability_zone);
      return {
        id: need('id'),
        name: str(s.name) ?? need('id'),
        cidr: need('cidr'),
        gateway_ip: need('gateway_ip'),
        vpc_id: need('vpc_id'),
        neutron_subnet_id: str(s.neutron_subnet_id) ?? need('id'),
        neutron_network_id: str(s.neutron_network_id) ?? need('id'),
        ...(az ? { availability_zone: az } : {}),
      };
    });
    const vpcs = new Map<string, VpcConfig>();
    for (const s of cfg.subnets) {
      if (vpcs.has(s.vpc_id)) continue;
      const known = base.vpcs.find((v) => v.id === s.vpc_id);
      // The subnets' VPC: the base's when it is the same one, else one spanning every private range (VPC CIDRs are not listed).
      vpcs.set(s.vpc_id, known ?? { id: s.vpc_id, name: `vpc-${s.vpc_id.slice(0, 8)}`, cidr: '10.0.0.0/8' });
    }
    cfg.vpcs = [...vpcs.values()];
  }
  return cfg;
}

/** The state document a listing implies (DbData), with tasks for the transitions in flight. Throws ListingError naming the record. */
export function stateFromListing(l: CloudListing, cfg: CloudConfig, now: number, disks: readonly ListedDisk[] = []): DbData {
  const d = emptyData();
  const subnetByNeutron = new Map<string, string>();
  for (const s of cfg.subnets) {
    subnetByNeutron.set(s.neutron_subnet_id, s.id);
    subnetByNeutron.set(s.neutron_network_id, s.id);
    subnetByNeutron.set(s.id, s.id);
  }
  const ipSubnet = (ip: string): string | undefined => cfg.subnets.find((s) => inCidr(ip, s.cidr))?.id;
  const diskOf = new Map(disks.map((x) => [x.volumeId, x]));
  const tasks: { kind: TaskKind; target: string; due: number }[] = [];
  const t = cfg.timings;

  l.volumes.forEach((v, i) => {
    const id = str(v.id);
    if (!id) throw new ListingError(`volumes[${i}]: no id`);
    let status = str(v.status) as VolumeStatus | undefined;
    if (!status || !VOLUME_STATUSES.includes(status)) throw new ListingError(`volumes[${i}] (${id}): status ${JSON.stringify(v.status)} is not an EVS volume status (${VOLUME_STATUSES.join(', ')})`);
    const att = (Array.isArray(v.attachments) ? v.attachments : [])[0] as Rec | undefined;
    if (status === 'attaching' && !att) status = 'available';
    const created = time(v.created_at) ?? now;
    const updated = time(v.updated_at) ?? created;
    const disk = diskOf.get(id);
    const rec: VolumeRec = {
      id,
      projectId: l.projectId,
      name: str(v.name) ?? '',
      size: Number(v.size) || 1,
      volumeType: str(v.volume_type) ?? 'SATA',
      az: str(v.availability_zone) ?? cfg.availabilityZones[0] ?? '',
      status,
      metadata: Object.fromEntries(Object.entries((v.metadata ?? {}) as Rec).filter(([, x]) => typeof x === 'string')) as Record<string, string>,
      bootable: String(v.bootable) === 'true',
      ...(str(v.description) ? { description: str(v.description)! } : {}),
      ...(str((v.volume_image_metadata as Rec | undefined)?.image_id) ? { imageId: str((v.volume_image_metadata as Rec).image_id)! } : {}),
      ...(att && str(att.server_id)
        ? { attachment: { serverId: str(att.server_id)!, device: str(att.device) ?? '', attachmentId: str(att.attachment_id) ?? id, attachedAt: time(att.attached_at) ?? updated } }
        : {}),
      createdAt: created,
      updatedAt: updated,
      fs: { ...(disk?.fsType ? { fsType: disk.fsType } : {}), ...(disk?.label ? { label: disk.label } : {}), files: { ...(disk?.files ?? {}) } },
      jobs: [],
    };
    if (status === 'in-use' && !rec.attachment) throw new ListingError(`volumes[${i}] (${id}): in-use without an attachment`);
    if (status === 'creating') tasks.push({ kind: 'volume.create', target: id, due: Math.max(now, created + t.volumeCreateMs) });
    if (status === 'detaching') tasks.push({ kind: 'volume.detach', target: id, due: Math.max(now, updated + t.volumeDetachMs) });
    if (status === 'deleting') tasks.push({ kind: 'volume.delete', target: id, due: Math.max(now, updated + t.volumeDeleteMs) });
    d.volumes[id] = rec;
  });
  l.servers.forEach((s, i) => {
    const id = str(s.id);
    if (!id) throw new ListingError(`servers[${i}]: no id`);
    const status = str(s.status) as ServerStatus | undefined;
    if (!status || !SERVER_STATUSES.includes(status)) throw new ListingError(`servers[${i}] (${id}): status ${JSON.stringify(s.status)} is not one this cloud models (${SERVER_STATUSES.join(', ')})`);
    const nics: NicRec[] = [];
    for (const addrs of Object.values((s.addresses ?? {}) as Record<string, Rec[]>)) {
      for (const a of addrs) {
        const ip = str(a.addr);
        if (!ip) continue;
        const subnetId = ipSubnet(ip);
        if (!subnetId) throw new ListingError(`servers[${i}] (${id}): address ${ip} is in no listed subnet`);
        nics.push({ subnetId, ip, portId: str(a['OS-EXT-IPS:port_id']) ?? `${id}-${nics.length}`, mac: str(a['OS-EXT-IPS-MAC:mac_addr']) ?? '' });
      }
    }
    const attached = ((s['os-extended-volumes:volumes_attached'] ?? s.volumes_attached ?? []) as Rec[]).map((a): ServerVolumeRec => {
      const vid = str(a.id) ?? '';
      const vol = d.volumes[vid];
      const boot = Number(a.bootIndex);
      return {
        volumeId: vid,
        device: str(a.device) ?? vol?.attachment?.device ?? '',
        ...(boot === 0 ? { bootIndex: 0 } : {}),
        deleteOnTermination: String(a.delete_on_termination) === 'true',
      };
    });
    for (const a of attached) if (!d.volumes[a.volumeId]) throw new ListingError(`servers[${i}] (${id}): volume ${a.volumeId} is attached but not listed by EVS`);
    const meta = (s.metadata ?? {}) as Rec;
    const created = time(s.created) ?? now;
    const updated = time(s.updated) ?? created;
    const taskState = str(s['OS-EXT-STS:task_state']) ?? str(s.task_state) ?? null;
    const rec: ServerRec = {
      id,
      projectId: l.projectId,
      name: str(s.name) ?? id,
      status,
      taskState: taskState === '' ? null : taskState,
      flavorId: str((s.flavor as Rec | undefined)?.id) ?? '',
      imageId: str((s.image as Rec | undefined)?.id) ?? '',
      az: str(s['OS-EXT-AZ:availability_zone']) ?? str(s.availability_zone) ?? cfg.availabilityZones[0] ?? '',
      vpcId: str(meta.vpc_id) ?? cfg.subnets.find((x) => x.id === nics[0]?.subnetId)?.vpc_id ?? '',
      nics,
      volumes: attached,
      ...(typeof s.userData === 'string' ? { userData: s.userData } : {}),
      // The cloud's own keys (vpc_id, image_name, ...) are rendered by the cloud; the listing's copies are not user metadata.
      metadata: Object.fromEntries(Object.entries(meta).filter(([k, x]) => typeof x === 'string' && !CLOUD_METADATA.has(k))) as Record<string, string>,
      tags: (Array.isArray(s.tags) ? s.tags : []).map((x) => {
        const [key, ...rest] = String(x).split('=');
        return { key: key ?? '', value: rest.join('=') };
      }),
      instanceName: str(s['OS-EXT-SRV-ATTR:instance_name']) ?? `instance-${(++d.instanceSeq).toString(16).padStart(8, '0')}`,
      hostId: str(s.hostId) ?? id.replace(/-/g, '').padEnd(56, '0').slice(0, 56),
      created,
      updated,
      ...(time(s['OS-SRV-USG:launched_at'] ?? s.launched_at) !== undefined ? { launchedAt: time(s['OS-SRV-USG:launched_at'] ?? s.launched_at)! } : {}),
      deleteJobs: [],
      createJob: '',
      attaching: [],
    };
    if (status === 'BUILD') tasks.push({ kind: 'server.build', target: id, due: Math.max(now, created + t.serverBuildMs) });
    if (rec.taskState === 'deleting') tasks.push({ kind: 'server.delete', target: id, due: Math.max(now, updated + t.serverDeleteMs) });
    // A stop, start or reboot in progress: its task, and the job the task ends (jobs are not listable; this one stands in).
    const action = ACTIONS[rec.taskState ?? ''];
    if (action && rec.taskState !== 'deleting') {
      const jobId = id.replace(/-/g, '').slice(0, 32).padEnd(32, '0');
      d.jobs[jobId] = {
        job_id: jobId,
        projectId: l.projectId,
        job_type: action.job,
        status: 'RUNNING',
        begin_time: updated,
        entities: { sub_jobs_total: 1 },
        sub_jobs: [{ job_id: `${jobId.slice(0, 31)}1`, job_type: action.job.replace(/^batch(\w)/, (_m, c: string) => c.toLowerCase()), status: 'RUNNING', begin_time: updated, entities: { server_id: id } }],
      };
      rec.actionJob = jobId;
      const ms = action.kind === 'server.stop' ? (t.serverStopMs ?? DEFAULT_ACTION_MS.stop) : action.kind === 'server.start' ? (t.serverStartMs ?? DEFAULT_ACTION_MS.start) : (t.serverRebootMs ?? DEFAULT_ACTION_MS.reboot);
      tasks.push({ kind: action.kind, target: id, due: Math.max(now, updated + ms) });
    }
    d.servers[id] = rec;
  });
  // Attachments must agree both ways (checkIntegrity): a volume that names a server not listed is left unattached.
  for (const v of Object.values(d.volumes)) {
    if (!v.attachment) continue;
    const s = d.servers[v.attachment.serverId];
    if (!s) throw new ListingError(`volume ${v.id} is attached to server ${v.attachment.serverId}, which ECS does not list`);
    if (!s.volumes.some((x) => x.volumeId === v.id)) s.volumes.push({ volumeId: v.id, device: v.attachment.device, deleteOnTermination: false });
  }
  const serverPorts = new Set(Object.values(d.servers).flatMap((s) => s.nics.map((n) => n.portId)));
  l.ports.forEach((p, i) => {
    const id = str(p.id);
    if (!id) throw new ListingError(`ports[${i}]: no id`);
    if (serverPorts.has(id) || str(p.device_owner)?.startsWith('compute:')) return;
    const fixed = ((p.fixed_ips ?? []) as Rec[])[0];
    const ip = str(fixed?.ip_address);
    const subnetId = subnetByNeutron.get(str(fixed?.subnet_id) ?? '') ?? (ip ? ipSubnet(ip) : undefined);
    if (!ip || !subnetId) throw new ListingError(`ports[${i}] (${id}): no fixed IP in a listed subnet`);
    const rec: PortRec = {
      id,
      projectId: l.projectId,
      kind: str(p.device_owner) === 'neutron:VIP_PORT' || str(p.name) === '' ? 'privateip' : 'port',
      name: str(p.name) ?? '',
      subnetId,
      ip,
      mac: str(p.mac_address) ?? '',
      deviceOwner: str(p.device_owner) ?? '',
      deviceId: str(p.device_id) ?? '',
      adminStateUp: p.admin_state_up !== false,
      securityGroups: Array.isArray(p.security_groups) ? p.security_groups.map(String) : [],
      created: now,
    };
    d.ports[id] = rec;
  });
  tasks.sort((a, b) => a.due - b.due || a.target.localeCompare(b.target));
  for (const x of tasks) {
    const seq = ++d.taskSeq;
    d.tasks[String(seq)] = { seq, kind: x.kind, due: x.due, target: x.target };
  }
  d.savedAtMs = now;
  return d;
}

/** Server task states of a stop, start or reboot in progress (services/ecs.ts serverAction), with the task that ends each. */
const ACTIONS: Record<string, { kind: TaskKind; job: string }> = {
  'powering-off': { kind: 'server.stop', job: 'batchStopServer' },
  'powering-on': { kind: 'server.start', job: 'batchStartServer' },
  rebooting: { kind: 'server.reboot', job: 'batchRebootServer' },
  rebooting_hard: { kind: 'server.reboot', job: 'batchRebootServer' },
};

/** Keys ECS adds to a server's metadata itself (render.ts): not the client's. */
const CLOUD_METADATA = new Set(['image_name', 'os_type', 'vpc_id', 'charging_mode', 'metering.image_id', 'metering.imagetype', 'metering.resourcespeccode', 'metering.cloudServiceType', 'metering.resourcetype', 'os_bit', 'cascaded.instance_extrainfo', 'virtual_env_type', 'lockScene', 'lockSource', 'lockSourceId', 'lockCheckEndpoint']);

function inCidr(ip: string, cidr: string): boolean {
  const [net, bits] = cidr.split('/');
  const n = (x: string): number => x.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  const b = Number(bits);
  if (!net || Number.isNaN(b)) return false;
  const mask = b === 0 ? 0 : 2 ** 32 - 2 ** (32 - b);
  return (n(ip) & mask) >>> 0 === (n(net) & mask) >>> 0;
}

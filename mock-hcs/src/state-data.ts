/**
 * The data model of the fake cloud's state (records, statuses, the data-file document): types and
 * the two pure helpers on the document. It imports none of state.ts, persist.ts or state-validate.ts,
 * so those depend on it in one direction: state.ts -> persist.ts -> state-validate.ts -> state-data.ts.
 */
import type { JobStatus, VolumeStatus } from '../../src/core/hcs/index.js';
export type ServerStatus = 'BUILD' | 'ACTIVE' | 'SHUTOFF' | 'REBOOT' | 'HARD_REBOOT' | 'ERROR';
/** A volume's status: one of the statuses EVS documents (src/core/hcs/evs.ts). */
export type { VolumeStatus };
/** A job's status, as ShowJob reports it (src/core/hcs/ecs.ts). */
export type { JobStatus };
export const SERVER_STATUSES: readonly ServerStatus[] = ['BUILD', 'ACTIVE', 'SHUTOFF', 'REBOOT', 'HARD_REBOOT', 'ERROR'];
export { VOLUME_STATUSES } from '../../src/core/hcs/index.js';
export const JOB_STATUSES: readonly JobStatus[] = ['INIT', 'RUNNING', 'SUCCESS', 'FAIL'];

export interface NicRec {
  subnetId: string;
  ip: string;
  portId: string;
  mac: string;
}

export interface ServerVolumeRec {
  volumeId: string;
  device: string;
  bootIndex?: number;
  deleteOnTermination: boolean;
}

export interface ServerRec {
  id: string;
  projectId: string;
  name: string;
  status: ServerStatus;
  taskState: string | null;
  flavorId: string;
  imageId: string;
  az: string;
  vpcId: string;
  nics: NicRec[];
  volumes: ServerVolumeRec[];
  /** base64, as sent by the client. */
  userData?: string;
  metadata: Record<string, string>;
  tags: { key: string; value: string }[];
  instanceName: string;
  hostId: string;
  created: number;
  updated: number;
  launchedAt?: number;
  /** Job ids whose deleteSingleServer sub-job completes when this server goes away. */
  deleteJobs: string[];
  /** Create job id (its sub-job tracks this server's build). */
  createJob: string;
  /** delete_volume=true was requested: every attached data volume goes with the server. */
  deleteVolume?: boolean;
  /** Volumes being attached (status attaching) and the device they will get. */
  attaching: { volumeId: string; device: string }[];
  /** Why the server is ERROR (Nova `fault`): set when a build or delete fails. */
  fault?: { code: number; message: string; details?: string; created: number };
  /** Job of the os-stop / os-start / reboot in progress (its sub-job ends with the transition). */
  actionJob?: string;
}

/**
 * A VPC port created through the VPC API (POST /ports) or a private IP
 * (POST /privateips, which is a port with one fixed IP on the real VPC too).
 * Ports of server NICs are not stored here: they are derived from the servers.
 */
export interface PortRec {
  id: string;
  projectId: string;
  kind: 'port' | 'privateip';
  name: string;
  /** VPC subnet id (= neutron_network_id). */
  subnetId: string;
  ip: string;
  mac: string;
  deviceOwner: string;
  deviceId: string;
  adminStateUp: boolean;
  securityGroups: string[];
  created: number;
}

/** An IAM token (HCS-5); stored under sha256(token), never the token itself. */
export interface TokenRec {
  userName: string;
  userId: string;
  domainId: string;
  /** Project the token is scoped to; absent = domain-scoped. */
  projectId?: string;
  methods: string[];
  issuedAt: number;
  expiresAt: number;
}

export interface VolumeFs {
  fsType?: string;
  label?: string;
  files: Record<string, string>;
}

export interface VolumeRec {
  id: string;
  projectId: string;
  name: string;
  size: number;
  volumeType: string;
  az: string;
  status: VolumeStatus;
  metadata: Record<string, string>;
  bootable: boolean;
  /** Free text set by UpdateVolume. */
  description?: string;
  imageId?: string;
  attachment?: { serverId: string; device: string; attachmentId: string; attachedAt: number };
  /** Server this volume is being attached to (status attaching). */
  pendingServerId?: string;
  pendingDevice?: string;
  createdAt: number;
  updatedAt: number;
  fs: VolumeFs;
  /** Job ids completing when the volume reaches its next stable state. */
  jobs: string[];
}

export interface SubJobRec {
  job_id: string;
  job_type: string;
  status: JobStatus;
  begin_time: number;
  end_time?: number;
  entities: Record<string, string>;
  error_code?: string;
  fail_reason?: string;
}

export interface JobRec {
  job_id: string;
  projectId: string;
  job_type: string;
  status: JobStatus;
  begin_time: number;
  end_time?: number;
  entities: Record<string, unknown>;
  sub_jobs?: SubJobRec[];
  error_code?: string;
  fail_reason?: string;
}

export type TaskKind = 'server.build' | 'server.delete' | 'server.stop' | 'server.start' | 'server.reboot' | 'volume.create' | 'volume.attach' | 'volume.detach' | 'volume.delete' | 'volume.extend';

export const TASK_KINDS: readonly TaskKind[] = ['server.build', 'server.delete', 'server.stop', 'server.start', 'server.reboot', 'volume.create', 'volume.attach', 'volume.detach', 'volume.delete', 'volume.extend'];

export interface TaskRec {
  /** Monotonic sequence; orders tasks with equal due times deterministically. */
  seq: number;
  kind: TaskKind;
  /** Absolute due time (ms since epoch, injected clock). */
  due: number;
  /** Entity the task acts on (server or volume id). */
  target: string;
  /** Fault injection (HCS-6): the transition never completes; not armed until released. */
  stuck?: boolean;
  /** Fault injection (HCS-6): the transition ends in failure and its job ends FAIL. */
  fail?: { code: string; reason: string };
}

export interface ClientTokenRec {
  projectId: string;
  response: { job_id: string; serverIds: string[] };
  at: number;
}

export interface DbData {
  version: 1;
  servers: Record<string, ServerRec>;
  volumes: Record<string, VolumeRec>;
  jobs: Record<string, JobRec>;
  /** Key: String(seq). */
  tasks: Record<string, TaskRec>;
  /** Key: `${projectId}|${token}`. */
  clientTokens: Record<string, ClientTokenRec>;
  /** VPC ports and private IPs created through the VPC API, keyed by id (absent in files written before they existed). */
  ports: Record<string, PortRec>;
  /** IAM tokens keyed by sha256 hex of the token. */
  tokens: Record<string, TokenRec>;
  taskSeq: number;
  /** Counter for instance names (instance-0000xxxx). */
  instanceSeq: number;
  /** Clock reading at the last write (lets a restarted real-time server continue its timeline). */
  savedAtMs?: number;
  /** Id stream epoch: bumped each time a process reopens the data file, so a restart never replays the previous process's ids. */
  idEpoch?: number;
}

export function emptyData(): DbData {
  return { version: 1, servers: {}, volumes: {}, jobs: {}, tasks: {}, clientTokens: {}, ports: {}, tokens: {}, taskSeq: 0, instanceSeq: 0 };
}

/** Fill in collections added after version 1 was first written (ports, tokens), in place. */
export function normalizeDbData(d: DbData): DbData {
  const o = d as Partial<DbData> & DbData;
  o.ports ??= {};
  o.tokens ??= {};
  return o;
}

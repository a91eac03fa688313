/**
 * The fake cloud's domain logic (no HTTP here): servers, volumes, jobs and
 * the timed transitions between their states. Every delay goes through the
 * injected Clock, every random choice through the injected Rng.
 */
import type { Clock, EventLog, Rng, TimerId } from '../../src/core/index.js';
import { DEFAULT_VOLUME_TYPES, type CloudConfig, type FlavorAzStatus, type FlavorConfig, type ImageConfig, type ProjectConfig, type SubnetConfig, type VpcConfig } from './config.js';
import { CloudError, Codes } from './errors.js';
import { intToIp, ipToInt, isHostInCidr, parseCidr, type Cidr } from './ip.js';
import type { JobRec, NicRec, ServerRec, Store, SubJobRec, TaskKind, TaskRec, VolumeFs, VolumeRec } from './state.js';
import { Validator } from './validate.js';

export interface ServerChange {
  id: string;
  name: string;
  status: string;
  projectId: string;
}

export interface VolumeChange {
  id: string;
  status: string;
  projectId: string;
}

export interface Hypervisor {
  server(id: string):
    | {
        id: string;
        name: string;
        status: string;
        projectId: string;
        userData?: string;
        metadata: Record<string, string>;
        ips: string[];
        volumes: { volumeId: string; device: string; bootIndex?: number }[];
      }
    | undefined;
  volume(
    id: string,
  ): { id: string; name: string; size: number; status: string; metadata: Record<string, string>; attachedTo?: string; fs: VolumeFs } | undefined;
  listVolumes(): { id: string; name: string; status: string; metadata: Record<string, string>; attachedTo?: string }[];
  listServers(): { id: string; name: string; status: string }[];
  format(volumeId: string, fsType: string, label: string): void;
  writeFile(volumeId: string, path: string, content: string): void;
  readFile(volumeId: string, path: string): string | undefined;
}

const ecsV: Validator = new Validator(Codes.ecsBadRequest);
const evsV: Validator = new Validator(Codes.evsBadRequest);

const SERVER_NAME = /^[A-Za-z0-9_.\-\u4e00-\u9fa5]{1,64}$/;
const DEVICE = /^\/dev\/(vd|sd|xvd)[a-z]$/;
const MAX_USER_DATA = 32 * 1024;

export interface SubnetInfo {
  cfg: SubnetConfig;
  cidr: Cidr;
  gateway: number;
}

/** Default durations of os-stop / os-start / reboot when the config has none. */
const DEFAULT_ACTION_MS = { stop: 10_000, start: 10_000, reboot: 15_000 } as const;

export type ServerAction = 'os-stop' | 'os-start' | 'reboot';

/** Job and sub-job types of the batch actions (ECS names). */
const ACTION_JOB: Record<ServerAction, { job: string; sub: string; kind: TaskKind; verb: string }> = {
  'os-stop': { job: 'batchStopServer', sub: 'stopServer', kind: 'server.stop', verb: 'stop' },
  'os-start': { job: 'batchStartServer', sub: 'startServer', kind: 'server.start', verb: 'start' },
  reboot: { job: 'batchRebootServer', sub: 'rebootServer', kind: 'server.reboot', verb: 'reboot' },
};

/**
 * Effects of fired fault rules on the transitions a call schedules (HCS-6):
 * extra duration, a transition that never completes, or one that fails.
 */
export interface CallEffects {
  extraDelayMs?: number;
  stuck?: boolean;
  fail?: { code: string; reason: string };
}

export interface CreateServersResult {
  job_id: string;
  serverIds: string[];
}

export class CloudEngine implements Hypervisor {
  private ids: Rng;
  private jitterRng: Rng;
  /** Effects applied to the transitions scheduled by the current (synchronous) call. */
  private effects: CallEffects | undefined;
  private readonly timers = new Map<number, TimerId>();
  private readonly serverListeners = new Set<(s: ServerChange) => void>();
  private readonly volumeListeners = new Set<(v: VolumeChange) => void>();
  readonly projectsByAk = new Map<string, ProjectConfig>();
  readonly projectsById = new Map<string, ProjectConfig>();
  readonly flavors = new Map<string, FlavorConfig>();
  readonly images = new Map<string, ImageConfig>();
  readonly vpcs = new Map<string, VpcConfig>();
  /** Keyed by subnet id and by neutron_network_id (ECS nics[].subnet_id accepts the VPC subnet id). */
  private readonly subnets = new Map<string, SubnetInfo>();
  /** Keyed by neutron_subnet_id (VPC port fixed_ips[].subnet_id). */
  private readonly neutronSubnets = new Map<string, SubnetInfo>();
  /**
   * Capacity fault rules that make a flavor sold out in an AZ (set by createMockHcs):
   * returns a reason, or undefined. Shown as `sellout` by ListFlavors and the catalog.
   */
  injectedSellout: (flavorId: string, az: string) => string | undefined = () => undefined;
  private readonly azs: Set<string>;
  private readonly volumeTypes: Set<string>;
  private stopped = false;

  constructor(
    private readonly store: Store,
    readonly config: CloudConfig,
    private readonly clock: Clock,
    private readonly rng: Rng,
    private readonly events?: EventLog,
  ) {
    this.ids = rng.fork('mock-hcs/ids');
    this.jitterRng = rng.fork('mock-hcs/jitter');
    store.now = () => clock.now();
    for (const p of config.projects) {
      this.projectsByAk.set(p.ak, p);
      this.projectsById.set(p.id, p);
    }
    for (const f of config.flavors) this.flavors.set(f.id, f);
    for (const i of config.images) this.images.set(i.id, i);
    for (const v of config.vpcs) this.vpcs.set(v.id, v);
    for (const s of config.subnets) {
      const info: SubnetInfo = { cfg: s, cidr: parseCidr(s.cidr), gateway: ipToInt(s.gateway_ip) ?? -1 };
      this.subnets.set(s.id, info);
      this.subnets.set(s.neutron_network_id, info);
      this.neutronSubnets.set(s.neutron_subnet_id, info);
    }
    this.azs = new Set(config.availabilityZones);
    this.volumeTypes = new Set(config.volumeTypes ?? DEFAULT_VOLUME_TYPES);
  }

  private get data() {
    return this.store.data;
  }

  // ---------------------------------------------------------------- plumbing

  /** Re-arm every persisted task (after open or restart); stuck tasks stay parked. */
  start(): void {
    this.stopped = false;
    const tasks = Object.values(this.data.tasks).sort((a, b) => a.seq - b.seq);
    for (const t of tasks) if (!t.stuck) this.arm(t);
  }

  stop(): void {
    this.stopped = true;
    for (const id of this.timers.values()) this.clock.clearTimer(id);
    this.timers.clear();
  }

  /**
   * Swap the whole state (admin reset / restore): cancel every timer, replace
   * the document, re-arm its tasks. `resetRng` restarts the id and jitter
   * streams, so a reset cloud hands out the same ids as a fresh one.
   */
  reload(data: import('./state.js').DbData, resetRng: boolean): void {
    this.stop();
    if (resetRng) {
      this.ids = this.rng.fork('mock-hcs/ids');
      this.jitterRng = this.rng.fork('mock-hcs/jitter');
    }
    this.store.replace(data);
    this.start();
  }

  /** Run `fn` with fault effects applied to every transition it schedules. */
  withEffects<T>(effects: CallEffects | undefined, fn: () => T): T {
    if (!effects) return fn();
    const prev = this.effects;
    this.effects = effects;
    try {
      return fn();
    } finally {
      this.effects = prev;
    }
  }

  /** Complete every stuck transition now (re-armed with its original duration from now). Returns how many. */
  releaseStuck(target?: string): number {
    let n = 0;
    for (const t of Object.values(this.data.tasks)) {
      if (!t.stuck || (target !== undefined && t.target !== target)) continue;
      delete t.stuck;
      t.due = this.clock.now();
      this.arm(t);
      n++;
    }
    if (n) this.store.markDirty();
    return n;
  }

  /** Stuck (parked) transitions, for the admin API. */
  stuckTasks(): TaskRec[] {
    return Object.values(this.data.tasks).filter((t) => t.stuck);
  }

  recordFault(type: string, message: string, data: Record<string, unknown>, rules: string[] = ['HCS-6']): void {
    this.events?.record({ source: 'fault', type, message, data, rules });
  }

  get storeRef(): Store {
    return this.store;
  }
  onServerChange(fn: (s: ServerChange) => void): () => void {
    this.serverListeners.add(fn);
    return () => this.serverListeners.delete(fn);
  }

  onVolumeChange(fn: (v: VolumeChange) => void): () => void {
    this.volumeListeners.add(fn);
    return () => this.volumeListeners.delete(fn);
  }

  private serverChanged(s: ServerRec, status: string = s.status): void {
    const ev = { id: s.id, name: s.name, status, projectId: s.projectId };
    for (const l of this.serverListeners) l(ev);
  }

  private volumeChanged(v: VolumeRec, status: string = v.status): void {
    const ev = { id: v.id, status, projectId: v.projectId };
    for (const l of this.volumeListeners) l(ev);
  }

  record(type: string, message: string, data?: Record<string, unknown>, rules?: string[]): void {
    this.events?.record({ source: 'cloud', type, message, ...(data ? { data } : {}), ...(rules && rules.length ? { rules } : {}) });
  }

  private newId(taken: (id: string) => boolean): string {
    // The rng stream restarts with the seed when a data file is reopened: skip ids already in use.
    for (;;) {
      const id = this.ids.uuid();
      if (!taken(id)) return id;
    }
  }

  private newServerId(): string {
    return this.newId((id) => id in this.data.servers);
  }

  private newVolumeId(): string {
    return this.newId((id) => id in this.data.volumes);
  }

  private newJobId(): string {
    // ECS job ids are 32 hex characters without dashes.
    for (;;) {
      const id = this.ids.hex(32);
      if (!(id in this.data.jobs)) return id;
    }
  }

  private duration(base: number): number {
    const j = Math.min(1, Math.max(0, this.config.timings.jitter));
    const f = 1 + j * (2 * this.jitterRng.next() - 1);
    return Math.max(0, Math.round(base * f));
  }

  private schedule(kind: TaskKind, target: string, delayMs: number): TaskRec {
    const seq = ++this.data.taskSeq;
    const fx = this.effects;
    const t: TaskRec = { seq, kind, due: this.clock.now() + delayMs + (fx?.extraDelayMs ?? 0), target };
    if (fx?.fail) t.fail = { ...fx.fail };
    if (fx?.stuck) {
      t.stuck = true;
      this.record('task.stuck', `${kind} of ${target} will not complete (fault injection)`, { kind, target }, ['HCS-6']);
    }
    this.data.tasks[String(seq)] = t;
    if (!t.stuck) this.arm(t);
    return t;
  }

  private arm(t: TaskRec): void {
    if (this.stopped) return;
    const delay = Math.max(0, t.due - this.clock.now());
    const id = this.clock.setTimer(delay, () => this.runTask(t.seq), `mock-hcs ${t.kind} ${t.target}`);
    this.timers.set(t.seq, id);
  }

  private cancelTasks(target: string): void {
    for (const [k, t] of Object.entries(this.data.tasks)) {
      if (t.target !== target) continue;
      delete this.data.tasks[k];
      const tid = this.timers.get(t.seq);
      if (tid !== undefined) this.clock.clearTimer(tid);
      this.timers.delete(t.seq);
    }
  }

  private runTask(seq: number): void {
    this.timers.delete(seq);
    const t = this.data.tasks[String(seq)];
    if (!t || this.stopped) return;
    delete this.data.tasks[String(seq)];
    if (t.fail) {
      this.failTask(t, t.fail.code, t.fail.reason);
      this.store.markDirty();
      return;
    }
    switch (t.kind) {
      case 'server.build':
        this.finishBuild(t.target);
        break;
      case 'server.delete':
        this.finishServerDelete(t.target);
        break;
      case 'server.stop':
      case 'server.start':
      case 'server.reboot':
        this.finishAction(t.kind, t.target);
        break;
      case 'volume.create':
        this.finishVolumeCreate(t.target);
        break;
      case 'volume.attach':
        this.finishAttach(t.target);
        break;
      case 'volume.detach':
        this.finishDetach(t.target);
        break;
      case 'volume.delete':
        this.finishVolumeDelete(t.target);
        break;
    }
    this.store.markDirty();
  }

  /** A transition that ends in failure (fault `jobFail`): the resource lands in a failed state, its job ends FAIL. */
  private failTask(t: TaskRec, code: string, reason: string): void {
    const now = this.clock.now();
    const failJobs = (jobs: string[]) => {
      for (const j of jobs) this.endJob(j, false, code, reason);
    };
    switch (t.kind) {
      case 'server.build': {
        const s = this.data.servers[t.target];
        if (!s || s.status !== 'BUILD') return;
        s.status = 'ERROR';
        s.taskState = null;
        s.updated = now;
        s.fault = { code: 500, message: reason, details: code, created: now };
        for (const sv of s.volumes) {
          const v = this.data.volumes[sv.volumeId];
          if (v && v.status === 'creating') {
            v.status = 'error';
            v.updatedAt = now;
            this.volumeChanged(v);
          }
        }
        // Like a real failed build, the server stays (ERROR) and keeps its IPs until deleted.
        this.record('server.error', `server ${s.name} (${s.id}) ERROR: ${code} ${reason}`, { serverId: s.id, name: s.name, code, reason }, ['HCS-6', 'OPS-2']);
        this.endSubJob(s.createJob, s.id, false, code, reason);
        this.serverChanged(s);
        return;
      }
      case 'server.delete': {
        const s = this.data.servers[t.target];
        if (!s) return;
        s.taskState = null;
        s.status = 'ERROR';
        s.updated = now;
        s.fault = { code: 500, message: reason, details: code, created: now };
        this.record('server.delete-failed', `deleting server ${s.name} (${s.id}) failed: ${code} ${reason}; it is ERROR`, { serverId: s.id, code, reason }, ['HCS-6']);
        for (const j of s.deleteJobs.splice(0)) this.endSubJob(j, s.id, false, code, reason);
        this.serverChanged(s);
        return;
      }
      case 'server.stop':
      case 'server.start':
      case 'server.reboot': {
        const s = this.data.servers[t.target];
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
        this.record('server.action-failed', `${t.kind} of server ${s.name} (${s.id}) failed: ${code} ${reason}; status ${s.status}`, { serverId: s.id, kind: t.kind, code, reason }, ['HCS-6']);
        this.endSubJob(job, s.id, false, code, reason);
        this.serverChanged(s);
        return;
      }
      case 'volume.create': {
        const v = this.data.volumes[t.target];
        if (!v || v.status !== 'creating') return;
        v.status = 'error';
        v.updatedAt = now;
        this.record('volume.error', `volume ${v.name} (${v.id}) error: ${code} ${reason}`, { volumeId: v.id, code, reason }, ['HCS-6']);
        this.volumeChanged(v);
        failJobs(v.jobs.splice(0));
        return;
      }
      case 'volume.attach': {
        const v = this.data.volumes[t.target];
        if (!v || v.status !== 'attaching') return;
        const s = v.pendingServerId ? this.data.servers[v.pendingServerId] : undefined;
        if (s) s.attaching = s.attaching.filter((a) => a.volumeId !== v.id);
        delete v.pendingServerId;
        delete v.pendingDevice;
        v.status = 'available';
        v.updatedAt = now;
        this.record('volume.attach-failed', `attaching volume ${v.name} (${v.id}) failed: ${code} ${reason}; available again`, { volumeId: v.id, code, reason }, ['HCS-6']);
        this.volumeChanged(v);
        failJobs(v.jobs.splice(0));
        return;
      }
      case 'volume.detach': {
        const v = this.data.volumes[t.target];
        if (!v || v.status !== 'detaching') return;
        v.status = 'in-use';
        v.updatedAt = now;
        this.record('volume.detach-failed', `detaching volume ${v.name} (${v.id}) failed: ${code} ${reason}; still in-use`, { volumeId: v.id, code, reason }, ['HCS-6']);
        this.volumeChanged(v);
        failJobs(v.jobs.splice(0));
        return;
      }
      case 'volume.delete': {
        const v = this.data.volumes[t.target];
        if (!v || v.status !== 'deleting') return;
        v.status = 'error';
        v.updatedAt = now;
        this.record('volume.delete-failed', `deleting volume ${v.name} (${v.id}) failed: ${code} ${reason}; status error`, { volumeId: v.id, code, reason }, ['HCS-6']);
        this.volumeChanged(v);
        failJobs(v.jobs.splice(0));
        return;
      }
    }
  }

  // ---------------------------------------------------------------- jobs

  private newJob(projectId: string, jobType: string, entities: Record<string, unknown>, subJobs?: SubJobRec[]): JobRec {
    const job: JobRec = {
      job_id: this.newJobId(),
      projectId,
      job_type: jobType,
      status: 'INIT',
      begin_time: this.clock.now(),
      entities,
      ...(subJobs ? { sub_jobs: subJobs } : {}),
    };
    this.data.jobs[job.job_id] = job;
    return job;
  }

  private newSubJob(jobType: string, entities: Record<string, string>): SubJobRec {
    return { job_id: this.newJobId(), job_type: jobType, status: 'RUNNING', begin_time: this.clock.now(), entities };
  }

  /** Finish a job without sub-jobs. */
  private endJob(jobId: string, ok: boolean, code?: string, reason?: string): void {
    const job = this.data.jobs[jobId];
    if (!job || job.status === 'SUCCESS' || job.status === 'FAIL') return;
    job.status = ok ? 'SUCCESS' : 'FAIL';
    job.end_time = this.clock.now();
    if (!ok) {
      job.error_code = code ?? Codes.internal;
      job.fail_reason = reason ?? 'operation failed';
    }
    this.record(ok ? 'job.succeeded' : 'job.failed', `job ${job.job_type} ${job.job_id} ${job.status}${ok ? '' : `: ${job.error_code} ${job.fail_reason}`}`, {
      jobId: job.job_id,
      jobType: job.job_type,
      ...(ok ? {} : { errorCode: job.error_code, failReason: job.fail_reason }),
    });
  }

  /** Finish the sub-job of `jobId` about `serverId`; the parent ends when every sub-job has. */
  private endSubJob(jobId: string, serverId: string, ok: boolean, code?: string, reason?: string): void {
    const job = this.data.jobs[jobId];
    if (!job?.sub_jobs) return;
    const sj = job.sub_jobs.find((s) => s.entities.server_id === serverId && (s.status === 'RUNNING' || s.status === 'INIT'));
    if (!sj) return;
    sj.status = ok ? 'SUCCESS' : 'FAIL';
    sj.end_time = this.clock.now();
    if (!ok) {
      sj.error_code = code ?? Codes.internal;
      sj.fail_reason = reason ?? 'operation failed';
    }
    if (job.sub_jobs.every((s) => s.status === 'SUCCESS' || s.status === 'FAIL')) {
      const failed = job.sub_jobs.find((s) => s.status === 'FAIL');
      this.endJob(jobId, !failed, failed?.error_code, failed?.fail_reason);
    } else if (job.status === 'INIT') {
      job.status = 'RUNNING';
    }
  }

  job(projectId: string, jobId: string): JobRec | undefined {
    const j = this.data.jobs[jobId];
    return j && j.projectId === projectId ? j : undefined;
  }

  // ---------------------------------------------------------------- lookups

  server(id: string) {
    const s = this.data.servers[id];
    if (!s) return undefined;
    return {
      id: s.id,
      name: s.name,
      status: s.status,
      projectId: s.projectId,
      ...(s.userData !== undefined ? { userData: Buffer.from(s.userData, 'base64').toString('utf8') } : {}),
      metadata: { ...s.metadata },
      ips: s.nics.map((n) => n.ip),
      volumes: s.volumes.map((v) => ({ volumeId: v.volumeId, device: v.device, ...(v.bootIndex !== undefined ? { bootIndex: v.bootIndex } : {}) })),
    };
  }

  serverRec(projectId: string, id: string): ServerRec | undefined {
    const s = this.data.servers[id];
    return s && s.projectId === projectId ? s : undefined;
  }

  volumeRec(projectId: string, id: string): VolumeRec | undefined {
    const v = this.data.volumes[id];
    return v && v.projectId === projectId ? v : undefined;
  }

  serversOf(projectId: string): ServerRec[] {
    const ids = this.store.serversByProject.get(projectId);
    const out: ServerRec[] = [];
    if (ids) for (const id of ids) out.push(this.data.servers[id]!);
    return out;
  }

  /**
   * The project's servers whose name may match the ECS `name` pattern, in
   * serversOf order: a superset of the matches (the caller applies the
   * pattern), usually a handful; undefined when the index cannot narrow the
   * pattern down (no literal part of 3 characters): then use serversOf.
   */
  serverNameCandidates(projectId: string, pattern: string): ServerRec[] | undefined {
    const ids = this.store.serversNameCandidates(projectId, pattern);
    return ids?.map((id) => this.data.servers[id]!);
  }

  /** The project's volumes attached or being attached to `serverId` (EVS `server_id`), in volumesOf order. */
  volumesOfServer(projectId: string, serverId: string): VolumeRec[] {
    return this.store.volumesOfServer(projectId, serverId);
  }

  volumesOf(projectId: string): VolumeRec[] {
    const recs = this.store.volumesByProject.get(projectId);
    return recs ? [...recs.values()] : [];
  }

  subnet(id: string): SubnetConfig | undefined {
    return this.subnets.get(id)?.cfg;
  }

  /** Subnet by VPC subnet id, neutron_network_id or (with `neutron`) neutron_subnet_id. */
  subnetInfo(id: string, neutron = false): SubnetInfo | undefined {
    return this.subnets.get(id) ?? (neutron ? this.neutronSubnets.get(id) : undefined);
  }

  flavorOffered(f: FlavorConfig, az: string): boolean {
    return this.flavorAzStatus(f, az, false).status !== 'abandon';
  }

  /**
   * Sell status of a flavor in an AZ (ECS `cond:operation:az`): the configured
   * `azStatus`, else `abandon` where it is not offered, `sellout` when the
   * capacity is used up or a capacity fault rule says so (with `dynamic`), else `normal`.
   */
  flavorAzStatus(f: FlavorConfig, az: string, dynamic = true): { status: FlavorAzStatus; reason?: string } {
    const fixed = f.azStatus?.[az];
    if (fixed) return { status: fixed, reason: `configured ${fixed}` };
    if (f.availabilityZones && !f.availabilityZones.includes(az)) return { status: 'abandon', reason: 'not offered in this availability zone' };
    if (!dynamic) return { status: 'normal' };
    const cap = this.capacityOf(f.id, az);
    if (cap.max !== undefined && cap.used >= cap.max) return { status: 'sellout', reason: `capacity ${cap.max} reached` };
    const injected = this.injectedSellout(f.id, az);
    if (injected) return { status: 'sellout', reason: injected };
    return { status: 'normal' };
  }

  /** Validate a requested fixed IP of a subnet (NET-7): a usable host address, not the gateway, not in use. */
  checkRequestedIp(subnet: SubnetInfo, ipText: string, path: string, v: Validator = ecsV, taken?: Set<string>): number {
    const ip = ipToInt(ipText);
    if (ip === undefined) v.fail(path, `"${ipText}" is not an IPv4 address`);
    if (!isHostInCidr(ip, subnet.cidr) || ip === subnet.gateway) {
      throw new CloudError(400, Codes.ecsIpOutsideSubnet, `The IP address ${ipText} is not a usable address of subnet ${subnet.cfg.name} (${subnet.cfg.cidr}, gateway ${subnet.cfg.gateway_ip}) (${path})`, ['NET-7']);
    }
    const holder = this.store.ipHolder(subnet.cfg.id, ipText);
    if (holder !== undefined || taken?.has(`${subnet.cfg.id}|${ipText}`)) {
      throw new CloudError(
        400,
        Codes.ecsIpInUse,
        `The private IP address ${ipText} is already in use in subnet ${subnet.cfg.name}${holder ? ` by ${holder.kind} ${holder.id}` : ''} (${path})`,
        ['NET-7'],
      );
    }
    return ip;
  }

  /** The next free IP of a subnet, or Ecs.0013 when it is exhausted (NET-7). */
  allocateIp(subnet: SubnetInfo, taken: Set<string>, path: string): string {
    const ip = this.freeIp(subnet, taken);
    if (ip === undefined) throw new CloudError(400, Codes.ecsNoFreeIp, `Subnet ${subnet.cfg.name} (${subnet.cfg.cidr}) has no free IP address left (${path})`, ['NET-7']);
    return ip;
  }

  /** A fresh UUID from the id stream (ports, private IPs). */
  newUuid(): string {
    return this.ids.uuid();
  }

  newMac(): string {
    return `fa:16:3e:${this.ids.hex(2)}:${this.ids.hex(2)}:${this.ids.hex(2)}`;
  }

  // ---------------------------------------------------------------- hypervisor view

  volume(id: string) {
    const v = this.data.volumes[id];
    if (!v) return undefined;
    return {
      id: v.id,
      name: v.name,
      size: v.size,
      status: v.status,
      metadata: { ...v.metadata },
      ...(v.attachment ? { attachedTo: v.attachment.serverId } : {}),
      fs: { ...(v.fs.fsType !== undefined ? { fsType: v.fs.fsType } : {}), ...(v.fs.label !== undefined ? { label: v.fs.label } : {}), files: { ...v.fs.files } },
    };
  }

  listVolumes() {
    return Object.values(this.data.volumes).map((v) => ({
      id: v.id,
      name: v.name,
      status: v.status,
      metadata: { ...v.metadata },
      ...(v.attachment ? { attachedTo: v.attachment.serverId } : {}),
    }));
  }

  listServers() {
    return Object.values(this.data.servers).map((s) => ({ id: s.id, name: s.name, status: s.status }));
  }

  private fsVolume(volumeId: string): VolumeRec {
    const v = this.data.volumes[volumeId];
    if (!v) throw new Error(`hypervisor: volume ${volumeId} does not exist`);
    return v;
  }

  format(volumeId: string, fsType: string, label: string): void {
    const v = this.fsVolume(volumeId);
    v.fs = { fsType, label, files: {} };
    this.store.markDirty();
  }

  writeFile(volumeId: string, path: string, content: string): void {
    const v = this.fsVolume(volumeId);
    if (v.fs.fsType === undefined) throw new Error(`hypervisor: volume ${volumeId} is not formatted; cannot write ${path}`);
    v.fs.files[normPath(path)] = content;
    this.store.markDirty();
  }

  readFile(volumeId: string, path: string): string | undefined {
    const v = this.data.volumes[volumeId];
    if (!v || v.fs.fsType === undefined) return undefined;
    return v.fs.files[normPath(path)];
  }

  // ---------------------------------------------------------------- ECS: create

  createServers(projectId: string, body: unknown, clientToken?: string): CreateServersResult {
    const tokenKey = clientToken ? `${projectId}|${clientToken}` : undefined;
    if (tokenKey) {
      const prev = this.data.clientTokens[tokenKey];
      if (prev) {
        this.record('server.create-replayed', `X-Client-Token ${clientToken}: returning job ${prev.response.job_id} again, no new server`, {
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
    const image = this.images.get(imageRef);
    if (!image) throw new CloudError(400, Codes.ecsImageNotFound, `Image ${imageRef} could not be found (server.imageRef)`, ['TPL-6']);
    if ((image.status ?? 'active') !== 'active') {
      throw new CloudError(400, Codes.ecsImageNotFound, `Image ${imageRef} is not active (status ${image.status}) (server.imageRef)`, ['TPL-6']);
    }
    const flavorRef = ecsV.str(srv.flavorRef, 'server.flavorRef');
    const flavor = this.flavors.get(flavorRef);
    const azIn = ecsV.optStr(srv.availability_zone, 'server.availability_zone');
    if (azIn !== undefined && !this.azs.has(azIn)) {
      throw new CloudError(400, Codes.ecsBadRequest, `Invalid request parameter server.availability_zone: "${azIn}" is not an availability zone (valid: ${[...this.azs].join(', ')})`, ['TPL-2']);
    }
    if (!flavor) {
      throw new CloudError(400, Codes.ecsFlavorUnavailable, `Flavor ${flavorRef} could not be found (server.flavorRef; valid: ${[...this.flavors.keys()].join(', ')})`, ['TPL-2']);
    }
    const az = azIn ?? this.config.availabilityZones.find((a) => this.flavorOffered(flavor, a)) ?? '';
    if (!this.flavorOffered(flavor, az)) {
      const offered = this.config.availabilityZones.filter((a) => this.flavorOffered(flavor, a));
      throw new CloudError(400, Codes.ecsFlavorUnavailable, `Flavor ${flavorRef} is not available in availability zone ${az} (offered in: ${offered.join(', ') || 'none'})`, ['TPL-2']);
    }
    if (flavor.azStatus?.[az] === 'sellout') {
      throw new CloudError(400, Codes.ecsCapacity, `Insufficient capacity: flavor ${flavor.id} is sold out in availability zone ${az}. Try another flavor or availability zone.`, ['HCS-6', 'TPL-2', 'OPS-2']);
    }
    const vpcId = ecsV.str(srv.vpcid, 'server.vpcid');
    if (!this.vpcs.has(vpcId)) throw new CloudError(400, Codes.ecsVpcNotFound, `VPC ${vpcId} could not be found (server.vpcid)`);
    const count = ecsV.optInt(srv.count, 'server.count', 1, 500) ?? 1;
    const nicsIn = ecsV.arr(srv.nics, 'server.nics', 1, 12);
    const nicSpecs: { subnet: SubnetInfo; ip?: number; path: string }[] = [];
    const seenIps = new Set<string>();
    nicsIn.forEach((n, i) => {
      const path = `server.nics[${i}]`;
      const nic = ecsV.obj(n, path);
      const subnetId = ecsV.str(nic.subnet_id, `${path}.subnet_id`);
      const subnet = this.subnets.get(subnetId);
      if (!subnet) throw new CloudError(400, Codes.ecsSubnetNotFound, `Subnet ${subnetId} could not be found (${path}.subnet_id)`, ['NET-4']);
      if (subnet.cfg.vpc_id !== vpcId) {
        throw new CloudError(400, Codes.ecsSubnetNotFound, `Subnet ${subnetId} does not belong to VPC ${vpcId} (${path}.subnet_id)`, ['NET-4']);
      }
      const ipText = ecsV.optStr(nic.ip_address, `${path}.ip_address`);
      let ip: number | undefined;
      if (ipText !== undefined) {
        if (count > 1) ecsV.fail(`${path}.ip_address`, 'a fixed IP address cannot be used with count > 1');
        ip = this.checkRequestedIp(subnet, ipText, `${path}.ip_address`, ecsV, seenIps);
        seenIps.add(`${subnet.cfg.id}|${ipText}`);
      }
      nicSpecs.push({ subnet, ...(ip !== undefined ? { ip } : {}), path });
    });
    const rv = ecsV.obj(srv.root_volume, 'server.root_volume');
    const rootType = this.volumeType(ecsV, rv.volumetype, 'server.root_volume.volumetype');
    const minDisk = 40;
    const rootSize = ecsV.optInt(rv.size, 'server.root_volume.size', minDisk, 1024) ?? minDisk;
    const dataIn = ecsV.optArr(srv.data_volumes, 'server.data_volumes', 0, 23) ?? [];
    const dataSpecs = dataIn.map((d, i) => {
      const path = `server.data_volumes[${i}]`;
      const o = ecsV.obj(d, path);
      if (o.multiattach === true || o.shareable === true) ecsV.fail(`${path}.multiattach`, 'shared (multi-attach) volumes are not supported', ['DISK-9']);
      return {
        type: this.volumeType(ecsV, o.volumetype, `${path}.volumetype`),
        size: ecsV.int(o.size, `${path}.size`, 10, 32768),
        // Deviation from public ECS (default false): volumes created with the server are ephemeral (TPL-3) unless told otherwise.
        deleteOnTermination: ecsV.bool(o.delete_on_termination, `${path}.delete_on_termination`, true),
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
    this.checkQuota(projectId, Codes.ecsQuota, {
      instances: count,
      volumes: count * (1 + dataSpecs.length),
      gigabytes: count * (rootSize + dataSpecs.reduce((a, d) => a + d.size, 0)),
    });
    this.checkCapacity(flavor.id, az, count);

    // Allocate addresses for every server of the batch before creating anything (all or nothing).
    const plannedIps: string[][] = [];
    const batchTaken = new Set<string>();
    for (let c = 0; c < count; c++) {
      const ips: string[] = [];
      for (const spec of nicSpecs) {
        const ip = spec.ip !== undefined ? intToIp(spec.ip) : this.allocateIp(spec.subnet, batchTaken, spec.path);
        batchTaken.add(`${spec.subnet.cfg.id}|${ip}`);
        ips.push(ip);
      }
      plannedIps.push(ips);
    }

    const now = this.clock.now();
    const subJobs: SubJobRec[] = [];
    const serverIds: string[] = [];
    const job = this.newJob(projectId, 'createServer', {}, subJobs);
    for (let c = 0; c < count; c++) {
      const id = this.newServerId();
      const sName = count > 1 ? `${name}-${String(c + 1).padStart(4, '0')}` : name;
      const nics: NicRec[] = nicSpecs.map((spec, i) => ({
        subnetId: spec.subnet.cfg.id,
        ip: plannedIps[c]![i]!,
        portId: this.ids.uuid(),
        mac: this.newMac(),
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
        instanceName: `instance-${(++this.data.instanceSeq).toString(16).padStart(8, '0')}`,
        hostId: this.ids.hex(56),
        created: now,
        updated: now,
        deleteJobs: [],
        createJob: job.job_id,
        attaching: [],
      };
      const rootVol = this.makeVolume(projectId, {
        name: `${sName}-volume-0000`,
        size: rootSize,
        volumeType: rootType,
        az,
        metadata: {},
        bootable: true,
        imageId: image.id,
        status: 'creating',
      });
      rootVol.attachment = { serverId: id, device: '/dev/vda', attachmentId: this.ids.uuid(), attachedAt: now };
      this.store.noteVolumeServer(rootVol, id);
      s.volumes.push({ volumeId: rootVol.id, device: '/dev/vda', bootIndex: 0, deleteOnTermination: true });
      dataSpecs.forEach((d, i) => {
        const dev = `/dev/vd${String.fromCharCode('b'.charCodeAt(0) + i)}`;
        const vol = this.makeVolume(projectId, {
          name: `${sName}-volume-${String(i + 1).padStart(4, '0')}`,
          size: d.size,
          volumeType: d.type,
          az,
          metadata: d.metadata,
          bootable: false,
          status: 'creating',
        });
        vol.attachment = { serverId: id, device: dev, attachmentId: this.ids.uuid(), attachedAt: now };
        this.store.noteVolumeServer(vol, id);
        s.volumes.push({ volumeId: vol.id, device: dev, deleteOnTermination: d.deleteOnTermination });
      });
      this.data.servers[id] = s;
      this.store.indexServer(s);
      subJobs.push(this.newSubJob('createSingleServer', { server_id: id }));
      serverIds.push(id);
      this.schedule('server.build', id, this.duration(image.buildMs ?? flavor.buildMs ?? this.config.timings.serverBuildMs));
      this.record('server.created', `server ${sName} (${id}) BUILD in ${az}: flavor ${flavor.id}, image ${image.name}, ips ${nics.map((n) => n.ip).join(',')}`, {
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
      this.serverChanged(s);
      for (const v of s.volumes) this.volumeChanged(this.data.volumes[v.volumeId]!);
    }
    job.entities = { sub_jobs_total: subJobs.length };
    const response = { job_id: job.job_id, serverIds };
    if (tokenKey) this.data.clientTokens[tokenKey] = { projectId, response, at: now };
    this.store.markDirty();
    return { job_id: job.job_id, serverIds: [...serverIds] };
  }

  /** Current usage against the project's quotas. */
  quotaUsage(projectId: string): { instances: number; volumes: number; gigabytes: number } {
    const vols = this.volumesOf(projectId);
    return { instances: this.store.serversByProject.get(projectId)?.size ?? 0, volumes: vols.length, gigabytes: vols.reduce((a, v) => a + v.size, 0) };
  }

  private checkQuota(projectId: string, code: string, need: { instances?: number; volumes?: number; gigabytes?: number }): void {
    const quotas = this.projectsById.get(projectId)?.quotas;
    if (!quotas) return;
    const used = this.quotaUsage(projectId);
    for (const k of ['instances', 'volumes', 'gigabytes'] as const) {
      const limit = quotas[k];
      const n = need[k];
      if (limit === undefined || n === undefined) continue;
      if (used[k] + n > limit) {
        throw new CloudError(
          400,
          code,
          `Insufficient ${k} quota: quota ${limit}, used ${used[k]}, requested ${n}. Contact the administrator to increase the quota.`,
          ['HCS-6', 'OPS-2'],
        );
      }
    }
  }

  /** Servers of `flavor` in `az` (all projects) and the configured maximum, if any. */
  capacityOf(flavor: string, az: string): { used: number; max?: number } {
    const cap = this.config.capacity?.find((c) => c.flavor === flavor && c.availabilityZone === az);
    if (!cap) return { used: 0 };
    let used = 0;
    for (const s of Object.values(this.data.servers)) if (s.flavorId === flavor && s.az === az) used++;
    return { used, max: cap.max };
  }

  private checkCapacity(flavor: string, az: string, count: number): void {
    const { used, max } = this.capacityOf(flavor, az);
    if (max !== undefined && used + count > max) {
      throw new CloudError(
        400,
        Codes.ecsCapacity,
        `Insufficient capacity: flavor ${flavor} is sold out in availability zone ${az} (${Math.max(0, max - used)} left, ${count} requested). Try another flavor or availability zone.`,
        ['HCS-6', 'TPL-2', 'OPS-2'],
      );
    }
  }

  private volumeType(v: Validator, value: unknown, path: string): string {
    const t = v.str(value, path);
    if (!this.volumeTypes.has(t)) v.fail(path, `unknown volume type "${t}" (valid: ${[...this.volumeTypes].join(', ')})`);
    return t;
  }

  freeIp(subnet: SubnetInfo, batchTaken: Set<string>): string | undefined {
    const { first, last } = subnet.cidr;
    // Skip the network address, the gateway and the first few addresses the platform reserves (.1 - .3 on HCS-like clouds).
    for (let n = first + 4; n < last; n++) {
      if (n === subnet.gateway) continue;
      const ip = intToIp(n);
      if (this.store.ipHolder(subnet.cfg.id, ip) === undefined && !batchTaken.has(`${subnet.cfg.id}|${ip}`)) return ip;
    }
    return undefined;
  }

  private makeVolume(
    projectId: string,
    o: { name: string; size: number; volumeType: string; az: string; metadata: Record<string, string>; bootable: boolean; imageId?: string; status: VolumeRec['status'] },
  ): VolumeRec {
    const now = this.clock.now();
    const v: VolumeRec = {
      id: this.newVolumeId(),
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
    this.data.volumes[v.id] = v;
    this.store.indexVolume(v);
    return v;
  }

  private finishBuild(serverId: string): void {
    const s = this.data.servers[serverId];
    if (!s || s.status !== 'BUILD') return;
    const now = this.clock.now();
    s.status = 'ACTIVE';
    s.taskState = null;
    s.updated = now;
    s.launchedAt = now;
    for (const sv of s.volumes) {
      const v = this.data.volumes[sv.volumeId];
      if (v && v.status === 'creating') {
        v.status = 'in-use';
        v.updatedAt = now;
        this.volumeChanged(v);
      }
    }
    this.record('server.active', `server ${s.name} (${s.id}) ACTIVE`, { serverId: s.id, name: s.name });
    this.endSubJob(s.createJob, s.id, true);
    this.serverChanged(s);
  }

  // ---------------------------------------------------------------- ECS: delete

  deleteServers(projectId: string, body: unknown): { job_id: string } {
    const root = ecsV.obj(body, 'body');
    const list = ecsV.arr(root.servers, 'servers', 1, 1000);
    const ids = list.map((e, i) => ecsV.str(ecsV.obj(e, `servers[${i}]`).id, `servers[${i}].id`));
    const deleteVolume = ecsV.bool(root.delete_volume, 'delete_volume', false);
    ecsV.bool(root.delete_publicip, 'delete_publicip', false);
    const servers = ids.map((id) => {
      const s = this.serverRec(projectId, id);
      if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${id}] could not be found.`);
      return s;
    });
    const subJobs = servers.map((s) => this.newSubJob('deleteSingleServer', { server_id: s.id }));
    const job = this.newJob(projectId, 'deleteServer', { sub_jobs_total: subJobs.length }, subJobs);
    for (const s of servers) {
      s.deleteJobs.push(job.job_id);
      if (deleteVolume) s.deleteVolume = true;
      if (s.taskState === 'deleting') continue;
      if (s.status === 'BUILD') {
        this.cancelTasks(s.id);
        this.endSubJob(s.createJob, s.id, false, Codes.internal, `server ${s.id} was deleted before it became ACTIVE`);
      }
      if (s.actionJob) {
        // A stop/start/reboot in progress is abandoned: its sub-job fails.
        this.cancelTasks(s.id);
        this.endSubJob(s.actionJob, s.id, false, Codes.ecsServerState, `server ${s.id} was deleted during the operation`);
        delete s.actionJob;
      }
      s.taskState = 'deleting';
      s.updated = this.clock.now();
      this.schedule('server.delete', s.id, this.duration(this.config.timings.serverDeleteMs));
      this.record(
        'server.delete-requested',
        `delete server ${s.name} (${s.id})${deleteVolume ? ' with delete_volume=true (all attached data volumes will be deleted)' : ''}`,
        { serverId: s.id, name: s.name, deleteVolume, jobId: job.job_id },
      );
    }
    this.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishServerDelete(serverId: string): void {
    const s = this.data.servers[serverId];
    if (!s) return;
    const now = this.clock.now();
    // Volumes being attached to this server fall back to available; their attach jobs fail.
    for (const a of s.attaching) {
      const v = this.data.volumes[a.volumeId];
      if (!v) continue;
      this.cancelTasks(v.id);
      v.status = 'available';
      delete v.pendingServerId;
      delete v.pendingDevice;
      v.updatedAt = now;
      for (const j of v.jobs.splice(0)) this.endJob(j, false, Codes.ecsServerNotFound, `server ${s.id} was deleted during the attach`);
      this.volumeChanged(v);
    }
    for (const sv of s.volumes) {
      const v = this.data.volumes[sv.volumeId];
      if (!v) continue;
      const goes = v.status !== 'detaching' && (sv.bootIndex === 0 || sv.deleteOnTermination || s.deleteVolume === true);
      this.cancelTasks(v.id);
      if (goes) {
        const why = sv.bootIndex === 0 ? 'system disk' : sv.deleteOnTermination ? 'delete_on_termination' : 'delete_volume=true';
        this.removeVolume(v, `deleted with server ${s.name} (${why})`, sv.deleteOnTermination || sv.bootIndex === 0 ? [] : ['DISK-9']);
      } else {
        const wasDetaching = v.status === 'detaching';
        v.status = 'available';
        delete v.attachment;
        v.updatedAt = now;
        for (const j of v.jobs.splice(0)) this.endJob(j, true);
        this.record('volume.detached', `volume ${v.name} (${v.id}) detached from deleted server ${s.name}; it survives and is available`, { volumeId: v.id, serverId: s.id, wasDetaching }, ['DISK-9']);
        this.volumeChanged(v);
      }
    }
    this.store.unindexServer(s);
    delete this.data.servers[s.id];
    this.record('server.deleted', `server ${s.name} (${s.id}) deleted; released ${s.nics.map((n) => n.ip).join(',')}`, { serverId: s.id, name: s.name, ips: s.nics.map((n) => n.ip) });
    for (const j of s.deleteJobs) this.endSubJob(j, s.id, true);
    this.serverChanged(s, 'DELETED');
  }

  private removeVolume(v: VolumeRec, why: string, rules: string[] = []): void {
    this.cancelTasks(v.id);
    this.store.unindexVolume(v);
    delete this.data.volumes[v.id];
    for (const j of v.jobs.splice(0)) this.endJob(j, true);
    this.record('volume.deleted', `volume ${v.name} (${v.id}) ${why}`, { volumeId: v.id, name: v.name }, rules);
    this.volumeChanged(v, 'deleted');
  }

  // ---------------------------------------------------------------- ECS: stop / start / reboot

  /** POST /cloudservers/action with one of os-stop, os-start, reboot (all or nothing). */
  serverAction(projectId: string, body: unknown): { job_id: string } {
    const root = ecsV.obj(body, 'body');
    const present = (Object.keys(ACTION_JOB) as ServerAction[]).filter((k) => root[k] !== undefined);
    const extra = Object.keys(root).filter((k) => !(k in ACTION_JOB));
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
      const s = this.serverRec(projectId, id);
      if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${id}] could not be found.`);
      return s;
    });
    const need: Record<ServerAction, ServerRec['status']> = { 'os-stop': 'ACTIVE', 'os-start': 'SHUTOFF', reboot: 'ACTIVE' };
    for (const s of servers) {
      const busy = s.taskState === 'deleting' ? 'being deleted' : s.actionJob ? `busy (${s.taskState ?? 'operation in progress'})` : undefined;
      if (busy || s.status !== need[action]) {
        throw new CloudError(409, Codes.ecsServerState, `Cannot ${ACTION_JOB[action].verb} server ${s.id} while it is ${busy ?? s.status} (needs ${need[action]})`, ['HCS-1']);
      }
    }
    const spec = ACTION_JOB[action];
    const subJobs = servers.map((s) => this.newSubJob(spec.sub, { server_id: s.id }));
    const job = this.newJob(projectId, spec.job, { sub_jobs_total: subJobs.length }, subJobs);
    const t = this.config.timings;
    const base = action === 'os-stop' ? (t.serverStopMs ?? DEFAULT_ACTION_MS.stop) : action === 'os-start' ? (t.serverStartMs ?? DEFAULT_ACTION_MS.start) : (t.serverRebootMs ?? DEFAULT_ACTION_MS.reboot);
    for (const s of servers) {
      s.actionJob = job.job_id;
      s.updated = this.clock.now();
      if (action === 'os-stop') s.taskState = 'powering-off';
      else if (action === 'os-start') s.taskState = 'powering-on';
      else {
        s.status = type === 'HARD' ? 'HARD_REBOOT' : 'REBOOT';
        s.taskState = type === 'HARD' ? 'rebooting_hard' : 'rebooting';
      }
      this.schedule(spec.kind, s.id, this.duration(base));
      this.record(`server.${spec.verb}-requested`, `${spec.verb}${action === 'os-start' ? '' : ` (${type})`} server ${s.name} (${s.id})`, { serverId: s.id, name: s.name, type, jobId: job.job_id }, ['HCS-1']);
      if (action === 'reboot') this.serverChanged(s);
    }
    this.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishAction(kind: TaskKind, serverId: string): void {
    const s = this.data.servers[serverId];
    if (!s || !s.actionJob) return;
    const job = s.actionJob;
    delete s.actionJob;
    s.status = kind === 'server.stop' ? 'SHUTOFF' : 'ACTIVE';
    s.taskState = null;
    s.updated = this.clock.now();
    const type = kind === 'server.stop' ? 'server.stopped' : kind === 'server.start' ? 'server.started' : 'server.rebooted';
    this.record(type, `server ${s.name} (${s.id}) ${s.status}`, { serverId: s.id, name: s.name, status: s.status }, ['HCS-1']);
    this.endSubJob(job, s.id, true);
    this.serverChanged(s);
  }

  // ---------------------------------------------------------------- ECS: attach / detach

  attachVolume(projectId: string, serverId: string, body: unknown): { job_id: string } {
    const root = ecsV.obj(body, 'body');
    const va = ecsV.obj(root.volumeAttachment, 'volumeAttachment');
    const volumeId = ecsV.str(va.volumeId, 'volumeAttachment.volumeId');
    const deviceIn = ecsV.optStr(va.device, 'volumeAttachment.device', { pattern: DEVICE, patternText: '/dev/vdX, /dev/sdX or /dev/xvdX' });
    const s = this.serverRec(projectId, serverId);
    if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${serverId}] could not be found.`);
    if (s.taskState === 'deleting' || (s.status !== 'ACTIVE' && s.status !== 'SHUTOFF')) {
      throw new CloudError(409, Codes.ecsServerState, `Cannot attach a volume to server ${serverId} while it is ${s.taskState === 'deleting' ? 'being deleted' : s.status}`);
    }
    const v = this.volumeRec(projectId, volumeId);
    if (!v) throw new CloudError(404, Codes.ecsVolumeNotFound, `Volume ${volumeId} could not be found (volumeAttachment.volumeId)`);
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
      throw new CloudError(400, Codes.ecsAzMismatch, `Volume ${volumeId} is in availability zone ${v.az} but server ${serverId} is in ${s.az}`, ['DISK-3']);
    }
    const used = new Set([...s.volumes.map((x) => x.device), ...s.attaching.map((x) => x.device)]);
    let device = deviceIn;
    if (device !== undefined && used.has(device)) throw new CloudError(400, Codes.ecsDeviceInUse, `Device ${device} is already in use on server ${serverId}`);
    if (device === undefined) {
      for (let c = 'b'.charCodeAt(0); c <= 'z'.charCodeAt(0); c++) {
        const d = `/dev/vd${String.fromCharCode(c)}`;
        if (!used.has(d)) {
          device = d;
          break;
        }
      }
      if (device === undefined) throw new CloudError(400, Codes.ecsDeviceInUse, `Server ${serverId} has no free device name left`);
    }
    const job = this.newJob(projectId, 'attachVolume', { server_id: serverId, volume_id: volumeId });
    v.status = 'attaching';
    v.pendingServerId = serverId;
    this.store.noteVolumeServer(v, serverId);
    v.pendingDevice = device;
    v.updatedAt = this.clock.now();
    v.jobs.push(job.job_id);
    s.attaching.push({ volumeId, device });
    this.schedule('volume.attach', v.id, this.duration(this.config.timings.volumeAttachMs));
    this.record('volume.attach-requested', `attach volume ${v.name} (${v.id}) to server ${s.name} (${s.id}) as ${device}`, {
      volumeId: v.id,
      serverId: s.id,
      device,
      jobId: job.job_id,
    });
    this.volumeChanged(v);
    this.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishAttach(volumeId: string): void {
    const v = this.data.volumes[volumeId];
    if (!v || v.status !== 'attaching' || !v.pendingServerId) return;
    const s = this.data.servers[v.pendingServerId];
    const device = v.pendingDevice ?? '/dev/vdb';
    delete v.pendingServerId;
    delete v.pendingDevice;
    const now = this.clock.now();
    v.updatedAt = now;
    if (!s) {
      v.status = 'available';
      for (const j of v.jobs.splice(0)) this.endJob(j, false, Codes.ecsServerNotFound, 'server disappeared during the attach');
      this.volumeChanged(v);
      return;
    }
    s.attaching = s.attaching.filter((a) => a.volumeId !== v.id);
    s.volumes.push({ volumeId: v.id, device, deleteOnTermination: false });
    s.updated = now;
    v.status = 'in-use';
    v.attachment = { serverId: s.id, device, attachmentId: this.ids.uuid(), attachedAt: now };
    this.store.noteVolumeServer(v, s.id);
    for (const j of v.jobs.splice(0)) this.endJob(j, true);
    this.record('volume.attached', `volume ${v.name} (${v.id}) in-use on server ${s.name} (${s.id}) as ${device}`, { volumeId: v.id, serverId: s.id, device });
    this.volumeChanged(v);
  }

  detachVolume(projectId: string, serverId: string, volumeId: string): { job_id: string } {
    const s = this.serverRec(projectId, serverId);
    if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${serverId}] could not be found.`);
    const sv = s.volumes.find((x) => x.volumeId === volumeId);
    const v = this.volumeRec(projectId, volumeId);
    if (!sv || !v) throw new CloudError(400, Codes.ecsVolumeNotAttached, `Volume ${volumeId} is not attached to server ${serverId}`);
    if (sv.bootIndex === 0 && s.status !== 'SHUTOFF') {
      throw new CloudError(400, Codes.ecsBadRequest, `Volume ${volumeId} is the system disk of server ${serverId}; stop the server before detaching it`);
    }
    if (s.taskState === 'deleting') throw new CloudError(409, Codes.ecsServerState, `Server ${serverId} is being deleted`);
    if (v.status !== 'detaching' && v.status !== 'in-use') {
      throw new CloudError(400, Codes.ecsVolumeNotAvailable, `Volume ${volumeId} cannot be detached while ${v.status}`);
    }
    const job = this.newJob(projectId, 'detachVolume', { server_id: serverId, volume_id: volumeId });
    v.jobs.push(job.job_id);
    if (v.status !== 'detaching') {
      v.status = 'detaching';
      v.updatedAt = this.clock.now();
      this.schedule('volume.detach', v.id, this.duration(this.config.timings.volumeDetachMs));
      this.volumeChanged(v);
    }
    this.record('volume.detach-requested', `detach volume ${v.name} (${v.id}) from server ${s.name} (${s.id})`, { volumeId: v.id, serverId: s.id, jobId: job.job_id });
    this.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishDetach(volumeId: string): void {
    const v = this.data.volumes[volumeId];
    if (!v || v.status !== 'detaching') return;
    const now = this.clock.now();
    const serverId = v.attachment?.serverId;
    const s = serverId ? this.data.servers[serverId] : undefined;
    if (s) {
      s.volumes = s.volumes.filter((x) => x.volumeId !== v.id);
      s.updated = now;
    }
    delete v.attachment;
    v.status = 'available';
    v.updatedAt = now;
    for (const j of v.jobs.splice(0)) this.endJob(j, true);
    this.record('volume.detached', `volume ${v.name} (${v.id}) detached from server ${s?.name ?? serverId}; available`, { volumeId: v.id, serverId });
    this.volumeChanged(v);
  }

  // ---------------------------------------------------------------- EVS

  createVolume(projectId: string, body: unknown): { job_id: string; volume_ids: string[] } {
    const root = evsV.obj(body, 'body');
    const vol = evsV.obj(root.volume, 'volume');
    const az = evsV.str(vol.availability_zone, 'volume.availability_zone');
    if (!this.azs.has(az)) evsV.fail('volume.availability_zone', `"${az}" is not an availability zone (valid: ${[...this.azs].join(', ')})`);
    const size = evsV.int(vol.size, 'volume.size', 10, 32768);
    const type = this.volumeType(evsV, vol.volume_type, 'volume.volume_type');
    const name = evsV.optStr(vol.name, 'volume.name', { max: 255 }) ?? `volume-${this.ids.hex(4)}`;
    const metadata = evsV.stringMap(vol.metadata, 'volume.metadata');
    if (evsV.bool(vol.multiattach, 'volume.multiattach', false)) evsV.fail('volume.multiattach', 'shared (multi-attach) volumes are not supported', ['DISK-9']);
    const count = evsV.optInt(vol.count, 'volume.count', 1, 100) ?? 1;
    if (root.bss_param !== undefined) evsV.optObj(root.bss_param, 'bss_param');
    this.checkQuota(projectId, Codes.evsQuota, { volumes: count, gigabytes: count * size });
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
    const job = this.newJob(projectId, 'batchCreateVolumes', count > 1 ? { volume_ids: vols.map((v) => v.id) } : { volume_type: type, size, volume_id: vols[0]!.id, name });
    if (count === 1) job.job_type = 'createVolume';
    for (const v of vols) {
      v.jobs.push(job.job_id);
      this.schedule('volume.create', v.id, this.duration(this.config.timings.volumeCreateMs));
      this.record('volume.created', `volume ${v.name} (${v.id}) creating: ${size} GB ${type} in ${az}`, { volumeId: v.id, name: v.name, size, type, az, metadata, jobId: job.job_id });
      this.volumeChanged(v);
    }
    this.store.markDirty();
    return { job_id: job.job_id, volume_ids: vols.map((v) => v.id) };
  }

  private finishVolumeCreate(volumeId: string): void {
    const v = this.data.volumes[volumeId];
    if (!v || v.status !== 'creating') return;
    v.status = 'available';
    v.updatedAt = this.clock.now();
    const jobs = v.jobs.splice(0);
    this.record('volume.available', `volume ${v.name} (${v.id}) available`, { volumeId: v.id });
    this.volumeChanged(v);
    for (const j of jobs) {
      // A batch job ends when none of its volumes is still creating.
      const job = this.data.jobs[j];
      const ids = (job?.entities.volume_ids as string[] | undefined) ?? [v.id];
      if (ids.every((id) => this.data.volumes[id]?.status !== 'creating')) this.endJob(j, true);
    }
  }

  /**
   * EVS UpdateVolume (PUT /v2/{project_id}/cloudvolumes/{volume_id}): name,
   * description and metadata keys (merged; null values remove a key).
   */
  updateVolume(projectId: string, volumeId: string, body: unknown): VolumeRec {
    const v = this.volumeRec(projectId, volumeId);
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
      else v.metadata[k] = val;
    }
    v.updatedAt = this.clock.now();
    this.record('volume.updated', `volume ${v.name} (${v.id}) updated`, { volumeId: v.id });
    this.volumeChanged(v);
    this.store.markDirty();
    return v;
  }

  deleteVolume(projectId: string, volumeId: string): { job_id: string } {
    const v = this.volumeRec(projectId, volumeId);
    if (!v) throw new CloudError(404, Codes.evsNotFound, `Volume ${volumeId} could not be found.`);
    if (v.attachment || v.pendingServerId || v.status === 'in-use' || v.status === 'attaching' || v.status === 'detaching') {
      throw new CloudError(400, Codes.evsInUse, `Volume ${volumeId} is ${v.status}${v.attachment ? ` on server ${v.attachment.serverId}` : ''}; detach it before deleting it`, ['DISK-9']);
    }
    if (v.status === 'creating') throw new CloudError(400, Codes.evsBadRequest, `Volume ${volumeId} cannot be deleted while creating`);
    const job = this.newJob(projectId, 'deleteVolume', { volume_id: volumeId });
    v.jobs.push(job.job_id);
    if (v.status !== 'deleting') {
      v.status = 'deleting';
      v.updatedAt = this.clock.now();
      this.schedule('volume.delete', v.id, this.duration(this.config.timings.volumeDeleteMs));
      this.volumeChanged(v);
    }
    this.record('volume.delete-requested', `delete volume ${v.name} (${v.id})`, { volumeId: v.id, jobId: job.job_id });
    this.store.markDirty();
    return { job_id: job.job_id };
  }

  private finishVolumeDelete(volumeId: string): void {
    const v = this.data.volumes[volumeId];
    if (!v || v.status !== 'deleting') return;
    this.removeVolume(v, 'deleted');
  }
}

function normPath(p: string): string {
  return p.replace(/^\/+/, '').replace(/\/+/g, '/');
}

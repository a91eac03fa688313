/**
 * The fake cloud's domain logic (no HTTP here), as one facade over the
 * per-service modules under services/ (one service per cloud API, as
 * cluster-api-provider-openstack keeps them under pkg/cloud/services):
 *
 * - services/ecs.ts, services/ecs-volumes.ts: servers, attach / detach;
 * - services/evs.ts: volumes;
 * - services/scheduler.ts: the shared task scheduler (timed transitions);
 * - services/jobs.ts: the shared job store;
 * - services/ids.ts: the one id allocator;
 * - services/ipam.ts, services/catalog.ts: subnets and IPs, what is offered.
 *
 * Every delay goes through the injected Clock, every random choice through
 * the injected Rng. Routes and the HTTP layer call this facade, or a service
 * of it (engine.ecs, engine.evs, engine.ecsVolumes) for an operation of that
 * service alone; it is also the testbed's Hypervisor view.
 */
import type { Clock, EventLog, Rng } from '../../src/core/index.js';
import type { CloudConfig, FlavorAzStatus, FlavorConfig, ImageConfig, ProjectConfig, QuotaConfig, SubnetConfig, VpcConfig } from './config.js';
import type { DbData, JobRec, ServerRec, Store, TaskRec, VolumeFs, VolumeRec } from './state.js';
import { CloudCore, type ServerChange, type VolumeChange } from './services/core.js';
import { EcsService, type CreateServersResult } from './services/ecs.js';
import { EcsVolumeService } from './services/ecs-volumes.js';
import { EvsService } from './services/evs.js';
import type { IpApi, SubnetInfo } from './services/ipam.js';
import type { QuotaUsage } from './errors.js';
import type { CallEffects } from './services/scheduler.js';
import { own, setOwn, type Validator } from './validate.js';

export type { ServerChange, VolumeChange } from './services/core.js';
export type { CreateServersResult, ServerAction } from './services/ecs.js';
export type { SubnetInfo } from './services/ipam.js';
export type { CallEffects } from './services/scheduler.js';

export interface Hypervisor {
  server(id: string):
    | {
        id: string;
        name: string;
        status: string;
        projectId: string;
        /** The user data as text, decoded from base64 on each read (a getter): read it once. */
        readonly userData?: string;
        metadata: Record<string, string>;
        ips: string[];
        volumes: { volumeId: string; device: string; bootIndex?: number }[];
        /** The availability zone the server was built in. */
        availabilityZone: string;
        /** The flavor (flavorRef) and IMS image id it was built with. */
        flavorId: string;
        imageId: string;
      }
    | undefined;
  volume(
    id: string,
  ): { id: string; name: string; size: number; volumeType: string; status: string; metadata: Record<string, string>; attachedTo?: string; fs: VolumeFs } | undefined;
  listVolumes(): { id: string; name: string; size: number; volumeType: string; status: string; metadata: Record<string, string>; attachedTo?: string }[];
  listServers(): { id: string; name: string; status: string }[];
  /** Every server's status and metadata (a copy), in listServers order: what a cloud controller reads of each instance. */
  listServerMetadata(): { id: string; status: string; metadata: Record<string, string> }[];
  format(volumeId: string, fsType: string, label: string): void;
  writeFile(volumeId: string, path: string, content: string): void;
  readFile(volumeId: string, path: string): string | undefined;
}

export class CloudEngine implements Hypervisor {
  readonly core: CloudCore;
  /** The services: a route calls its service's operation directly (routes/evs.ts: engine.evs.resizeVolume). */
  readonly ecs: EcsService;
  readonly ecsVolumes: EcsVolumeService;
  readonly evs: EvsService;

  constructor(
    private readonly store: Store,
    readonly config: CloudConfig,
    clock: Clock,
    rng: Rng,
    events?: EventLog,
  ) {
    this.core = new CloudCore(store, config, clock, rng, events);
    this.evs = new EvsService(this.core);
    this.core.evs = this.evs;
    this.ecs = new EcsService(this.core);
    this.ecsVolumes = new EcsVolumeService(this.core);
  }

  private get data() {
    return this.store.data;
  }

  get projectsByAk(): Map<string, ProjectConfig> {
    return this.core.catalog.projectsByAk;
  }

  get projectsById(): Map<string, ProjectConfig> {
    return this.core.catalog.projectsById;
  }

  get flavors(): Map<string, FlavorConfig> {
    return this.core.catalog.flavors;
  }

  get images(): Map<string, ImageConfig> {
    return this.core.catalog.images;
  }

  get vpcs(): Map<string, VpcConfig> {
    return this.core.catalog.vpcs;
  }

  /** Capacity fault rules that make a flavor sold out in an AZ (set by createMockHcs). */
  set injectedSellout(fn: (flavorId: string, az: string) => string | undefined) {
    this.core.catalog.injectedSellout = fn;
  }

  get storeRef(): Store {
    return this.store;
  }

  // ---------------------------------------------------------------- plumbing

  /** Re-arm every persisted task (after open or restart); stuck tasks stay parked. */
  start(): void {
    this.core.tasks.start();
  }

  stop(): void {
    this.core.tasks.stop();
  }

  /**
   * Swap the whole state (admin reset / restore): cancel every timer, replace
   * the document, re-arm its tasks. `resetRng` restarts the id and jitter
   * streams, so a reset cloud hands out the same ids as a fresh one.
   */
  reload(data: DbData, resetRng: boolean): void {
    this.stop();
    if (resetRng) this.core.restartStreams();
    this.store.replace(data);
    this.start();
  }

  withEffects<T>(effects: CallEffects | undefined, fn: () => T): T {
    return this.core.tasks.withEffects(effects, fn);
  }

  releaseStuck(target?: string): number {
    return this.core.tasks.releaseStuck(target);
  }

  stuckTasks(): TaskRec[] {
    return this.core.tasks.stuckTasks();
  }

  record(type: string, message: string, data?: Record<string, unknown>, rules?: string[]): void {
    this.core.record(type, message, data, rules);
  }

  recordFault(type: string, message: string, data: Record<string, unknown>, rules: string[] = ['HCS-6']): void {
    this.core.recordFault(type, message, data, rules);
  }

  onServerChange(fn: (s: ServerChange) => void): () => void {
    return this.core.onServerChange(fn);
  }

  onVolumeChange(fn: (v: VolumeChange) => void): () => void {
    return this.core.onVolumeChange(fn);
  }

  // ---------------------------------------------------------------- services

  createServers(projectId: string, body: unknown, clientToken?: string): CreateServersResult {
    return this.ecs.createServers(projectId, body, clientToken);
  }

  deleteServers(projectId: string, body: unknown): { job_id: string } {
    return this.ecs.deleteServers(projectId, body);
  }

  serverAction(projectId: string, body: unknown): { job_id: string } {
    return this.ecs.serverAction(projectId, body);
  }

  attachVolume(projectId: string, serverId: string, body: unknown): { job_id: string } {
    return this.ecsVolumes.attachVolume(projectId, serverId, body);
  }

  detachVolume(projectId: string, serverId: string, volumeId: string): { job_id: string } {
    return this.ecsVolumes.detachVolume(projectId, serverId, volumeId);
  }

  createVolume(projectId: string, body: unknown): { job_id: string; volume_ids: string[] } {
    return this.evs.createVolume(projectId, body);
  }

  updateVolume(projectId: string, volumeId: string, body: unknown): VolumeRec {
    return this.evs.updateVolume(projectId, volumeId, body);
  }

  deleteVolume(projectId: string, volumeId: string): { job_id: string } {
    return this.evs.deleteVolume(projectId, volumeId);
  }

  job(projectId: string, jobId: string): JobRec | undefined {
    return this.core.jobs.job(projectId, jobId);
  }

  // ---------------------------------------------------------------- lookups

  server(id: string) {
    const s = own(this.data.servers, id);
    if (!s) return undefined;
    const metadata = { ...s.metadata };
    const ips = s.nics.map((n) => n.ip);
    const volumes = s.volumes.map((v) => ({ volumeId: v.volumeId, device: v.device, ...(v.bootIndex !== undefined ? { bootIndex: v.bootIndex } : {}) }));
    const raw = s.userData;
    if (raw === undefined) return { id: s.id, name: s.name, status: s.status, projectId: s.projectId, metadata, ips, volumes, availabilityZone: s.az, flavorId: s.flavorId, imageId: s.imageId };
    // The user data (up to 32 KB of base64) is decoded when read: most callers want the metadata or the volumes.
    return {
      id: s.id,
      name: s.name,
      status: s.status,
      projectId: s.projectId,
      get userData(): string {
        return Buffer.from(raw, 'base64').toString('utf8');
      },
      metadata,
      ips,
      volumes,
      availabilityZone: s.az,
      flavorId: s.flavorId,
      imageId: s.imageId,
    };
  }

  serverRec(projectId: string, id: string): ServerRec | undefined {
    return this.core.serverRec(projectId, id);
  }

  volumeRec(projectId: string, id: string): VolumeRec | undefined {
    return this.core.volumeRec(projectId, id);
  }

  /**
   * One page of the project's servers in serversOf order, and how many there
   * are: O(start + count), not O(servers), for unfiltered ECS list pages.
   */
  serversPage(projectId: string, start: number, count: number): { total: number; servers: ServerRec[] } {
    const ids = this.store.serversByProject.get(projectId);
    const servers: ServerRec[] = [];
    if (!ids || start >= ids.size) return { total: ids?.size ?? 0, servers };
    let i = 0;
    for (const id of ids) {
      if (i >= start + count) break;
      if (i >= start) servers.push(this.data.servers[id]!);
      i++;
    }
    return { total: ids.size, servers };
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

  /**
   * The project's volumes with one of `pairs`' metadata (the one the fewest
   * carry), in volumesOf order: the candidates of an EVS `metadata` filter,
   * each still to be tested against every pair. Undefined without pairs.
   */
  volumesWithMetadata(projectId: string, pairs: readonly (readonly [string, string])[]): VolumeRec[] | undefined {
    return this.store.volumesWithMetadata(projectId, pairs);
  }

  volumesOf(projectId: string): VolumeRec[] {
    const recs = this.store.volumesByProject.get(projectId);
    return recs ? [...recs.values()] : [];
  }

  subnet(id: string): SubnetConfig | undefined {
    return this.core.ipam.subnet(id);
  }

  /** Subnet by VPC subnet id, neutron_network_id or (with `neutron`) neutron_subnet_id. */
  /** The injected clock's time (ms). */
  now(): number {
    return this.core.clock.now();
  }

  subnetInfo(id: string, neutron = false): SubnetInfo | undefined {
    return this.core.ipam.subnetInfo(id, neutron);
  }

  flavorOffered(f: FlavorConfig, az: string): boolean {
    return this.core.catalog.flavorOffered(f, az);
  }

  flavorAzStatus(f: FlavorConfig, az: string, dynamic = true): { status: FlavorAzStatus; reason?: string } {
    return this.core.catalog.flavorAzStatus(f, az, dynamic);
  }

  quotasOf(projectId: string): QuotaConfig | undefined {
    return this.core.catalog.quotasOf(projectId);
  }

  /** Replace a project's quotas at run time (PUT /_admin/quotas); false for an unknown project. */
  setQuotas(projectId: string, quotas: QuotaConfig): boolean {
    if (!this.core.catalog.projectsById.has(projectId)) return false;
    this.core.catalog.setQuotas(projectId, quotas);
    return true;
  }

  quotaUsage(projectId: string): QuotaUsage {
    return this.core.catalog.quotaUsage(projectId);
  }

  capacityOf(flavor: string, az: string): { used: number; max?: number } {
    return this.core.catalog.capacityOf(flavor, az);
  }

  checkRequestedIp(subnet: SubnetInfo, ipText: string, path: string, v: Validator, projectId: string, taken?: Set<string>, api: IpApi = 'ecs'): number {
    return this.core.ipam.checkRequestedIp(subnet, ipText, path, v, projectId, taken, api);
  }

  allocateIp(subnet: SubnetInfo, taken: Set<string>, path: string, api: IpApi = 'ecs'): string {
    return this.core.ipam.allocateIp(subnet, taken, path, api);
  }

  /** A fresh port id from the id stream (VPC ports, private IPs). */
  newPortId(): string {
    return this.core.ids.newPortId();
  }

  newMac(): string {
    return this.core.ids.mac();
  }

  // ---------------------------------------------------------------- hypervisor view

  volume(id: string) {
    const v = own(this.data.volumes, id);
    if (!v) return undefined;
    return {
      id: v.id,
      name: v.name,
      size: v.size,
      volumeType: v.volumeType,
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
      size: v.size,
      volumeType: v.volumeType,
      status: v.status,
      metadata: { ...v.metadata },
      ...(v.attachment ? { attachedTo: v.attachment.serverId } : {}),
    }));
  }

  listServers() {
    return Object.values(this.data.servers).map((s) => ({ id: s.id, name: s.name, status: s.status }));
  }

  listServerMetadata() {
    return Object.values(this.data.servers).map((s) => ({ id: s.id, status: s.status, metadata: { ...s.metadata } }));
  }

  private fsVolume(volumeId: string): VolumeRec {
    const v = own(this.data.volumes, volumeId);
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
    setOwn(v.fs.files, normPath(path), content);
    this.store.markDirty();
  }

  readFile(volumeId: string, path: string): string | undefined {
    const v = own(this.data.volumes, volumeId);
    if (!v || v.fs.fsType === undefined) return undefined;
    return own(v.fs.files, normPath(path));
  }
}

function normPath(p: string): string {
  return p.replace(/^\/+/, '').replace(/\/+/g, '/');
}

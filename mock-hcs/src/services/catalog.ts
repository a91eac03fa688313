/**
 * What the cloud offers (from its configuration): projects, flavors and
 * their sell status per AZ, images, VPCs, volume types; and the project
 * quotas and flavor capacity checked before a create.
 */
import { DEFAULT_VOLUME_TYPES, type QuotaConfig, type CloudConfig, type FlavorAzStatus, type FlavorConfig, type ImageConfig, type ProjectConfig, type VpcConfig } from '../config.js';
import { CloudError, Codes, QUOTA_RESOURCES, quotaCode, type QuotaUsage } from '../errors.js';
import type { Store } from '../state.js';
import type { Validator } from '../validate.js';

export class CatalogService {
  readonly projectsByAk = new Map<string, ProjectConfig>();
  readonly projectsById = new Map<string, ProjectConfig>();
  readonly flavors = new Map<string, FlavorConfig>();
  readonly images = new Map<string, ImageConfig>();
  readonly vpcs = new Map<string, VpcConfig>();
  readonly azs: Set<string>;
  private readonly volumeTypes: Set<string>;
  /**
   * Capacity fault rules that make a flavor sold out in an AZ (set by createMockHcs):
   * returns a reason, or undefined. Shown as `sellout` by ListFlavors and the catalog.
   */
  injectedSellout: (flavorId: string, az: string) => string | undefined = () => undefined;

  constructor(
    private readonly store: Store,
    private readonly config: CloudConfig,
  ) {
    for (const p of config.projects) {
      this.projectsByAk.set(p.ak, p);
      this.projectsById.set(p.id, p);
    }
    for (const f of config.flavors) this.flavors.set(f.id, f);
    for (const i of config.images) this.images.set(i.id, i);
    for (const v of config.vpcs) this.vpcs.set(v.id, v);
    this.azs = new Set(config.availabilityZones);
    this.volumeTypes = new Set(config.volumeTypes ?? DEFAULT_VOLUME_TYPES);
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
    const fixed = f.azStatus && Object.hasOwn(f.azStatus, az) ? f.azStatus[az] : undefined;
    if (fixed) return { status: fixed, reason: `configured ${fixed}` };
    if (f.availabilityZones && !f.availabilityZones.includes(az)) return { status: 'abandon', reason: 'not offered in this availability zone' };
    if (!dynamic) return { status: 'normal' };
    const cap = this.capacityOf(f.id, az);
    if (cap.max !== undefined && cap.used >= cap.max) return { status: 'sellout', reason: `capacity ${cap.max} reached` };
    const injected = this.injectedSellout(f.id, az);
    if (injected) return { status: 'sellout', reason: injected };
    return { status: 'normal' };
  }

  /** Quotas set at run time (PUT /_admin/quotas/{project_id}); they replace the configured ones of that project. */
  private readonly quotaOverrides = new Map<string, QuotaConfig>();

  /** The project's quotas in force: the run-time override, else the configuration's (omitted = unlimited). */
  quotasOf(projectId: string): QuotaConfig | undefined {
    return this.quotaOverrides.get(projectId) ?? this.projectsById.get(projectId)?.quotas;
  }

  setQuotas(projectId: string, quotas: QuotaConfig): void {
    this.quotaOverrides.set(projectId, { ...quotas });
  }

  /** Current usage against the project's quotas. */
  quotaUsage(projectId: string): QuotaUsage {
    const vols = this.store.volumesByProject.get(projectId);
    let gigabytes = 0;
    if (vols) for (const v of vols.values()) gigabytes += v.size;
    let cores = 0;
    let ram = 0;
    const servers = this.store.serversByProject.get(projectId);
    if (servers) {
      for (const id of servers) {
        const s = this.store.data.servers[id];
        const f = s ? this.flavors.get(s.flavorId) : undefined;
        cores += f?.vcpus ?? 0;
        ram += f?.ramMiB ?? 0;
      }
    }
    return { instances: servers?.size ?? 0, cores, ram, volumes: vols?.size ?? 0, gigabytes };
  }

  /**
   * Refuse a create that would exceed a project quota (HCS-6), with the code the
   * service documents for that resource (quotaCode).
   */
  checkQuota(projectId: string, service: 'ecs' | 'evs', need: Partial<QuotaUsage>): void {
    const quotas = this.quotasOf(projectId);
    if (!quotas) return;
    const used = this.quotaUsage(projectId);
    for (const k of QUOTA_RESOURCES) {
      const limit = quotas[k];
      const n = need[k];
      if (limit === undefined || n === undefined) continue;
      if (used[k] + n > limit) {
        throw new CloudError(
          400,
          quotaCode(service, k),
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
    for (const s of Object.values(this.store.data.servers)) if (s.flavorId === flavor && s.az === az) used++;
    return { used, max: cap.max };
  }

  checkCapacity(flavor: string, az: string, count: number): void {
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

  volumeType(v: Validator, value: unknown, path: string): string {
    const t = v.str(value, path);
    if (!this.volumeTypes.has(t)) v.fail(path, `unknown volume type "${t}" (valid: ${[...this.volumeTypes].join(', ')})`);
    return t;
  }
}

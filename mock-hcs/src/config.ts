/**
 * Static description of the fake cloud: projects and their AK/SK, AZs,
 * flavors, images, VPCs/subnets and the durations of asynchronous work.
 */
import type { Subnet } from '../../src/core/hcs/index.js';

export interface ProjectConfig {
  id: string;
  name: string;
  region: string;
  ak: string;
  sk: string;
  /**
   * Per-project quotas (HCS-6); omitted = unlimited. Enforced on create with the documented codes:
   * CreateServers Ecs.0001 (instances, cores, ram) / Ecs.0021 (volumes, gigabytes); CreateVolume
   * EVS.1034 (volumes) / EVS.1042 (gigabytes). Changed at run time with PUT /_admin/quotas/{project_id}.
   */
  quotas?: QuotaConfig;
  /**
   * IAM users that may get a token scoped to this project (HCS-5, POST /v3/auth/tokens).
   * Omitted: one default user `<project name>-admin` with password `<Project name>@123`
   * (see `defaultUsersOf`); `[]`: nobody can get a token for this project.
   */
  users?: UserConfig[];
}

/** An IAM user (Keystone v3 password method). */
export interface UserConfig {
  name: string;
  password: string;
  /** Domain (account) name of the user; default: the cloud's domain (`CloudConfig.domain.name`). */
  domain?: string;
}

/** The account (Keystone domain) owning the projects. */
export interface DomainConfig {
  id: string;
  name: string;
}

/** Sell status of a flavor in one AZ, as in ECS `os_extra_specs["cond:operation:az"]`. */
export type FlavorAzStatus = 'normal' | 'abandon' | 'sellout' | 'obt';

export interface QuotaConfig {
  /** Servers (any status) in the project. */
  instances?: number;
  /** vCPUs of those servers (their flavors). */
  cores?: number;
  /** RAM of those servers in MiB (their flavors). */
  ram?: number;
  /** EVS volumes in the project, system and data disks created with servers included. */
  volumes?: number;
  /** Total size of those volumes in GB. */
  gigabytes?: number;
}

/** Host capacity of one flavor in one AZ (HCS-6, OPS-2): at most `max` servers of the flavor there, all projects together. 0 = sold out. */
export interface CapacityConfig {
  availabilityZone: string;
  flavor: string;
  max: number;
}

export interface FlavorConfig {
  id: string;
  name: string;
  vcpus: number;
  ramMiB: number;
  /** AZs where the flavor is sold; omitted = every AZ (TPL-2). */
  availabilityZones?: string[];
  /** BUILD -> ACTIVE duration for servers of this flavor (overrides timings.serverBuildMs; an image's value wins). */
  buildMs?: number;
  /**
   * Explicit sell status per AZ (overrides the computed one): `abandon` = not sold there
   * (Ecs.0023), `sellout` = sold out (Ecs.0319), `obt` = open beta (can be created), `normal`.
   */
  azStatus?: Record<string, FlavorAzStatus>;
}

export interface ImageConfig {
  id: string;
  name: string;
  /** Kubernetes version baked into the image (BOOT-4, HCS-4). */
  kubernetesVersion: string;
  status?: 'active' | 'queued';
  /** BUILD -> ACTIVE duration for servers booted from this image (overrides the flavor's and timings.serverBuildMs). */
  buildMs?: number;
}

export interface VpcConfig {
  id: string;
  name: string;
  cidr: string;
}

/** A subnet of the cloud: the wire Subnet's own fields (src/core/hcs/vpc.ts; ListSubnets adds the rest). */
export type SubnetConfig = Pick<Subnet, 'id' | 'name' | 'cidr' | 'gateway_ip' | 'vpc_id' | 'neutron_subnet_id' | 'neutron_network_id' | 'availability_zone'>;

export interface TimingConfig {
  serverBuildMs: number;
  serverDeleteMs: number;
  volumeCreateMs: number;
  volumeAttachMs: number;
  volumeDetachMs: number;
  volumeDeleteMs: number;
  /** os-stop: ACTIVE -> SHUTOFF (default 10 s). */
  serverStopMs?: number;
  /** os-start: SHUTOFF -> ACTIVE (default 10 s). */
  serverStartMs?: number;
  /** reboot: REBOOT / HARD_REBOOT -> ACTIVE (default 15 s). */
  serverRebootMs?: number;
  /** 0..1: each duration is drawn uniformly from base * [1 - jitter, 1 + jitter] with the seeded Rng. */
  jitter: number;
}

export interface CloudConfig {
  projects: ProjectConfig[];
  availabilityZones: string[];
  flavors: FlavorConfig[];
  images: ImageConfig[];
  vpcs: VpcConfig[];
  subnets: SubnetConfig[];
  timings: TimingConfig;
  /** EVS volume types accepted by ECS/EVS (optional extension; default SATA, SAS, SSD, GPSSD, ESSD). */
  volumeTypes?: string[];
  /** Optional capacity limits per AZ and flavor (Ecs.0319 when exhausted). */
  capacity?: CapacityConfig[];
  /** The account (Keystone domain) of every project; default `DEFAULT_DOMAIN`. */
  domain?: DomainConfig;
  /** Lifetime of IAM tokens on the injected clock (default 24 h, as IAM). */
  tokenTtlMs?: number;
  /**
   * How long finished jobs stay queryable (ShowJob) and how many are kept:
   * a finished job older than `retentionMs` (default 24 h) or beyond the
   * newest `maxFinished` (default 10,000) is dropped, with the X-Client-Token
   * entries answering with it, so the state file stays bounded.
   */
  jobs?: { retentionMs?: number; maxFinished?: number };
}

export const DEFAULT_JOB_RETENTION_MS = 24 * 3600_000;
export const DEFAULT_MAX_FINISHED_JOBS = 10_000;

export const DEFAULT_DOMAIN: DomainConfig = { id: '3c1d2e4f5a6b47c8d9e0f1a2b3c4d5e6', name: 'testbed-account' };
export const DEFAULT_TOKEN_TTL_MS = 24 * 3600_000;

/** Users of a project: the configured ones, or the default `<name>-admin` / `<Name>@123`. */
export function usersOf(p: ProjectConfig): UserConfig[] {
  if (p.users) return p.users;
  return [{ name: `${p.name}-admin`, password: `${p.name.charAt(0).toUpperCase()}${p.name.slice(1)}@123` }];
}

export const DEFAULT_VOLUME_TYPES = ['SATA', 'SAS', 'SSD', 'GPSSD', 'ESSD'];

/** The default cloud: one project "testbed", two AZs, three images (K8s 1.30/1.31/1.32), one VPC with two subnets. */
export function defaultCloudConfig(): CloudConfig {
  const vpcId = '3d6c4f0e-5b1a-4c8e-9f2d-7a1b2c3d4e5f';
  return {
    projects: [
      {
        id: '0a1b2c3d4e5f40718293a4b5c6d7e8f9',
        name: 'testbed',
        region: 'hcs-region-1',
        ak: 'TESTBEDAK0000000000001',
        sk: 'testbed-secret-key-0000000000000000000001',
      },
      {
        id: 'f9e8d7c6b5a449382716059483726150',
        name: 'other-tenant',
        region: 'hcs-region-1',
        ak: 'OTHERAK00000000000002',
        sk: 'other-secret-key-0000000000000000000002',
      },
    ],
    availabilityZones: ['az1', 'az2'],
    flavors: [
      { id: 's6.large.2', name: 's6.large.2', vcpus: 2, ramMiB: 4096 },
      { id: 's6.xlarge.2', name: 's6.xlarge.2', vcpus: 4, ramMiB: 8192 },
      { id: 's6.2xlarge.2', name: 's6.2xlarge.2', vcpus: 8, ramMiB: 16384 },
      { id: 'c6.4xlarge.4', name: 'c6.4xlarge.4', vcpus: 16, ramMiB: 65536, availabilityZones: ['az1'] },
    ],
    images: [
      { id: '6b1e2a4c-30a0-4a6f-8d3e-1f0000000130', name: 'alauda-os-v4.0-k8s-v1.30.10', kubernetesVersion: 'v1.30.10' },
      { id: '6b1e2a4c-31a0-4a6f-8d3e-1f0000000131', name: 'alauda-os-v4.1-k8s-v1.31.6', kubernetesVersion: 'v1.31.6' },
      { id: '6b1e2a4c-32a0-4a6f-8d3e-1f0000000132', name: 'alauda-os-v4.2-k8s-v1.32.3', kubernetesVersion: 'v1.32.3' },
    ],
    vpcs: [{ id: vpcId, name: 'testbed-vpc', cidr: '192.168.0.0/16' }],
    subnets: [
      {
        id: '8a1f0c2e-1b1a-4c8e-9f2d-000000000001',
        name: 'cp-subnet',
        cidr: '192.168.1.0/24',
        gateway_ip: '192.168.1.1',
        vpc_id: vpcId,
        neutron_subnet_id: '5c2e9d1a-1b1a-4c8e-9f2d-000000000001',
        neutron_network_id: '8a1f0c2e-1b1a-4c8e-9f2d-000000000001',
      },
      {
        id: '8a1f0c2e-1b1a-4c8e-9f2d-000000000010',
        name: 'worker-subnet',
        cidr: '192.168.10.0/24',
        gateway_ip: '192.168.10.1',
        vpc_id: vpcId,
        neutron_subnet_id: '5c2e9d1a-1b1a-4c8e-9f2d-000000000010',
        neutron_network_id: '8a1f0c2e-1b1a-4c8e-9f2d-000000000010',
      },
    ],
    timings: {
      serverBuildMs: 60_000,
      serverDeleteMs: 20_000,
      volumeCreateMs: 5_000,
      volumeAttachMs: 5_000,
      volumeDetachMs: 5_000,
      volumeDeleteMs: 5_000,
      jitter: 0.2,
    },
  };
}

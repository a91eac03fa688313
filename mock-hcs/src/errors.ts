/**
 * Errors of the fake cloud, rendered as `{"error":{"code","message"}}`.
 *
 * The codes follow the real services' naming (Ecs.NNNN, EVS.NNNN, APIGW.NNNN).
 * Which codes appear in public documentation and which are plausible
 * stand-ins is listed in mock-hcs/README.md; clients must not rely on more
 * than `code` prefix + HTTP status.
 */
export class CloudError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** SPEC rule IDs this refusal relates to (for the event log). */
    readonly rules: string[] = [],
  ) {
    super(message);
    this.name = 'CloudError';
  }
}

/**
 * Error codes, checked against the official API references (mock-hcs/README.md
 * "Error codes" lists each with its source page):
 * - ECS: "Error Codes" ecs_07_0002 (https://support.huaweicloud.com/intl/en-us/api-ecs/ecs_07_0002.html)
 * - EVS: "Error Codes" evs_04_0038 (https://support.huaweicloud.com/intl/en-us/api-evs/evs_04_0038.html)
 * - VPC: "Error Codes" vpc_api_0003 (https://support.huaweicloud.com/intl/en-us/api-vpc/vpc_api_0003.html)
 * A code no reference documents for the case is a stand-in chosen so that it
 * does not collide with a documented code of another meaning.
 */
export const Codes = {
  ecsBadRequest: 'Ecs.0005',
  /** ECS: "The number of ECSs has reached the maximum allowed." (also vCPUs and RAM, per its solution) */
  ecsQuota: 'Ecs.0001',
  /** ECS: "Insufficient EVS disk quota." (volumes created with the servers) */
  ecsQuotaVolumes: 'Ecs.0021',
  /** ECS: "Insufficient flavor capacity." */
  ecsCapacity: 'Ecs.0319',
  /** EVS: "Insufficient disk quantity quota assigned to the tenant." */
  evsQuotaVolumes: 'EVS.1034',
  /** EVS: "Insufficient disk capacity quota assigned to the tenant." */
  evsQuotaGigabytes: 'EVS.1042',
  adminBadRequest: 'Admin.0400',
  adminUnauthorized: 'Admin.0401',
  adminNotFound: 'Admin.0404',
  adminConflict: 'Admin.0409',
  ecsMalformed: 'Ecs.0000',
  ecsForbidden: 'Ecs.0003',
  /** ECS: "The private IP address is already in use." */
  ecsIpInUse: 'Ecs.0010',
  /** ECS: "The number of IP addresses in the subnet is insufficient." (Ecs.0013 is the EIP quota) */
  ecsNoFreeIp: 'Ecs.0012',
  /** ECS: "Invalid VPC parameters." (check whether the subnets belong to the same VPC) */
  ecsVpcInvalid: 'Ecs.0014',
  /** ECS: "The flavor does not exist or has been abandoned." (Ecs.0023 is a token/URL project mismatch) */
  ecsFlavorUnavailable: 'Ecs.0029',
  /** ECS: "The image does not exist." */
  ecsImageNotFound: 'Ecs.0031',
  /** ECS: "The image is not in Active state." */
  ecsImageNotActive: 'Ecs.0032',
  /** ECS: "The subnet does not exist." */
  ecsSubnetNotFound: 'Ecs.0038',
  /** ECS: "The specified IP address does not belong to the subnet." */
  ecsIpOutsideSubnet: 'Ecs.0039',
  /** ECS: "The disk has been attached to the ECS." */
  ecsVolumeInUse: 'Ecs.0057',
  /** ECS: "The ECS status does not meet requirements." */
  ecsServerState: 'Ecs.0100',
  /** ECS: "The disk is unavailable." (also a disk that does not exist, as AttachServerVolume answers it) */
  ecsVolumeNotAvailable: 'Ecs.0103',
  /** ECS: "Insufficient number of ECS slots for attaching disks." */
  ecsNoDeviceSlot: 'Ecs.0104',
  /** ECS: "The disk is not in the attachment list." */
  ecsVolumeNotAttached: 'Ecs.0111',
  /** ECS: "The ECS cannot be detected." */
  ecsServerNotFound: 'Ecs.0114',
  /** ECS tags: "The number of tags exceeds the maximum number allowed." (10) */
  ecsTagLimit: 'Ecs.0905',
  /** ECS tags: "Invalid tag attribute." */
  ecsTagInvalid: 'Ecs.0906',
  /** ECS tags: "Invalid tag character set." */
  ecsTagCharset: 'Ecs.0907',
  /** ECS tags: "Duplicate tag key." */
  ecsTagDuplicate: 'Ecs.0908',
  /** ECS and EVS: "Invalid job ID." / "Failed to obtain the job." */
  jobNotFound: 'Common.0011',
  evsBadRequest: 'EVS.5400',
  evsNotFound: 'EVS.5404',
  /** EVS: "Failed to delete the disk because the disk status is incorrect." */
  evsInUse: 'EVS.1046',
  vpcNotFound: 'VPC.0202',
  vpcBadRequest: 'VPC.0001',
  /** VPC CreatePort: "Param is invalid." (400; vpc_api_0003, module 创建端口 / "Create Port"). */
  vpcPortBadRequest: 'VPC.2500',
  vpcPortNotFound: 'VPC.2501',
  vpcPortInUse: 'VPC.2502',
  /** VPC private IP / port: the requested IP address is in use (409). */
  vpcIpInUse: 'VPC.0701',
  /** VPC private IP / port: no IP address left in the subnet (409). */
  vpcNoFreeIp: 'VPC.0703',
  vpcPrivateIpNotFound: 'VPC.0702',
  vpcPrivateIpHeld: 'VPC.0704',
  iamAuthFailed: 'IAM.0001',
  iamForbidden: 'IAM.0002',
  iamNotFound: 'IAM.0004',
  iamBadParam: 'IAM.0007',
  iamBadBody: 'IAM.0011',
  imsBadRequest: 'IMG.0001',
  apiNotFound: 'APIGW.0101',
  apiBadRequest: 'APIGW.0400',
  apiTimeout: 'APIGW.0408',
  apiHeadersTooLarge: 'APIGW.0431',
  authFailed: 'APIGW.0301',
  internal: 'Ecs.0002',
} as const;

/** The error document of every service, `{"error":{"code","message"}}` (src/core/hcs/errors.ts: the shape clients read). */
export { errorBody } from '../../src/core/hcs/index.js';

export const QUOTA_RESOURCES = ['instances', 'cores', 'ram', 'volumes', 'gigabytes'] as const;
export type QuotaResource = (typeof QUOTA_RESOURCES)[number];
export type QuotaUsage = Record<QuotaResource, number>;

/**
 * The documented code of an exhausted quota. ECS (ecs_07_0002): Ecs.0001 "The number of ECSs has reached
 * the maximum allowed" (its solution names ECSs, vCPUs and RAM), Ecs.0021 "Insufficient EVS disk quota".
 * EVS (evs_04_0038): EVS.1034 "Insufficient disk quantity quota", EVS.1042 "Insufficient disk capacity quota".
 */
export function quotaCode(service: 'ecs' | 'evs', resource: QuotaResource): string {
  if (service === 'evs') return resource === 'gigabytes' ? Codes.evsQuotaGigabytes : Codes.evsQuotaVolumes;
  return resource === 'volumes' || resource === 'gigabytes' ? Codes.ecsQuotaVolumes : Codes.ecsQuota;
}

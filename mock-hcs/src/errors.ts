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

export const Codes = {
  ecsBadRequest: 'Ecs.0005',
  ecsQuota: 'Ecs.0001',
  ecsCapacity: 'Ecs.0319',
  evsQuota: 'EVS.0001',
  adminBadRequest: 'Admin.0400',
  adminUnauthorized: 'Admin.0401',
  adminNotFound: 'Admin.0404',
  adminConflict: 'Admin.0409',
  ecsMalformed: 'Ecs.0000',
  ecsForbidden: 'Ecs.0003',
  ecsIpInUse: 'Ecs.0010',
  ecsNoFreeIp: 'Ecs.0013',
  ecsSubnetNotFound: 'Ecs.0020',
  ecsVpcNotFound: 'Ecs.0021',
  ecsFlavorUnavailable: 'Ecs.0023',
  ecsImageNotFound: 'Ecs.0031',
  ecsIpOutsideSubnet: 'Ecs.0039',
  ecsJobNotFound: 'Ecs.0045',
  ecsVolumeInUse: 'Ecs.0057',
  ecsVolumeNotAttached: 'Ecs.0060',
  ecsAzMismatch: 'Ecs.0062',
  ecsDeviceInUse: 'Ecs.0063',
  ecsServerState: 'Ecs.0100',
  ecsVolumeNotAvailable: 'Ecs.0103',
  ecsVolumeNotFound: 'Ecs.0104',
  ecsServerNotFound: 'Ecs.0114',
  evsBadRequest: 'EVS.5400',
  evsNotFound: 'EVS.5404',
  evsInUse: 'EVS.1046',
  vpcNotFound: 'VPC.0202',
  vpcBadRequest: 'VPC.0001',
  vpcPortNotFound: 'VPC.2501',
  vpcPortInUse: 'VPC.2502',
  vpcPrivateIpNotFound: 'VPC.0702',
  vpcPrivateIpInUse: 'VPC.0703',
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

export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/**
 * What a cloud error code means to an operator: the SPEC rules it relates to
 * and a condition reason with a hint (OPS-2). Shared by the HCSMachine and
 * HCSCluster controllers.
 */

/**
 * SPEC rules a cloud error code relates to. The codes are those the official API references
 * document (mock-hcs answers them; mock-hcs/README.md "Error codes" cites each page):
 * ECS ecs_07_0002, EVS evs_04_0038, VPC vpc_api_0003.
 */
export function ruleForCloudError(code: string): string[] {
  switch (code) {
    case 'Ecs.0031': // the image does not exist
    case 'Ecs.0032': // the image is not active
      return ['TPL-6'];
    case 'Ecs.0029': // the flavor does not exist or has been abandoned
      return ['TPL-2'];
    case 'Ecs.0010': // the private IP address is already in use
    case 'Ecs.0012': // the subnet has too few IP addresses
    case 'Ecs.0039': // the IP address does not belong to the subnet
    case 'VPC.0701': // CreatePort / CreatePrivateip: the IP address is in use
    case 'VPC.0703': // CreatePort / CreatePrivateip: no IP address left
      return ['NET-7'];
    case 'Ecs.0038': // the subnet does not exist
    case 'Ecs.0014': // invalid VPC parameters (subnet not of the VPC)
      return ['NET-4'];
    case 'Ecs.0057': // the disk is attached to an ECS
      return ['DISK-9'];
    case 'Ecs.0319': // insufficient flavor capacity
    case 'Ecs.0001': // ECS quota (instances, vCPUs, RAM)
    case 'Ecs.0021': // EVS disk quota, on CreateServers
    case 'EVS.1034': // disk quantity quota
    case 'EVS.1042': // disk capacity quota
      return ['OPS-2', 'HCS-6'];
    case 'APIGW.0301':
    case 'Ecs.0003':
      return ['OPS-2', 'HCS-5'];
    default:
      return [];
  }
}

const QUOTA_CODES = new Set(['Ecs.0001', 'Ecs.0021', 'EVS.1034', 'EVS.1042']);

/**
 * Condition reason and operator hint for a cloud refusal (OPS-2: every stuck
 * state says why). Unknown codes keep the caller's generic reason.
 */
export function cloudErrorReason(code: string, status: number): { reason: string; hint: string } | undefined {
  if (code === 'Ecs.0319') return { reason: 'InsufficientCapacity', hint: 'HCS has no capacity for this flavor in this availability zone; retried every minute (choose another flavor/AZ or free capacity)' };
  if (QUOTA_CODES.has(code)) return { reason: 'QuotaExceeded', hint: 'the project quota is exhausted; retried every minute (raise the quota or remove unused servers/volumes)' };
  if (code === 'Ecs.0010' || code === 'VPC.0701') return { reason: 'IPAddressInUse', hint: 'the pool entry\'s static IP is used by another port (NET-7); free it or change the entry' };
  if (code === 'Ecs.0039') return { reason: 'IPAddressInvalid', hint: 'the static IP is not usable in the subnet (NET-7)' };
  if (code === 'Ecs.0012' || code === 'VPC.0703') return { reason: 'SubnetFull', hint: 'the subnet has no free IP address left (NET-7); free addresses or use another subnet' };
  if (status === 401 || code === 'APIGW.0301') return { reason: 'CloudAuthenticationFailed', hint: 'HCS rejected the provider\'s credentials (AK/SK, signature or clock); check the identity secret' };
  if (status === 403) return { reason: 'CloudPermissionDenied', hint: 'the credentials are valid but not allowed this operation or project; check the account\'s permissions' };
  if (status >= 500) return { reason: 'CloudError', hint: 'HCS returned a server error; retried' };
  if (status === 429) return { reason: 'CloudError', hint: 'HCS throttled the call (API Gateway flow control); retried' };
  return undefined;
}

/**
 * What a cloud error code means to an operator: the SPEC rules it relates to
 * and a condition reason with a hint (OPS-2). Shared by the HCSMachine and
 * HCSCluster controllers.
 */

/** SPEC rules a cloud error code relates to (mock-hcs codes follow the real services' naming). */
export function ruleForCloudError(code: string): string[] {
  switch (code) {
    case 'Ecs.0031':
      return ['TPL-6'];
    case 'Ecs.0023':
      return ['TPL-2'];
    case 'Ecs.0010':
    case 'Ecs.0013':
    case 'Ecs.0039':
      return ['NET-7'];
    case 'Ecs.0020':
    case 'Ecs.0021':
      return ['NET-4'];
    case 'Ecs.0057':
      return ['DISK-9'];
    case 'Ecs.0062':
      return ['DISK-3'];
    case 'Ecs.0319':
    case 'Ecs.0001':
    case 'EVS.0001':
      return ['OPS-2', 'HCS-6'];
    case 'APIGW.0301':
    case 'Ecs.0003':
      return ['OPS-2', 'HCS-5'];
    default:
      return [];
  }
}

/**
 * Condition reason and operator hint for a cloud refusal (OPS-2: every stuck
 * state says why). Unknown codes keep the caller's generic reason.
 */
export function cloudErrorReason(code: string, status: number): { reason: string; hint: string } | undefined {
  if (code === 'Ecs.0319') return { reason: 'InsufficientCapacity', hint: 'HCS has no capacity for this flavor in this availability zone; retried every minute (choose another flavor/AZ or free capacity)' };
  if (code === 'Ecs.0001' || code === 'EVS.0001') return { reason: 'QuotaExceeded', hint: 'the project quota is exhausted; retried every minute (raise the quota or remove unused servers/volumes)' };
  if (code === 'Ecs.0010') return { reason: 'IPAddressInUse', hint: 'the pool entry\'s static IP is used by another port (NET-7); free it or change the entry' };
  if (code === 'Ecs.0039' || code === 'Ecs.0013') return { reason: 'IPAddressInvalid', hint: 'the static IP is not usable in the subnet (NET-7)' };
  if (status === 401 || code === 'APIGW.0301') return { reason: 'CloudAuthenticationFailed', hint: 'HCS rejected the provider\'s credentials (AK/SK, signature or clock); check the identity secret' };
  if (status === 403) return { reason: 'CloudPermissionDenied', hint: 'the credentials are valid but not allowed this operation or project; check the account\'s permissions' };
  if (status >= 500) return { reason: 'CloudError', hint: 'HCS returned a server error; retried' };
  return undefined;
}

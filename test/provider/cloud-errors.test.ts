import { describe, expect, it } from 'vitest';
import { cloudErrorReason, ruleForCloudError } from '../../src/product/provider/cloud-errors.js';

// The codes the official API references document (issue 24): ECS "Error Codes" ecs_07_0002,
// EVS "Error Codes" evs_04_0038, VPC "Error Codes" vpc_api_0003. Each case below was misread
// before: a real HCS answer would have been unclassified or classified as something else.
describe('provider classification of cloud error codes (OPS-2)', () => {
  it('a volume quota is QuotaExceeded: EVS.1034 / EVS.1042 (evs_04_0038), Ecs.0021 on CreateServers (ecs_07_0002)', { timeout: 5000 }, () => {
    for (const code of ['EVS.1034', 'EVS.1042', 'Ecs.0021', 'Ecs.0001']) {
      expect(cloudErrorReason(code, 400)?.reason, code).toBe('QuotaExceeded');
      expect(ruleForCloudError(code), code).toEqual(['OPS-2', 'HCS-6']);
    }
    // EVS.0001 documents no quota: it is no longer read as one.
    expect(cloudErrorReason('EVS.0001', 400)).toBeUndefined();
  });

  it('a full subnet is classified: 400 Ecs.0012 (ecs_07_0002), 409 VPC.0703 (vpc_api_0003), NET-7', { timeout: 5000 }, () => {
    expect(cloudErrorReason('Ecs.0012', 400)?.reason).toBe('SubnetFull');
    expect(cloudErrorReason('VPC.0703', 409)?.reason).toBe('SubnetFull');
    expect(ruleForCloudError('Ecs.0012')).toEqual(['NET-7']);
    expect(ruleForCloudError('VPC.0703')).toEqual(['NET-7']);
  });

  it('the EIP quota (Ecs.0013, ecs_07_0002) is not read as a bad static IP', { timeout: 5000 }, () => {
    expect(cloudErrorReason('Ecs.0013', 400)).toBeUndefined();
    expect(ruleForCloudError('Ecs.0013')).toEqual([]);
    expect(cloudErrorReason('Ecs.0039', 400)?.reason).toBe('IPAddressInvalid');
  });

  it('an IP in use is IPAddressInUse from ECS (400 Ecs.0010) and VPC (409 VPC.0701)', { timeout: 5000 }, () => {
    expect(cloudErrorReason('Ecs.0010', 400)?.reason).toBe('IPAddressInUse');
    expect(cloudErrorReason('VPC.0701', 409)?.reason).toBe('IPAddressInUse');
  });

  it('flavor, subnet and image codes map to their rules: Ecs.0029 TPL-2, Ecs.0038 NET-4, Ecs.0031/Ecs.0032 TPL-6 (ecs_07_0002)', { timeout: 5000 }, () => {
    expect(ruleForCloudError('Ecs.0029')).toEqual(['TPL-2']);
    expect(ruleForCloudError('Ecs.0023')).toEqual([]); // a token/URL project mismatch, not a flavor
    expect(ruleForCloudError('Ecs.0038')).toEqual(['NET-4']);
    expect(ruleForCloudError('Ecs.0020')).toEqual([]);
    expect(ruleForCloudError('Ecs.0031')).toEqual(['TPL-6']);
    expect(ruleForCloudError('Ecs.0032')).toEqual(['TPL-6']);
  });
});

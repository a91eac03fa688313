/**
 * Subnets and their fixed IPs (NET-7): one index of who holds each address
 * (server NICs, VPC ports, private IPs), shared by ECS and VPC, so both give
 * the same errors for the same conflicts.
 */
import type { SubnetConfig } from '../config.js';
import { CloudError, Codes } from '../errors.js';
import { intToIp, ipToInt, isHostInCidr, parseCidr, type Cidr } from '../ip.js';
import type { Store } from '../state.js';
import type { Validator } from '../validate.js';

export interface SubnetInfo {
  cfg: SubnetConfig;
  cidr: Cidr;
  gateway: number;
}

/** Which API asks for an address: its error codes differ (ECS CreateServers, or VPC CreatePort / CreatePrivateip). */
export type IpApi = 'ecs' | 'vpc';

export class Ipam {
  /** Keyed by subnet id and by neutron_network_id (ECS nics[].subnet_id accepts the VPC subnet id). */
  readonly subnets = new Map<string, SubnetInfo>();
  /** Keyed by neutron_subnet_id (VPC port fixed_ips[].subnet_id). */
  private readonly neutronSubnets = new Map<string, SubnetInfo>();

  constructor(
    private readonly store: Store,
    subnets: readonly SubnetConfig[],
  ) {
    for (const s of subnets) {
      const info: SubnetInfo = { cfg: s, cidr: parseCidr(s.cidr), gateway: ipToInt(s.gateway_ip) ?? -1 };
      this.subnets.set(s.id, info);
      this.subnets.set(s.neutron_network_id, info);
      this.neutronSubnets.set(s.neutron_subnet_id, info);
    }
  }

  subnet(id: string): SubnetConfig | undefined {
    return this.subnets.get(id)?.cfg;
  }

  /** Subnet by VPC subnet id, neutron_network_id or (with `neutron`) neutron_subnet_id. */
  subnetInfo(id: string, neutron = false): SubnetInfo | undefined {
    return this.subnets.get(id) ?? (neutron ? this.neutronSubnets.get(id) : undefined);
  }

  /**
   * Validate a requested fixed IP of a subnet (NET-7): a usable host address,
   * not the gateway, not in use. The holder of a taken address is named only
   * to its own project (`projectId`): another project learns that the address
   * is taken, never which server or port of whom holds it. `api` picks the
   * documented codes: ECS (ecs_07_0002) Ecs.0039 / Ecs.0010, VPC ports and
   * private IPs (vpc_api_0003) 400 `v.code` (CreatePort's VPC.2500; VPC.0001
   * for private IPs, a stand-in) / 409 VPC.0701.
   */
  checkRequestedIp(subnet: SubnetInfo, ipText: string, path: string, v: Validator, projectId: string, taken?: Set<string>, api: IpApi = 'ecs'): number {
    const ip = ipToInt(ipText);
    if (ip === undefined) v.fail(path, `"${ipText}" is not an IPv4 address`);
    if (!isHostInCidr(ip, subnet.cidr) || ip === subnet.gateway) {
      throw new CloudError(400, api === 'ecs' ? Codes.ecsIpOutsideSubnet : v.code, `The IP address ${ipText} is not a usable address of subnet ${subnet.cfg.name} (${subnet.cfg.cidr}, gateway ${subnet.cfg.gateway_ip}) (${path})`, ['NET-7']);
    }
    const holder = this.store.ipHolder(subnet.cfg.id, ipText);
    if (holder !== undefined || taken?.has(`${subnet.cfg.id}|${ipText}`)) {
      throw new CloudError(
        api === 'ecs' ? 400 : 409,
        api === 'ecs' ? Codes.ecsIpInUse : Codes.vpcIpInUse,
        `The private IP address ${ipText} is already in use in subnet ${subnet.cfg.name}${holder && holder.projectId === projectId ? ` by ${holder.kind} ${holder.id}` : ''} (${path})`,
        ['NET-7'],
      );
    }
    return ip;
  }

  /** The next free IP of a subnet, or (NET-7) 400 Ecs.0012 (ECS) / 409 VPC.0703 (VPC) when it is exhausted. */
  allocateIp(subnet: SubnetInfo, taken: Set<string>, path: string, api: IpApi = 'ecs'): string {
    const ip = this.freeIp(subnet, taken);
    if (ip === undefined) throw new CloudError(api === 'ecs' ? 400 : 409, api === 'ecs' ? Codes.ecsNoFreeIp : Codes.vpcNoFreeIp, `Subnet ${subnet.cfg.name} (${subnet.cfg.cidr}) has no free IP address left (${path})`, ['NET-7']);
    return ip;
  }

  freeIp(subnet: SubnetInfo, batchTaken: Set<string>): string | undefined {
    const { first, last } = subnet.cidr;
    // Skip the network address, the gateway and the first few addresses the platform reserves (.1 - .3 on HCS-like clouds).
    // The lowest free address, searched from where every address below is known to be held (O(1) amortised).
    const id = subnet.cfg.id;
    let firstUnheld: number | undefined;
    for (let n = Math.max(first + 4, this.store.freeSearchStart(id) ?? 0); n < last; n++) {
      if (n === subnet.gateway) continue;
      const ip = intToIp(n);
      if (this.store.ipHolder(id, ip) !== undefined) continue;
      if (firstUnheld === undefined) {
        firstUnheld = n;
        this.store.noteHeldBelow(id, n);
      }
      if (!batchTaken.has(`${id}|${ip}`)) return ip;
    }
    if (firstUnheld === undefined) this.store.noteHeldBelow(id, last);
    return undefined;
  }
}

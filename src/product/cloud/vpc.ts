/** VPC calls of the HCS client: subnets, ports, private IPs. */
import { VPC, queryString, type CreatePortBody, type Port, type PrivateIp, type Subnet } from '../../core/hcs/index.js';
import type { HcsCaller } from './caller.js';

export interface ListPortsQuery {
  name?: string;
  networkId?: string;
  deviceId?: string;
  deviceOwner?: string;
  status?: string;
  /** Exact IP address of the port's fixed IP. */
  ipAddress?: string;
}

const VPC_MAX_PAGE = 2000;

export const vpcCalls = {
  async listSubnets(this: HcsCaller, q: { vpcId?: string } = {}): Promise<Subnet[]> {
    return (await this.call<{ subnets: Subnet[] }>(VPC.listSubnets, {}, { query: queryString({ vpc_id: q.vpcId }) })).subnets;
  },

  async showSubnet(this: HcsCaller, id: string): Promise<Subnet | undefined> {
    return (await this.find<{ subnet: Subnet }>(VPC.showSubnet, { subnet_id: id }))?.subnet;
  },

  /** Ports of the project (server NICs included: device_owner "compute:<az>", device_id = server id); all pages. */
  async listPorts(this: HcsCaller, q: ListPortsQuery = {}): Promise<Port[]> {
    const out: Port[] = [];
    const base = {
      name: q.name,
      network_id: q.networkId,
      device_id: q.deviceId,
      device_owner: q.deviceOwner,
      status: q.status,
      fixed_ips: q.ipAddress !== undefined ? `ip_address=${q.ipAddress}` : undefined,
    };
    for (let marker: string | undefined; ; ) {
      const r = await this.call<{ ports: Port[] }>(VPC.listPorts, {}, { query: queryString({ ...base, limit: VPC_MAX_PAGE, marker }) });
      out.push(...r.ports);
      if (r.ports.length < VPC_MAX_PAGE) return out;
      marker = r.ports[r.ports.length - 1]!.id;
    }
  },

  async showPort(this: HcsCaller, id: string): Promise<Port | undefined> {
    return (await this.find<{ port: Port }>(VPC.showPort, { port_id: id }))?.port;
  },

  async createPort(this: HcsCaller, body: CreatePortBody): Promise<Port> {
    return (await this.call<{ port: Port }>(VPC.createPort, {}, { body })).port;
  },

  async deletePort(this: HcsCaller, id: string): Promise<void> {
    await this.call(VPC.deletePort, { port_id: id });
  },

  /** Reserve private IPs (a given ip_address, or the next free one); all or nothing. Conflicts are HcsApiError 400 Ecs.0010 (NET-7). */
  async createPrivateIps(this: HcsCaller, entries: { subnetId: string; ipAddress?: string }[]): Promise<PrivateIp[]> {
    const body = { privateips: entries.map((e) => ({ subnet_id: e.subnetId, ...(e.ipAddress !== undefined ? { ip_address: e.ipAddress } : {}) })) };
    return (await this.call<{ privateips: PrivateIp[] }>(VPC.createPrivateip, {}, { body })).privateips;
  },

  /** Private IPs in use in a subnet (server NICs, ports and reserved IPs of this project); all pages. */
  async listPrivateIps(this: HcsCaller, subnetId: string): Promise<PrivateIp[]> {
    const out: PrivateIp[] = [];
    for (let marker: string | undefined; ; ) {
      const r = await this.call<{ privateips: PrivateIp[] }>(VPC.listPrivateips, { subnet_id: subnetId }, { query: queryString({ limit: VPC_MAX_PAGE, marker }) });
      out.push(...r.privateips);
      if (r.privateips.length < VPC_MAX_PAGE) return out;
      marker = r.privateips[r.privateips.length - 1]!.id;
    }
  },

  async deletePrivateIp(this: HcsCaller, id: string): Promise<void> {
    await this.call(VPC.deletePrivateip, { privateip_id: id });
  },
};

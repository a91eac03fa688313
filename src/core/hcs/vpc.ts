/**
 * VPC: subnets, ports (v1 Neutron shape and v3) and private IPs. Paths as in
 * the VPC API reference and @huaweicloud/huaweicloud-sdk-vpc (v2 VpcClient;
 * v3 ListPorts / ShowPort from huaweicloud-sdk-go-v3 vpc/v3).
 */
import { defineOperations } from './operation.js';

export const VPC = defineOperations('vpc', {
  listSubnets: { sdk: 'ListSubnets', method: 'GET', path: '/v1/{project_id}/subnets' },
  showSubnet: { sdk: 'ShowSubnet', method: 'GET', path: '/v1/{project_id}/subnets/{subnet_id}' },
  listPorts: { sdk: 'ListPorts', method: 'GET', path: '/v1/{project_id}/ports' },
  showPort: { sdk: 'ShowPort', method: 'GET', path: '/v1/{project_id}/ports/{port_id}' },
  listPortsV3: { sdk: 'ListPorts (v3)', method: 'GET', path: '/v3/{project_id}/ports' },
  showPortV3: { sdk: 'ShowPort (v3)', method: 'GET', path: '/v3/{project_id}/ports/{port_id}' },
  createPort: { sdk: 'CreatePort', method: 'POST', path: '/v1/{project_id}/ports' },
  deletePort: { sdk: 'DeletePort', method: 'DELETE', path: '/v1/{project_id}/ports/{port_id}' },
  createPrivateip: { sdk: 'CreatePrivateip', method: 'POST', path: '/v1/{project_id}/privateips' },
  listPrivateips: { sdk: 'ListPrivateips', method: 'GET', path: '/v1/{project_id}/subnets/{subnet_id}/privateips' },
  showPrivateip: { sdk: 'ShowPrivateip', method: 'GET', path: '/v1/{project_id}/privateips/{privateip_id}' },
  deletePrivateip: { sdk: 'DeletePrivateip', method: 'DELETE', path: '/v1/{project_id}/privateips/{privateip_id}' },
});

/** ListSubnets' `subnets[]`, ShowSubnet's `subnet` (the one subnet type: clients, mock-hcs's configuration and its answers). */
export interface Subnet {
  id: string;
  name: string;
  cidr: string;
  gateway_ip: string;
  vpc_id: string;
  neutron_subnet_id: string;
  neutron_network_id: string;
  availability_zone?: string;
  status: string;
  [k: string]: unknown;
}

/** VPC port (Neutron shape; ListPorts' `ports[]`, ShowPort's and CreatePort's `port`). */
export interface Port {
  id: string;
  name: string;
  network_id: string;
  admin_state_up: boolean;
  mac_address: string;
  fixed_ips: { subnet_id: string; ip_address: string }[];
  device_id: string;
  /** "compute:<az>" for a server NIC, "" for an unbound port / private IP. */
  device_owner: string;
  tenant_id?: string;
  status: 'ACTIVE' | 'BUILD' | 'DOWN' | string;
  security_groups?: string[];
  [k: string]: unknown;
}

/** CreatePort request body. */
export interface CreatePortBody {
  port: {
    network_id: string;
    name?: string;
    fixed_ips?: { subnet_id?: string; ip_address?: string }[];
    device_owner?: string;
    security_groups?: string[];
    admin_state_up?: boolean;
  };
}

/** VPC private IP (its id is a port id). */
export interface PrivateIp {
  id: string;
  status: 'ACTIVE' | 'DOWN' | string;
  subnet_id: string;
  tenant_id?: string;
  device_owner: string;
  ip_address: string;
}

/** CreatePrivateip request body (1 to 20 entries; all or nothing). */
export interface CreatePrivateIpsBody {
  privateips: { subnet_id: string; ip_address?: string }[];
}

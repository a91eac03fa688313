/**
 * VPC ports and private IPs (HCS-3, NET-7). A private IP is a port with one
 * fixed IP, as on the real VPC, so both live in one collection (`ports`) and
 * share the subnet IP index with the servers' NICs: an address is held by
 * exactly one server NIC, port or private IP. The ports of server NICs are
 * derived from the servers (id = the NIC's port id) and cannot be deleted
 * through the VPC API.
 *
 * Conflicts, addresses outside the subnet and exhausted subnets give the same
 * errors as CreateServers (Ecs.0010 / Ecs.0039 / Ecs.0013): one IP index, one
 * set of rules.
 */
import type { SubnetConfig } from './config.js';
import type { CloudEngine, SubnetInfo } from './cloud.js';
import { CloudError, Codes } from './errors.js';
import type { PortRec, ServerRec } from './state.js';
import { own, Validator } from './validate.js';

const vpcV: Validator = new Validator(Codes.vpcBadRequest);
/** CreatePort's own "Param is invalid." code (vpc_api_0003: 400 VPC.2500 under 创建端口 / Create Port). */
const portV: Validator = new Validator(Codes.vpcPortBadRequest);

/** One port as the VPC API shows it, whoever holds it. */
export interface PortView {
  id: string;
  projectId: string;
  kind: 'server' | 'port' | 'privateip';
  name: string;
  subnet: SubnetConfig;
  ip: string;
  mac: string;
  deviceOwner: string;
  deviceId: string;
  status: 'ACTIVE' | 'BUILD' | 'DOWN';
  adminStateUp: boolean;
  securityGroups: string[];
  /** AZ of the server holding the port. */
  az?: string;
  created: number;
  /** The server's name (DNS assignment). */
  hostname?: string;
}

export interface PortFilter {
  name?: string;
  ids?: string[];
  networkId?: string;
  macAddress?: string;
  deviceId?: string;
  deviceOwner?: string;
  status?: string;
  adminStateUp?: boolean;
  /** "ip_address=..." / "subnet_id=..." entries (all must hold). */
  fixedIps?: string[];
  securityGroups?: string[];
}

const DEVICE_OWNERS = new Set(['', 'neutron:VIP_PORT', 'network:dhcp', 'network:router_interface_distributed', 'network:router_centralized_snat']);

function serverPortStatus(s: ServerRec): PortView['status'] {
  if (s.status === 'BUILD') return 'BUILD';
  if (s.status === 'SHUTOFF' || s.status === 'ERROR') return 'DOWN';
  return 'ACTIVE';
}

export class NetworkService {
  constructor(private readonly engine: CloudEngine) {}

  private get data() {
    return this.engine.storeRef.data;
  }

  private subnetOf(id: string): SubnetConfig {
    // Subnets come from the configuration; a stored record always names a configured one (validated on restore).
    return this.engine.subnet(id) ?? { id, name: id, cidr: '', gateway_ip: '', vpc_id: '', neutron_network_id: id, neutron_subnet_id: id };
  }

  /** Every port of the project: server NICs (in server creation order), then VPC ports and private IPs. */
  ports(projectId: string): PortView[] {
    const out: PortView[] = [];
    for (const s of this.engine.serversOf(projectId)) {
      for (const n of s.nics) {
        out.push({
          id: n.portId,
          projectId,
          kind: 'server',
          name: '',
          subnet: this.subnetOf(n.subnetId),
          ip: n.ip,
          mac: n.mac,
          deviceOwner: `compute:${s.az}`,
          deviceId: s.id,
          status: serverPortStatus(s),
          adminStateUp: true,
          securityGroups: [],
          az: s.az,
          created: s.created,
          hostname: s.name,
        });
      }
    }
    for (const p of Object.values(this.data.ports)) if (p.projectId === projectId) out.push(this.view(p));
    return out;
  }

  private view(p: PortRec): PortView {
    return {
      id: p.id,
      projectId: p.projectId,
      kind: p.kind,
      name: p.name,
      subnet: this.subnetOf(p.subnetId),
      ip: p.ip,
      mac: p.mac,
      deviceOwner: p.deviceOwner,
      deviceId: p.deviceId,
      status: 'DOWN',
      adminStateUp: p.adminStateUp,
      securityGroups: [...p.securityGroups],
      created: p.created,
    };
  }

  port(projectId: string, id: string): PortView | undefined {
    const p = own(this.data.ports, id);
    if (p) return p.projectId === projectId ? this.view(p) : undefined;
    return this.ports(projectId).find((x) => x.kind === 'server' && x.id === id);
  }

  filter(list: PortView[], f: PortFilter): PortView[] {
    const fixed = (f.fixedIps ?? []).map((e) => {
      const i = e.indexOf('=');
      const k = i < 0 ? '' : e.slice(0, i);
      if (k !== 'ip_address' && k !== 'subnet_id') {
        throw new CloudError(400, Codes.vpcBadRequest, `Invalid request parameter fixed_ips: "${e}" must be ip_address=<ip> or subnet_id=<id>`);
      }
      return { k, v: e.slice(i + 1) };
    });
    return list.filter(
      (p) =>
        (f.name === undefined || p.name === f.name) &&
        (!f.ids?.length || f.ids.includes(p.id)) &&
        (f.networkId === undefined || p.subnet.neutron_network_id === f.networkId || p.subnet.id === f.networkId) &&
        (f.macAddress === undefined || p.mac === f.macAddress) &&
        (f.deviceId === undefined || p.deviceId === f.deviceId) &&
        (f.deviceOwner === undefined || p.deviceOwner === f.deviceOwner) &&
        (f.status === undefined || p.status === f.status) &&
        (f.adminStateUp === undefined || p.adminStateUp === f.adminStateUp) &&
        (!f.securityGroups?.length || f.securityGroups.every((g) => p.securityGroups.includes(g))) &&
        fixed.every(({ k, v }) => (k === 'ip_address' ? p.ip === v : p.subnet.neutron_subnet_id === v || p.subnet.id === v)),
    );
  }

  /** POST /v1/{project_id}/ports (one fixed IP per port in this fake). */
  createPort(projectId: string, body: unknown): PortView {
    const root = portV.obj(body, 'body');
    const o = portV.obj(root.port, 'port');
    const networkId = portV.str(o.network_id, 'port.network_id');
    const subnet = this.engine.subnetInfo(networkId);
    if (!subnet) throw new CloudError(404, Codes.vpcNotFound, `Network ${networkId} could not be found (port.network_id)`, ['NET-4']);
    const name = portV.optStr(o.name, 'port.name', { max: 255 }) ?? '';
    if (typeof o.name === 'string' && o.name.length === 0) portV.fail('port.name', 'must not be empty');
    const deviceOwner = o.device_owner === undefined || o.device_owner === null ? '' : typeof o.device_owner === 'string' ? o.device_owner : portV.fail('port.device_owner', 'must be a string');
    if (!DEVICE_OWNERS.has(deviceOwner)) portV.fail('port.device_owner', `must be one of ${[...DEVICE_OWNERS].map((x) => `"${x}"`).join(', ')}`);
    const adminStateUp = portV.bool(o.admin_state_up, 'port.admin_state_up', true);
    const groups = (portV.optArr(o.security_groups, 'port.security_groups', 0, 10) ?? []).map((g, i) => portV.str(g, `port.security_groups[${i}]`, { max: 64 }));
    for (const k of ['allowed_address_pairs', 'extra_dhcp_opts'] as const) portV.optArr(o[k], `port.${k}`, 0, 10);
    if (o.tenant_id !== undefined && o.tenant_id !== projectId) portV.fail('port.tenant_id', `must be the project of the credentials (${projectId})`);
    const fixedIps = portV.optArr(o.fixed_ips, 'port.fixed_ips', 0, 1) ?? [];
    let ipText: string | undefined;
    if (fixedIps.length === 1) {
      const f = portV.obj(fixedIps[0], 'port.fixed_ips[0]');
      const sid = portV.optStr(f.subnet_id, 'port.fixed_ips[0].subnet_id');
      if (sid !== undefined && this.engine.subnetInfo(sid, true) !== subnet) {
        portV.fail('port.fixed_ips[0].subnet_id', `subnet ${sid} is not the subnet of network ${networkId} (${subnet.cfg.neutron_subnet_id})`, ['NET-4']);
      }
      ipText = portV.optStr(f.ip_address, 'port.fixed_ips[0].ip_address');
    }
    const [port] = this.reserve(projectId, 'port', [{ subnet, ...(ipText !== undefined ? { ip: ipText } : {}), path: 'port.fixed_ips[0].ip_address' }], { name, deviceOwner, adminStateUp, securityGroups: groups });
    return port!;
  }

  /** POST /v1/{project_id}/privateips: all or nothing. */
  createPrivateIps(projectId: string, body: unknown): PortView[] {
    const root = vpcV.obj(body, 'body');
    const list = vpcV.arr(root.privateips, 'privateips', 1, 20);
    const specs = list.map((e, i) => {
      const path = `privateips[${i}]`;
      const o = vpcV.obj(e, path);
      const sid = vpcV.str(o.subnet_id, `${path}.subnet_id`);
      const subnet = this.engine.subnetInfo(sid);
      if (!subnet) throw new CloudError(404, Codes.vpcNotFound, `Subnet ${sid} could not be found (${path}.subnet_id)`, ['NET-4']);
      const ip = vpcV.optStr(o.ip_address, `${path}.ip_address`);
      return { subnet, ...(ip !== undefined ? { ip } : {}), path: `${path}.ip_address` };
    });
    return this.reserve(projectId, 'privateip', specs, { name: '', deviceOwner: '', adminStateUp: true, securityGroups: [] });
  }

  private reserve(
    projectId: string,
    kind: 'port' | 'privateip',
    specs: { subnet: SubnetInfo; ip?: string; path: string }[],
    o: { name: string; deviceOwner: string; adminStateUp: boolean; securityGroups: string[] },
  ): PortView[] {
    // Check every address before taking any (all or nothing), with the rules of CreateServers.
    const taken = new Set<string>();
    for (const s of specs) {
      if (s.ip === undefined) continue;
      this.engine.checkRequestedIp(s.subnet, s.ip, s.path, kind === 'port' ? portV : vpcV, projectId, taken, 'vpc');
      taken.add(`${s.subnet.cfg.id}|${s.ip}`);
    }
    const ips = specs.map((s) => {
      if (s.ip !== undefined) return s.ip;
      const ip = this.engine.allocateIp(s.subnet, taken, s.path.replace(/\.ip_address$/, ''), 'vpc');
      taken.add(`${s.subnet.cfg.id}|${ip}`);
      return ip;
    });
    const now = this.engine.storeRef.now();
    const recs = specs.map((s, i): PortRec => {
      const id = this.engine.newPortId();
      return { id, projectId, kind, name: o.name, subnetId: s.subnet.cfg.id, ip: ips[i]!, mac: this.engine.newMac(), deviceOwner: o.deviceOwner, deviceId: '', adminStateUp: o.adminStateUp, securityGroups: [...o.securityGroups], created: now };
    });
    recs.forEach((r, i) => {
      this.data.ports[r.id] = r;
      this.engine.storeRef.indexPort(r);
      const what = kind === 'port' ? 'port' : 'private IP';
      this.engine.record(`${kind}.created`, `${what} ${r.ip} (${r.id}) reserved in subnet ${specs[i]!.subnet.cfg.name}`, { id: r.id, ip: r.ip, subnetId: r.subnetId, kind }, ['HCS-3', 'NET-7']);
    });
    this.engine.storeRef.markDirty();
    return recs.map((r) => this.view(r));
  }

  /** DELETE a port or private IP; the ports of server NICs go with their server. */
  remove(projectId: string, id: string, via: 'port' | 'privateip'): void {
    const rec = own(this.data.ports, id);
    if (!rec || rec.projectId !== projectId) {
      const nic = this.ports(projectId).find((p) => p.kind === 'server' && p.id === id);
      if (nic) {
        throw new CloudError(
          409,
          via === 'port' ? Codes.vpcPortInUse : Codes.vpcPrivateIpHeld,
          `${via === 'port' ? 'Port' : 'Private IP'} ${id} (${nic.ip}) is in use by server ${nic.deviceId} (device_owner ${nic.deviceOwner}); delete the server instead`,
          ['NET-7'],
        );
      }
      throw new CloudError(404, via === 'port' ? Codes.vpcPortNotFound : Codes.vpcPrivateIpNotFound, `${via === 'port' ? 'Port' : 'Private IP'} ${id} could not be found.`);
    }
    this.engine.storeRef.unindexPort(rec);
    delete this.data.ports[id];
    this.engine.record(`${rec.kind}.deleted`, `${rec.kind === 'port' ? 'port' : 'private IP'} ${rec.ip} (${rec.id}) released`, { id: rec.id, ip: rec.ip, subnetId: rec.subnetId, kind: rec.kind }, ['HCS-3']);
    this.engine.storeRef.markDirty();
  }
}

/**
 * VPC: subnets, ports and private IPs (paths as in @huaweicloud/huaweicloud-sdk-vpc v2 VpcClient):
 * GET /v1/{project_id}/subnets[?vpc_id=], GET /v1/{project_id}/subnets/{subnet_id},
 * GET|POST /v1/{project_id}/ports, GET|DELETE /v1/{project_id}/ports/{port_id},
 * POST /v1/{project_id}/privateips, GET /v1/{project_id}/subnets/{subnet_id}/privateips,
 * GET|DELETE /v1/{project_id}/privateips/{privateip_id}.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudBinding } from '../binding.js';
import { CloudError, Codes } from '../errors.js';
import { noContent, q, qAll } from '../http.js';
import type { PortView } from '../network.js';
import { renderPort, renderPortV3, renderPrivateIp, renderSubnet } from '../render.js';
import { VPC } from '../../../src/core/hcs/index.js';
import { intParam } from './ecs.js';
import { obj, route, type ResourceOf } from './operation.js';

type P = { project_id: string; subnet_id?: string; port_id?: string; privateip_id?: string };

/** Items after `marker` (an id of the list), at most `limit`. */
function page<T extends { id: string }>(list: T[], req: FastifyRequest, max: number): T[] {
  const limit = intParam(q(req, 'limit'), 'limit', max, 1, max, Codes.vpcBadRequest);
  const marker = q(req, 'marker');
  let from = 0;
  if (marker !== undefined && marker !== '') {
    const i = list.findIndex((x) => x.id === marker);
    if (i < 0) throw new CloudError(400, Codes.vpcBadRequest, `Invalid request parameter marker: ${marker} is not in the list`);
    from = i + 1;
  }
  return list.slice(from, from + limit);
}

function boolParam(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new CloudError(400, Codes.vpcBadRequest, `Invalid request parameter ${name}: must be true or false`);
}

export function vpcRoutes(b: CloudBinding) {
  return async (app: FastifyInstance): Promise<void> => {
    route(app, VPC.listSubnets, {}, async (req) => {
      const vpcId = q(req, 'vpc_id');
      const subnets = b.engine.config.subnets.filter((s) => !vpcId || s.vpc_id === vpcId);
      return { subnets: page(subnets, req, 2000).map((s) => renderSubnet(s, req.hcs.projectId, b.createdMs)) };
    });
    route(app, VPC.showSubnet, { resource: pathSubnet }, async (req) => {
      const { subnet_id } = req.params as P;
      const s = b.engine.config.subnets.find((x) => x.id === subnet_id);
      if (!s) throw new CloudError(404, Codes.vpcNotFound, `Subnet ${subnet_id} could not be found.`);
      return { subnet: renderSubnet(s, req.hcs.projectId, b.createdMs) };
    });

    // ------------------------------------------------------------ ports
    route(app, VPC.listPorts, { resource: portQuery }, async (req) => {
      const list = b.net.filter(b.net.ports(req.hcs.projectId), {
        name: q(req, 'name'),
        ids: qAll(req, 'id'),
        networkId: q(req, 'network_id'),
        macAddress: q(req, 'mac_address'),
        deviceId: q(req, 'device_id'),
        deviceOwner: q(req, 'device_owner'),
        status: q(req, 'status'),
        adminStateUp: boolParam(q(req, 'admin_state_up'), 'admin_state_up'),
        fixedIps: qAll(req, 'fixed_ips'),
        securityGroups: qAll(req, 'security_groups'),
      });
      return { ports: page(list, req, 2000).map(renderPort) };
    });
    route(app, VPC.showPort, { resource: pathPort }, async (req) => {
      const { port_id } = req.params as P;
      const p = b.net.port(req.hcs.projectId, port_id!);
      if (!p) throw new CloudError(404, Codes.vpcPortNotFound, `Port ${port_id} could not be found.`);
      return { port: renderPort(p) };
    });
    route(app, VPC.createPort, { resource: (r) => void r.names(obj(r.body?.port)?.name).ids(obj(r.body?.port)?.network_id) }, async (req) => ({
      port: renderPort(b.net.createPort(req.hcs.projectId, req.hcs.json)),
    }));
    route(app, VPC.deletePort, { resource: pathPort }, async (req, reply) => {
      const { port_id } = req.params as P;
      b.net.remove(req.hcs.projectId, port_id!, 'port');
      return noContent(req, reply, b.engine);
    });

    // ------------------------------------------------------------ ports, VPC v3 (huaweicloud-sdk-go-v3 vpc/v3 ListPorts, ShowPort)
    // The same ports in the v3 shape; filters as the v3 ListPortsRequest names them (repeated keys: any of).
    route(app, VPC.listPortsV3, { resource: portQuery }, async (req) => {
      const anyOf = (name: string, value: (p: PortView) => string) => {
        const want = qAll(req, name);
        return (p: PortView) => want.length === 0 || want.includes(value(p));
      };
      const tests = [
        anyOf('id', (p) => p.id),
        anyOf('name', (p) => p.name),
        anyOf('virsubnet_id', (p) => p.subnet.id),
        anyOf('device_id', (p) => p.deviceId),
        anyOf('mac_address', (p) => p.mac),
        anyOf('device_owner', (p) => p.deviceOwner),
        anyOf('vpc_id', (p) => p.subnet.vpc_id),
        anyOf('private_ips', (p) => p.ip),
        anyOf('instance_id', (p) => (p.kind === 'server' ? p.deviceId : '')),
      ];
      const status = q(req, 'status');
      const adminStateUp = boolParam(q(req, 'admin_state_up'), 'admin_state_up');
      const prefix = q(req, 'device_owner_prefixlike');
      const list = b.net
        .ports(req.hcs.projectId)
        .filter((p) => tests.every((t) => t(p)) && (!status || p.status === status) && (adminStateUp === undefined || p.adminStateUp === adminStateUp) && (!prefix || p.deviceOwner.startsWith(prefix)));
      const ports = page(list, req, 2000);
      const last = ports[ports.length - 1];
      return {
        ports: ports.map(renderPortV3),
        page_info: { previous_marker: ports[0]?.id ?? '', current_count: ports.length, ...(last && list[list.length - 1] !== last ? { next_marker: last.id } : {}) },
        request_id: req.hcs.requestId,
      };
    });
    route(app, VPC.showPortV3, { resource: pathPort }, async (req) => {
      const { port_id } = req.params as P;
      const p = b.net.port(req.hcs.projectId, port_id!);
      if (!p) throw new CloudError(404, Codes.vpcPortNotFound, `Port ${port_id} could not be found.`);
      return { port: renderPortV3(p), request_id: req.hcs.requestId };
    });

    // ------------------------------------------------------------ private IPs
    route(app, VPC.createPrivateip, { resource: (r) => (Array.isArray(r.body?.privateips) ? r.body.privateips : []).forEach((e) => r.ids(obj(e)?.subnet_id)) }, async (req) => ({
      privateips: b.net.createPrivateIps(req.hcs.projectId, req.hcs.json).map(renderPrivateIp),
    }));
    route(app, VPC.listPrivateips, { resource: (r) => void r.ids(r.param('subnet_id')) }, async (req) => {
      const { subnet_id } = req.params as P;
      const subnet = b.engine.subnetInfo(subnet_id!);
      if (!subnet) throw new CloudError(404, Codes.vpcNotFound, `Subnet ${subnet_id} could not be found.`);
      const list: PortView[] = b.net.ports(req.hcs.projectId).filter((p) => p.subnet.id === subnet.cfg.id);
      return { privateips: page(list, req, 2000).map(renderPrivateIp) };
    });
    route(app, VPC.showPrivateip, { resource: pathPrivateIp }, async (req) => {
      const { privateip_id } = req.params as P;
      const p = b.net.port(req.hcs.projectId, privateip_id!);
      if (!p) throw new CloudError(404, Codes.vpcPrivateIpNotFound, `Private IP ${privateip_id} could not be found.`);
      return { privateip: renderPrivateIp(p) };
    });
    route(app, VPC.deletePrivateip, { resource: pathPrivateIp }, async (req, reply) => {
      const { privateip_id } = req.params as P;
      b.net.remove(req.hcs.projectId, privateip_id!, 'privateip');
      return noContent(req, reply, b.engine);
    });
  };
}


// What a call touches, for fault matching (HCS-6).
const pathSubnet: ResourceOf = (r, _req, engine) => {
  const id = r.param('subnet_id');
  const s = id ? engine.subnet(id) : undefined;
  r.ids(id);
  if (s) r.names(s.name);
};
const pathPort: ResourceOf = (r) => void r.ids(r.param('port_id'));
const pathPrivateIp: ResourceOf = (r) => void r.ids(r.param('privateip_id'));
const portQuery: ResourceOf = (r, req) => void r.names(q(req, 'name')).ids(q(req, 'device_id'), q(req, 'network_id'));

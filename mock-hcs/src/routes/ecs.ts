/** ECS: servers, jobs, flavors, actions, block devices, volume attach/detach (paths as in @huaweicloud/huaweicloud-sdk-ecs EcsClient). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudBinding } from '../binding.js';
import type { CloudEngine } from '../cloud.js';
import { CloudError, Codes } from '../errors.js';
import { q, sendJsonText } from '../http.js';
import { renderBlockDevice, renderCloudServer, renderFlavor, renderJob, serverJson } from '../render.js';
import type { ServerRec } from '../state.js';
import { ECS } from '../../../src/core/hcs/index.js';
import { obj, route, serverIdsIn, strMap, strs, type ResourceOf } from './operation.js';

type P = { project_id: string; server_id?: string; volume_id?: string; job_id?: string };

/** JSON.stringify({ count, servers: servers.map(renderServer) }), each server's text remembered while it is unchanged. */
function serversText(engine: CloudEngine, count: number, servers: readonly ServerRec[]): string {
  let text = `{"count":${count},"servers":[`;
  for (let i = 0; i < servers.length; i++) text += (i === 0 ? '' : ',') + serverJson(engine, servers[i]!);
  return `${text}]}`;
}

export function ecsRoutes(b: CloudBinding) {
  return async (app: FastifyInstance): Promise<void> => {
    const create = async (req: FastifyRequest) => {
      const token = req.headers['x-client-token'];
      return b.engine.withEffects(req.hcs.effects, () =>
        b.engine.createServers(req.hcs.projectId, req.hcs.json, typeof token === 'string' && token.length > 0 ? token : undefined),
      );
    };
    route(app, ECS.createServers, { resource: serverToCreate }, create);

    route(app, ECS.showJob, { resource: jobResources }, async (req) => {
      const { job_id } = req.params as P;
      const job = b.engine.job(req.hcs.projectId, job_id!);
      // ecs_07_0002 and evs_04_0038 both list Common.0011 (400) "Invalid job ID" / "query job fail" for a job that cannot be obtained.
      if (!job) throw new CloudError(400, Codes.jobNotFound, `Failed to obtain the job: job ${job_id} could not be found.`);
      return renderJob(job, b.clock.now());
    });

    /** Fault `listLag` (issue 37): a server created less than that long ago is not listed yet. */
    const listed = <T extends { created: number }>(req: { hcs: { listLagMs?: number } }, xs: T[]): T[] => {
      const lag = req.hcs.listLagMs;
      if (!lag) return xs;
      const since = b.clock.now() - lag;
      return xs.filter((s) => s.created <= since);
    };
    route(app, ECS.listServers, { resource: serverQuery }, async (req, reply) => {
      const limit = intParam(q(req, 'limit'), 'limit', 25, 1, 1000);
      // ECS offset is a page number starting at 1 (0 behaves as 1), not an item offset.
      const page = Math.max(1, intParam(q(req, 'offset'), 'offset', 1, 0, 1_000_000));
      const name = q(req, 'name');
      const filter: ServerFilter = {
        name,
        status: q(req, 'status'),
        tags: q(req, 'tags'),
        notTags: q(req, 'not-tags'),
        flavor: q(req, 'flavor'),
        ip: q(req, 'ip'),
        ipEq: q(req, 'ip_eq'),
        serverId: q(req, 'server_id'),
      };
      // marker (a server id, as the SDK models ListServersDetailsRequest.marker): the page after that server, so a
      // client paging by marker moves on and ends (issue 24); it takes the place of offset.
      const marker = q(req, 'marker');
      if (marker !== undefined && marker !== '') {
        const all = listed(req, filterServers(b.engine.serversOf(req.hcs.projectId), filter));
        const i = all.findIndex((s) => s.id === marker);
        if (i < 0) throw new CloudError(400, Codes.ecsBadRequest, `Invalid request parameter marker: server ${marker} is not in the list`);
        return sendJsonText(req, reply, b.engine, serversText(b.engine, all.length, all.slice(i + 1, i + 1 + limit)));
      }
      if (!req.hcs.listLagMs && Object.values(filter).every((v) => v === undefined || v === '')) {
        // No filter: the page straight from the project's ordered index, O(offset + limit) (issue 13, scale).
        const { total, servers } = b.engine.serversPage(req.hcs.projectId, (page - 1) * limit, limit);
        return sendJsonText(req, reply, b.engine, serversText(b.engine, total, servers));
      }
      // A name pattern narrows the servers to look at through the store's index (same servers, same order as the scan).
      const candidates = (name ? b.engine.serverNameCandidates(req.hcs.projectId, name) : undefined) ?? b.engine.serversOf(req.hcs.projectId);
      const matches = listed(req, filterServers(candidates, filter));
      const slice = matches.slice((page - 1) * limit, page * limit);
      return sendJsonText(req, reply, b.engine, serversText(b.engine, matches.length, slice));
    });

    // ListCloudServers (the newer list API, huaweicloud-sdk-go-v3 ecs/v2 ListCloudServers): marker
    // pagination by server id, `servers_links` rel "next" while more remain, CloudServer records.
    route(app, ECS.listCloudServers, { resource: serverQuery }, async (req) => {
      const limit = intParam(q(req, 'limit'), 'limit', 50, 1, 1000);
      const name = q(req, 'name');
      const candidates = (name ? b.engine.serverNameCandidates(req.hcs.projectId, name) : undefined) ?? b.engine.serversOf(req.hcs.projectId);
      const ids = q(req, 'id')?.split(',').filter(Boolean);
      const flavorName = q(req, 'flavor_name');
      const imageId = q(req, 'image_id');
      const az = q(req, 'availability_zone');
      const azEq = q(req, 'availability_zone_eq');
      const matches = filterServers(candidates, { name, status: q(req, 'status'), tags: q(req, 'tags'), notTags: q(req, 'not-tags') }).filter(
        (s) =>
          (!ids || ids.includes(s.id)) &&
          (!flavorName || (b.engine.flavors.get(s.flavorId)?.name ?? s.flavorId) === flavorName) &&
          (!imageId || s.imageId === imageId) &&
          (!az || s.az.includes(az)) &&
          (!azEq || s.az === azEq),
      );
      const marker = q(req, 'marker');
      let from = 0;
      if (marker !== undefined && marker !== '') {
        const i = matches.findIndex((s) => s.id === marker);
        if (i < 0) throw new CloudError(400, Codes.ecsBadRequest, `Invalid request parameter marker: server ${marker} is not in the list`);
        from = i + 1;
      }
      const slice = matches.slice(from, from + limit);
      const more = from + limit < matches.length;
      const next = more ? [{ rel: 'next', href: `/v1.1/${req.hcs.projectId}/cloudservers/detail?limit=${limit}&marker=${slice[slice.length - 1]!.id}` }] : [];
      return { servers: slice.map((s) => renderCloudServer(b.engine, s)), servers_links: next };
    });

    route(app, ECS.listFlavors, { resource: (r, req) => void (r.info.az = q(req, 'availability_zone')) }, async (req) => {
      const az = q(req, 'availability_zone');
      const azs = b.engine.config.availabilityZones;
      if (az !== undefined && !azs.includes(az)) {
        throw new CloudError(400, Codes.ecsBadRequest, `Invalid request parameter availability_zone: "${az}" is not an availability zone (valid: ${azs.join(', ')})`, ['TPL-2']);
      }
      const flavorId = q(req, 'flavor_id');
      const limit = intParam(q(req, 'limit'), 'limit', 1000, 1, 1000);
      const marker = q(req, 'marker');
      // Sell status per AZ: configuration, capacity in use and capacity fault rules (TPL-2, OPS-2).
      let rows = b.engine.config.flavors
        .map((f) => ({ f, statuses: azs.map((a) => ({ az: a, status: b.engine.flavorAzStatus(f, a).status })) }))
        .filter((r) => (flavorId === undefined || r.f.id === flavorId) && (az === undefined || r.statuses.find((x) => x.az === az)?.status !== 'abandon'));
      if (marker !== undefined) {
        const i = rows.findIndex((r) => r.f.id === marker);
        if (i < 0) throw new CloudError(400, Codes.ecsBadRequest, `Invalid request parameter marker: flavor ${marker} is not in the list`);
        rows = rows.slice(i + 1);
      }
      return { flavors: rows.slice(0, limit).map((r) => renderFlavor(r.f, r.statuses, az)) };
    });

    // One path, three operations: the body's key picks one (ECS.batchStopServers.bodyKey "os-stop", ...).
    const actions = [ECS.batchStopServers, ECS.batchStartServers, ECS.batchRebootServers];
    route(app, actions, { name: 'serverAction', resource: (r) => r.operation?.bodyKey && serverIdsIn(obj(r.body?.[r.operation.bodyKey])?.servers).forEach((id) => r.server(id)) }, async (req) =>
      b.engine.withEffects(req.hcs.effects, () => b.engine.serverAction(req.hcs.projectId, req.hcs.json)),
    );

    const serverOr404 = (req: FastifyRequest): ServerRec => {
      const { server_id } = req.params as P;
      const s = b.engine.serverRec(req.hcs.projectId, server_id!);
      if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${server_id}] could not be found.`);
      return s;
    };

    route(app, ECS.listServerBlockDevices, { resource: serverAndVolume }, async (req) => {
      const s = serverOr404(req);
      const n = s.volumes.length + s.attaching.length;
      return {
        attachableQuantity: { free_scsi: Math.max(0, 60 - n), free_blk: Math.max(0, 24 - n), free_disk: Math.max(0, 24 - n) },
        volumeAttachments: s.volumes.map((v, i) => renderBlockDevice(b.engine, s, v, i)),
      };
    });

    route(app, ECS.showServerBlockDevice, { resource: serverAndVolume }, async (req) => {
      const s = serverOr404(req);
      const { volume_id } = req.params as P;
      const i = s.volumes.findIndex((v) => v.volumeId === volume_id);
      if (i < 0) throw new CloudError(404, Codes.ecsVolumeNotAttached, `Volume ${volume_id} is not attached to server ${s.id}`);
      return { volumeAttachment: renderBlockDevice(b.engine, s, s.volumes[i]!, i) };
    });

    route(app, ECS.showServer, { resource: serverAndVolume }, async (req, reply) => {
      const { server_id } = req.params as P;
      const s = b.engine.serverRec(req.hcs.projectId, server_id!);
      if (!s) throw new CloudError(404, Codes.ecsServerNotFound, `Instance[${server_id}] could not be found.`);
      // JSON.stringify({ server: renderServer(engine, s) }), the server's text remembered while it is unchanged.
      return sendJsonText(req, reply, b.engine, `{"server":${serverJson(b.engine, s)}}`);
    });

    route(app, ECS.deleteServers, { resource: (r) => serverIdsIn(r.body?.servers).forEach((id) => r.server(id)) }, async (req) =>
      b.engine.withEffects(req.hcs.effects, () => b.engine.deleteServers(req.hcs.projectId, req.hcs.json)),
    );

    route(app, ECS.attachVolume, { resource: serverAndVolume }, async (req) => {
      const { server_id } = req.params as P;
      return b.engine.withEffects(req.hcs.effects, () => b.engine.attachVolume(req.hcs.projectId, server_id!, req.hcs.json));
    });

    route(app, ECS.detachVolume, { resource: serverAndVolume }, async (req) => {
      const { server_id, volume_id } = req.params as P;
      return b.engine.withEffects(req.hcs.effects, () => b.engine.detachVolume(req.hcs.projectId, server_id!, volume_id!));
    });
  };
}

/** The server of the path, and the volume of the path or of the body's volumeAttachment (fault matching, HCS-6). */
export const serverAndVolume: ResourceOf = (r) => {
  r.server(r.param('server_id'));
  r.volume(r.param('volume_id') ?? strs(obj(r.body?.volumeAttachment)?.volumeId)[0]);
};

/** CreateServers: the name, metadata and tags, flavor and AZ the body asks for. */
const serverToCreate: ResourceOf = (r) => {
  const s = obj(r.body?.server);
  r.names(s?.name).tags(strMap(s?.metadata));
  const tags: Record<string, string> = {};
  for (const t of Array.isArray(s?.server_tags) ? s.server_tags : []) {
    const o = obj(t);
    if (typeof o?.key === 'string') tags[o.key] = typeof o.value === 'string' ? o.value : '';
  }
  r.tags(tags);
  if (typeof s?.flavorRef === 'string') r.info.flavor = s.flavorRef;
  if (typeof s?.availability_zone === 'string') r.info.az = s.availability_zone;
};

const serverQuery: ResourceOf = (r, req) => void r.names(q(req, 'name')).ids(q(req, 'server_id'));

/** ShowJob: the job, and the servers and volume it acts on. */
const jobResources: ResourceOf = (r, req, engine) => {
  const id = r.param('job_id');
  if (id) r.ids(id);
  const job = id ? engine.job(req.hcs.projectId, id) : undefined;
  if (!job) return;
  r.server(strs(job.entities.server_id)[0]);
  r.volume(strs(job.entities.volume_id)[0]);
  for (const sj of job.sub_jobs ?? []) r.server(sj.entities.server_id);
};

export function intParam(v: string | undefined, name: string, dflt: number, min: number, max: number, code: string = Codes.ecsBadRequest): number {
  if (v === undefined || v === '') return dflt;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new CloudError(400, code, `Invalid request parameter ${name}: must be an integer between ${min} and ${max}`);
  }
  return Number(v);
}

interface ServerFilter {
  name?: string;
  status?: string;
  tags?: string;
  notTags?: string;
  flavor?: string;
  ip?: string;
  ipEq?: string;
  serverId?: string;
}

/** Real ECS `name` is a fuzzy match: a substring match where "." matches any single character. */
export function fuzzyName(pattern: string): RegExp {
  const escaped = pattern.replace(/[\\^$*+?()[\]{}|/-]/g, '\\$&').replace(/\./g, '[^\\n\\r]');
  return new RegExp(escaped);
}

function parseTagFilter(s: string): { key: string; value?: string }[] {
  return s
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => {
      const i = t.indexOf('=');
      return i < 0 ? { key: t } : { key: t.slice(0, i), value: t.slice(i + 1) };
    });
}

function hasTag(s: ServerRec, t: { key: string; value?: string }): boolean {
  return s.tags.some((x) => x.key === t.key && (t.value === undefined || x.value === t.value));
}

export function filterServers(list: ServerRec[], f: ServerFilter): ServerRec[] {
  const re = f.name !== undefined && f.name !== '' ? fuzzyName(f.name) : undefined;
  const tags = f.tags ? parseTagFilter(f.tags) : [];
  const notTags = f.notTags ? parseTagFilter(f.notTags) : [];
  return list.filter(
    (s) =>
      (!re || re.test(s.name)) &&
      (!f.status || s.status === f.status) &&
      (!f.flavor || s.flavorId === f.flavor) &&
      (!f.serverId || s.id === f.serverId) &&
      (!f.ip || s.nics.some((n) => n.ip.includes(f.ip!))) &&
      (!f.ipEq || s.nics.some((n) => n.ip === f.ipEq)) &&
      tags.every((t) => hasTag(s, t)) &&
      !notTags.some((t) => hasTag(s, t)),
  );
}
